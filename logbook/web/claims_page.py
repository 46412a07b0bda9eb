"""The claims page: every claim with whether it still stands, the verdict `claim check`
gives (its retracted runs, runs appended since, the figure recomputed now): its data (the JSON
twin) and its HTML, drawn from that data only."""

from __future__ import annotations

from typing import Any

from logbook.web.data import Source, integrity
from logbook.web.markup import Markup, join, link, table, tag


def claims_data(src: Source) -> dict[str, Any]:
    from logbook.analysis.claims import check_claim

    rows = []
    for e in src.view.entries_of("claim"):
        check = check_claim(src.view, e.digest)
        plan = src.view.plans.get(str(e.body.get("plan")))
        rows.append({**check, "plan": None if plan is None else
                     {"slug": plan.slug, "digest": plan.digest},
                     "figure": e.body.get("figure"), "arm": e.body.get("arm"),
                     "ledger_size": e.body.get("ledger_size"),
                     "retracted_runs": [_run_ref(src, d) for d in check["retracted_runs"]],
                     "new_runs": [_run_ref(src, d) for d in check["new_runs"]]})
    return {"integrity": integrity(src), "claims": rows,
            "standing": sum(1 for r in rows if r["stands"])}


def _run_ref(src: Source, digest: str) -> dict[str, Any]:
    run = src.view.runs_by_digest.get(digest)
    return {"digest": digest, "seq": None if run is None else run.seq}


def _figure(value: Any, interval: Any, scale: float) -> str:
    if value is None:
        return "—"
    span = "" if not interval else f" ({interval[0] * scale:.4g} to {interval[1] * scale:.4g})"
    return f"{value * scale:.4g}{span}"


def _runs(refs: list[dict[str, Any]]) -> Markup:
    return join([link(f"@{r['seq']}" if r["seq"] is not None else r["digest"][:12], "runs",
                      r["digest"]) for r in refs], ", ")


def claims_page(d: dict[str, Any]) -> list[Any]:
    rows, attrs = [], []
    for c in d["claims"]:
        s = c["scale"]
        what = (f"effect {' − '.join(reversed(c['arm']))}" if c["figure"] == "effect"
                else f"mean of arm {c['arm']}")
        verdict = tag("span", "stands" if c["stands"] else "does not stand",
                      cls="badge " + ("b-success" if c["stands"] else "b-failure"))
        problems = (tag("ul", [tag("li", p) for p in c["problems"]]) if c["problems"]
                    else "")
        rows.append([link(f"@{c['seq']}", "entries", c["claim"]),
                     tag("span", c["statement"], cls="statement"),
                     link(c["plan"]["slug"], "plans", c["plan"]["digest"]) if c["plan"]
                     else "—", what, _figure(c["value"], c["interval"], s),
                     _figure((c["now"] or {}).get("value"), (c["now"] or {}).get("interval"),
                             s),
                     [verdict, problems],
                     _runs(c["retracted_runs"]) if c["retracted_runs"] else "none"])
        attrs.append({"data_seq": c["seq"], "data_stands": "yes" if c["stands"] else "no"})
    summary = tag("p", f"{d['standing']} of {len(rows)} claim(s) still stand, as "
                  "`logbook claim check` says of each.", cls="meta", id="summary")
    return [summary, table(["claim", "statement", "plan", "figure", "claimed", "now",
                            "verdict", "rests on retracted runs"], rows, cls="claims",
                           row_attrs=attrs) if rows else tag("p", "no claims")]
