"""The runs table's data (every run, filtered, sorted and paged) and a run's page's: the JSON
twins of /runs and /runs/{ref}, and what their HTML is drawn from. Each run's row is
logbook.web.data's (`run_row`, `run_columns`), as the overview and the retractions show it.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from logbook.analysis.view import RunView
from logbook.errors import InputError
from logbook.web.data import NotFound, Source, integrity, retraction_row, run_columns, run_row

STATUSES = ("completed", "failed", "aborted")
SORTS = ("seq", "plan", "arm", "status", "session", "score", "missing", "ts")


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
            "retractions": [retraction_row(src, e.body, e.seq, e.digest)
                            for e in run.retracted_by],
            "compare_with": _compare_with(src, run)}


def _compare_with(src: Source, run: RunView) -> list[dict[str, str]]:
    """The item comparisons a run's page links to: each other arm of its plan against it."""
    plan = src.view.plans.get(run.plan) if run.plan else None
    if plan is None:
        return []
    return [{"arm": a["name"], "a": f"{plan.slug}:{a['name']}", "b": f"@{run.seq}"}
            for a in plan.arms() if a.get("name") != run.arm]
