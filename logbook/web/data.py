"""What each page shows, as JSON-ready data: the page's JSON twin, and what its HTML is drawn
from (so the two never disagree).

Everything is read through the analysis and ledger APIs inside the read transaction the
integrity check just covered (logbook.verify.integrity): the view (`LedgerView`), the report
(`report_json`), the brief (`brief_json`), the audit (`run_audit`) and the ledger's read
methods. Nothing here opens a store or writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from logbook.analysis.view import LedgerView, PlanView, RunView
from logbook.errors import InputError
from logbook.ledger.service import Ledger
from logbook.verify.integrity import Verified

STATUSES = ("completed", "failed", "aborted")
SORTS = ("seq", "plan", "arm", "status", "session", "score", "missing", "ts")


class NotFound(InputError):
    """A page's path names no entry of the kind it shows (HTTP 404)."""


@dataclass
class Source:
    """One request's reading of the ledger: the ledger, its view, what the check covered."""

    ledger: Ledger
    view: LedgerView
    checked: Verified


def report_of(view: LedgerView, plan: str) -> Any:
    """The report of one plan with its audit findings, as `logbook report` builds it
    (logbook.analysis.report.report_with_findings)."""
    from logbook.analysis.report import report_with_findings

    return report_with_findings(view, plan)


def report_json(view: LedgerView, plan: str) -> dict[str, Any]:
    """`report --json` for one plan, findings included."""
    out: dict[str, Any] = report_of(view, plan).as_json()
    return out


def brief_json(ledger: Ledger, checked: Verified) -> dict[str, Any]:
    """`brief --json`: the one place web/ builds a brief."""
    from logbook.analysis.brief import build_brief

    b: Any = build_brief(ledger, verified=checked.as_dict())
    return b.as_json() if hasattr(b, "as_json") else dict(b)


def integrity(src: Source) -> dict[str, Any]:
    return {**src.checked.as_dict(), "ledger": src.ledger.uuid}


def _plan(src: Source, ref: str) -> PlanView:
    try:
        return src.view.plan(ref)
    except InputError as exc:
        raise NotFound(str(exc)) from None


def _entry_ref(src: Source, digest: str | None) -> dict[str, Any] | None:
    """A reference to another entry: its digest with the kind and seq it has here."""
    if not digest:
        return None
    found = src.ledger.kind_of(str(digest))
    seq, kind = found if found else (None, None)
    return {"digest": str(digest), "seq": seq, "kind": kind}


LATEST = 10  # plans and runs the overview lists, the latest first


def overview(src: Source) -> dict[str, Any]:
    """Results first: the latest plans' verdicts and effects, the latest runs with their
    figures, what `brief` says is open, and the integrity line; keys, hashes and roots are
    `integrity`'s, every plan is `plans`'."""
    led = src.ledger
    b = brief_json(led, src.checked)
    plans_shown = []
    standing = [p for p in src.view.plans.values() if not p.retracted_by]
    for plan in sorted(standing, key=lambda p: p.seq)[-LATEST:][::-1]:
        rep = report_json(src.view, plan.digest)
        effect = (rep.get("effects") or [None])[0]
        plans_shown.append({
            "slug": plan.slug, "digest": plan.digest, "seq": plan.seq,
            "title": plan.body.get("title"), "verdict": rep["verdict"]["status"],
            "metric": (plan.body.get("metric") or {}).get("name"),
            "effect": None if not effect else {
                "label": effect.get("label"), "point": effect.get("point"),
                "low": effect.get("low"), "high": effect.get("high"),
                "unit": effect.get("unit")},
            "scale": _scale(plan.body)})
    latest = sorted(src.view.runs, key=lambda r: r.seq)[-LATEST:][::-1]
    return {
        "ledger": {"name": led.name, "size": src.view.size},
        "integrity": integrity(src),
        "plans": plans_shown, "plans_total": len(standing),
        "latest_runs": [run_columns(src, r, run_row(src, r)) for r in latest],
        "open_plans": b.get("open_plans", []), "claims": b.get("claims", []),
        "notes": b.get("notes", []), "next": b.get("next", [])}


def integrity_page(src: Source) -> dict[str, Any]:
    """What the overview leaves out: the ledger's uuid and head, its entries by kind, the
    latest checkpoint and the signing keys."""
    led = src.ledger
    checkpoints = led.checkpoints()
    counts: dict[str, int] = {}
    for e in led.entries():
        counts[e.kind] = counts.get(e.kind, 0) + 1
    return {
        "ledger": {"name": led.name, "uuid": led.uuid, "size": src.view.size,
                   "head": src.checked.head, "kinds": counts},
        "integrity": integrity(src),
        "latest_checkpoint": None if not checkpoints else {
            "size": checkpoints[-1][1], "root": checkpoints[-1][2],
            "created": checkpoints[-1][4], "note": checkpoints[-1][3]},
        "keys": [{"fingerprint": fp, "name": name, "public": public, "added": added,
                  "revoked": revoked} for fp, name, public, added, revoked in led.signing_keys()]}


def _scale(plan_body: dict[str, Any] | None) -> int:
    """100 for a plan whose metric is a share (printed in points), else 1."""
    kind = ((plan_body or {}).get("metric") or {}).get("kind")
    return 100 if kind in ("proportion", "pass_at_k") else 1


def run_columns(src: Source, run: RunView, row: dict[str, Any]) -> dict[str, Any]:
    """A run's row with what people read a run by: model, suite, metric, harness, and its
    score's item-level interval (as `report` computes it for a plan's runs)."""
    from logbook.analysis.report.arms import run_interval

    plan = src.view.plans.get(run.plan) if run.plan else None
    body = plan.body if plan is not None else None
    app = run.apparatus
    interval = None
    if run.status == "completed" and run.score is not None:
        facts = run.figures
        kind = ((body or {}).get("metric") or {}).get("kind") or (
            "proportion" if facts is not None and facts.binary else "mean")
        cluster = (body or {}).get("cluster_field")
        try:
            iv = run_interval(run, str(kind), 0.95, cluster)
        except (ValueError, ZeroDivisionError):
            iv = None
        if iv is not None:
            interval = {"low": iv.low, "high": iv.high, "method": iv.method, "n": iv.n}
    source = run.body.get("source") or {}
    return {**row, "model": app.get("model"),
            "suite": ((body or {}).get("suite") or {}).get("name") or app.get("task")
            or app.get("suite"),
            "split": app.get("split"), "metric": run.metric, "harness": source.get("harness"),
            "interval": interval,
            "scale": _scale(body) if body else (
                100 if run.figures is not None and run.figures.binary else 1)}


def _plan_row(src: Source, plan: PlanView) -> dict[str, Any]:
    rep = report_json(src.view, plan.digest)
    return {"slug": plan.slug, "digest": plan.digest, "seq": plan.seq,
            "title": plan.body.get("title"), "due": plan.body.get("due"),
            "retracted": bool(plan.retracted_by), "verdict": rep["verdict"]["status"],
            "wording": rep["verdict"]["wording"],
            "arms": [{"name": a["name"], "role": a["role"], "completed": a["completed"],
                      "planned": a["planned_runs"], "failed": a["failed"],
                      "aborted": a["aborted"], "retracted": a["retracted"],
                      "refused": sum(1 for x in rep["refused"] if x["arm"] == a["name"])}
                     for a in rep["arms"]],
            "runs_done": sum(min(a["completed"], a["planned_runs"]) for a in rep["arms"]),
            "runs_planned": sum(a["planned_runs"] for a in rep["arms"]),
            "findings": len(rep["findings"])}


def plans(src: Source) -> dict[str, Any]:
    return {"integrity": integrity(src),
            "plans": [_plan_row(src, p) for p in src.view.plans.values()]}


def report_html(src: Source, ref: str) -> str:
    """`report --html` of one plan: the whole HTML report."""
    from logbook.analysis.report.formats import render

    return render(report_of(src.view, _plan(src, ref).digest), "html")


def plan_page(src: Source, ref: str) -> dict[str, Any]:
    plan = _plan(src, ref)
    return {"integrity": integrity(src), "report": report_json(src.view, plan.digest)}


def run_row(src: Source, run: RunView) -> dict[str, Any]:
    plan = src.view.plans.get(run.plan) if run.plan else None
    n_items = (plan.body.get("suite") or {}).get("n_items") if plan else None
    missing, total = run.missing(n_items) if run.status == "completed" else (None, None)
    facts = run.figures
    if facts is not None and facts.figures:  # one row an item
        records = distinct = facts.scores
    else:
        ids = (run.body.get("outcomes") or {}).get("id") or []
        records, distinct = len(ids), len(set(ids))
    return {"seq": run.seq, "digest": run.digest, "ts": run.entry.envelope.get("ts"),
            "plan": None if plan is None else {"slug": plan.slug, "digest": plan.digest},
            "arm": run.arm, "status": run.status, "session": run.session,
            "score": run.score if run.status == "completed" else None,
            # items as `missing` counts them (each item once, whatever its samples), and the
            # outcome rows the run lists (an item scored in two epochs is two records)
            "items": total if total is not None else distinct, "records": records,
            "missing": missing,
            "missing_rate": None if not total else missing / total,  # type: ignore[operator]
            "retracted": run.retracted, "retracted_by": [e.digest for e in run.retracted_by],
            "note": run.body.get("note"), "reason": run.body.get("reason")}


def _day(value: str, name: str) -> str:
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise InputError(f"{name} must be a date (YYYY-MM-DD), not {value!r}") from None


def runs(src: Source, q: dict[str, list[str]]) -> dict[str, Any]:
    """The runs table: every run, narrowed by the query's filters and sorted by its key.

    ``plan`` (slug, digest prefix, @SEQ, or ``none`` for exploratory runs), ``arm``,
    ``status``, ``session``, ``since``/``until`` (dates, inclusive, of the entry's ts),
    ``where`` (``FIELD=VALUE`` on the apparatus, repeatable: every one must hold),
    ``retracted`` (yes | no), ``sort`` (a column of SORTS, ``-`` first for descending),
    ``page`` (from 1) and ``per`` (runs a page, 100 by default, at most 1,000).
    """
    from logbook.analysis.selectors import parse

    def one(name: str) -> str | None:
        values = [v for v in q.get(name, []) if v != ""]
        if len(values) > 1:
            raise InputError(f"{name} is given {len(values)} times (give it once)")
        return values[0] if values else None

    chosen = list(src.view.runs)
    filters: dict[str, Any] = {}
    plan_ref = one("plan")
    if plan_ref == "none":
        chosen = [r for r in chosen if not r.plan]
    elif plan_ref:
        digest = src.view.plan(plan_ref).digest
        chosen = [r for r in chosen if r.plan == digest]
    for name in ("arm", "session"):
        value = one(name)
        if value is not None:
            chosen = [r for r in chosen if getattr(r, name) == value]
            filters[name] = value
    status = one("status")
    if status is not None:
        if status not in STATUSES:
            raise InputError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        chosen = [r for r in chosen if r.status == status]
    retracted = one("retracted")
    if retracted is not None:
        if retracted not in ("yes", "no"):
            raise InputError(f"retracted must be yes or no, not {retracted!r}")
        chosen = [r for r in chosen if r.retracted == (retracted == "yes")]
    since, until = one("since"), one("until")
    if since:
        day = _day(since, "since")
        chosen = [r for r in chosen if str(r.entry.envelope.get("ts", ""))[:10] >= day]
    if until:
        day = _day(until, "until")
        chosen = [r for r in chosen if str(r.entry.envelope.get("ts", ""))[:10] <= day]
    wheres = [w for w in q.get("where", []) if w.strip()]
    for term in wheres:
        if "=" not in term or "," in term:
            raise InputError(f"where must be one FIELD=VALUE (e.g. engine_build=b1234), "
                             f"not {term!r}")
        match = parse(src.view, term)
        chosen = [r for r in chosen if match(r)]
    sort = one("sort") or "seq"
    key = sort.removeprefix("-")
    if key not in SORTS:
        raise InputError(f"sort must be one of {', '.join(SORTS)} (with - for descending), "
                         f"not {sort!r}")
    page, per = _paging(one("page"), one("per"))
    # sorted by the key alone (read from the runs' facts: a large ledger's runs are not read),
    # then only the page's rows are made
    valued = [(_sort_value(src, r, key), r) for r in chosen]
    valued.sort(key=lambda pair: (pair[0] is None, "" if pair[0] is None else pair[0],
                                  pair[1].seq), reverse=sort.startswith("-"))
    if sort.startswith("-"):  # absent values last, whichever the direction
        valued.sort(key=lambda pair: pair[0] is None)
    pages = max(1, -(-len(valued) // per))
    if page > pages:
        raise InputError(f"page {page} is past the last page ({pages} of {per} runs)")
    rows = [run_columns(src, r, run_row(src, r))
            for _, r in valued[(page - 1) * per:page * per]]
    filters.update({k: v for k, v in (("plan", plan_ref), ("status", status),
                                      ("retracted", retracted), ("since", since),
                                      ("until", until)) if v})
    if wheres:
        filters["where"] = wheres
    return {"integrity": integrity(src), "filters": filters, "sort": sort,
            "total": len(src.view.runs), "matched": len(valued), "page": page,
            "pages": pages, "per": per, "runs": rows}


def _sort_value(src: Source, run: RunView, key: str) -> Any:
    """What the runs table sorts ``run`` by, as its row shows it (`run_row`)."""
    if key in ("seq", "arm", "status", "session"):
        return getattr(run, key)
    if key == "plan":
        plan = src.view.plans.get(run.plan) if run.plan else None
        return None if plan is None else plan.slug
    if key == "ts":
        return run.entry.envelope.get("ts")
    if run.status != "completed":
        return None
    if key == "score":
        return run.score
    plan = src.view.plans.get(run.plan) if run.plan else None
    return run.missing((plan.body.get("suite") or {}).get("n_items") if plan else None)[0]


PER_PAGE, MAX_PER_PAGE = 100, 1000


def _paging(page: str | None, per: str | None) -> tuple[int, int]:
    """``page`` (from 1) and ``per`` (runs a page, at most MAX_PER_PAGE) from the query."""
    out = []
    for name, text, default, top in (("page", page, 1, None), ("per", per, PER_PAGE,
                                                                 MAX_PER_PAGE)):
        if text is None:
            out.append(default)
            continue
        if not text.isdigit() or int(text) < 1 or (top is not None and int(text) > top):
            bound = f"between 1 and {top}" if top else "1 or more"
            raise InputError(f"{name} must be a whole number {bound}, not {text!r}")
        out.append(int(text))
    return out[0], out[1]


def _run(src: Source, ref: str) -> RunView:
    try:
        digest = src.ledger.resolve(ref, "RUN")
    except InputError as exc:
        raise NotFound(str(exc)) from None
    run = src.view.runs_by_digest.get(digest)
    if run is None:
        raise NotFound(f"entry {ref} is not a run")
    return run


def run_page(src: Source, ref: str, all_items: bool = False) -> dict[str, Any]:
    """A run: its row, the apparatus declared and captured side by side, its logs, and its
    items (those with an error or no score, or all of them)."""
    run = _run(src, ref)
    declared = {k: v for k, v in run.apparatus.items() if not k.startswith("captured.")}
    captured = {k.removeprefix("captured."): v for k, v in run.apparatus.items()
                if k.startswith("captured.")}
    apparatus = [{"field": k, "declared": declared.get(k), "captured": captured.get(k),
                  "declared_set": k in declared, "captured_set": k in captured}
                 for k in sorted(set(declared) | set(captured))]
    oc = run.body.get("outcomes") or {}
    ids = list(oc.get("id") or [])
    cols = {c: list(oc.get(c) or []) for c in ("score", "error", "cluster", "sample")}
    items = []
    for i, item in enumerate(ids):
        row = {"id": item, **{c: (v[i] if i < len(v) else None) for c, v in cols.items()}}
        if all_items or row["error"] is not None or row["score"] is None:
            items.append(row)
    return {"integrity": integrity(src), "run": run_row(src, run),
            "signer": run.entry.envelope.get("signer"),
            "started": run.body.get("started"), "finished": run.body.get("finished"),
            "metric": oc.get("metric"), "apparatus": apparatus,
            "logs": list(run.body.get("logs") or []),
            "items_shown": "all" if all_items else "errors",
            "items_with_errors": sum(1 for e in cols["error"] if e is not None), "items": items,
            "retractions": [_retraction(src, e.body, e.seq, e.digest)
                            for e in run.retracted_by],
            "compare_with": _compare_with(src, run)}


def _compare_with(src: Source, run: RunView) -> list[dict[str, str]]:
    """The item comparisons a run's page links to: each other arm of its plan against it."""
    plan = src.view.plans.get(run.plan) if run.plan else None
    if plan is None:
        return []
    return [{"arm": a["name"], "a": f"{plan.slug}:{a['name']}", "b": f"@{run.seq}"}
            for a in plan.arms() if a.get("name") != run.arm]


def audit(src: Source) -> dict[str, Any]:
    from logbook.analysis.audit import run_audit

    res = run_audit(src.view).as_json()
    for f in res["findings"]:
        f["entries"] = [_entry_ref(src, d) for d in f["entries"]]
    return {"integrity": integrity(src), "audit": res}


def _retraction(src: Source, body: dict[str, Any], seq: int, digest: str) -> dict[str, Any]:
    return {"seq": seq, "digest": digest, "target": _entry_ref(src, body.get("target")),
            "category": body.get("category"), "reason": body.get("reason"),
            "correction": body.get("correction")}


def _original(src: Source, digest: str) -> dict[str, Any] | None:
    """What a retraction withdrew, in a line: a run's plan, arm, status and score; a plan's
    slug and title; any other entry's kind."""
    run = src.view.runs_by_digest.get(digest)
    if run is not None:
        row = run_row(src, run)
        return {"kind": "run", "plan": (row["plan"] or {}).get("slug"), "arm": row["arm"],
                "status": row["status"], "score": row["score"], "note": row["note"]}
    plan = src.view.plans.get(digest)
    if plan is not None:
        return {"kind": "plan", "slug": plan.slug, "title": plan.original.get("title")}
    ref = _entry_ref(src, digest)
    return None if ref is None or ref["kind"] is None else {"kind": ref["kind"]}


def retractions(src: Source) -> dict[str, Any]:
    rows = []
    for e in src.view.entries_of("retraction"):
        row = _retraction(src, e.body, e.seq, e.digest)
        row["original"] = _original(src, str(e.body.get("target")))
        rows.append(row)
    return {"integrity": integrity(src), "retractions": rows}


def entry(src: Source, ref: str) -> dict[str, Any]:
    """Any entry as it is stored: envelope, signature, and the retractions that name it."""
    try:
        e = src.ledger.get(ref)
    except InputError as exc:
        raise NotFound(str(exc)) from None
    return {"integrity": integrity(src), "seq": e.seq, "digest": e.digest, "kind": e.kind,
            "signature": e.signature, "envelope": e.envelope,
            "retracted_by": [_entry_ref(src, x.digest) for x in src.view.retracted_by(e.digest)]}
