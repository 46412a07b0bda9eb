"""A run's items (`/runs/RUN/items`) and one item (`/runs/RUN/items/ID`): their data (the JSON
twins) and their HTML, drawn from that data only.

Items and their traces are read through logbook.analysis.items (`show RUN --items` and
`show RUN --item ID` read them so too): the outcome rows of the run's signed body, and the
traces blob it names, checked against the digest the body records. A run without traces still
has its items (score, error); the pages say no trace was kept.
"""

from __future__ import annotations

from typing import Any

from logbook.analysis.items import Item, has_traces, items_of, select, the_item
from logbook.analysis.view import RunView, same_suite, suite_of
from logbook.errors import InputError
from logbook.web.data import NotFound, Source, integrity
from logbook.web.markup import Markup, href, join, link, table, tag
from logbook.web.runs_data import _paging, _run

LISTED = ("output", "target", "verdict")  # the trace's texts the items table shows, short
SNIPPET = 80  # characters of a text in a table cell
FOLD = 400  # a text longer than this (or of more than FOLD_LINES lines) is folded
FOLD_LINES = 8


# what a run is a run of -------------------------------------------------------------------

def _comparable(src: Source, run: RunView, other: RunView) -> bool:
    """`compare` would pair the two runs' items: one metric, no two suites or tasks."""
    from logbook.analysis.compare import check_comparable

    try:
        check_comparable(src.view, [("this", [run]), ("other", [other])])
    except InputError:
        return False
    return True


# data ---------------------------------------------------------------------------------------

def _run_head(src: Source, run: RunView) -> dict[str, Any]:
    plan = src.view.plans.get(run.plan) if run.plan else None
    h, name, split = suite_of(src.view, run)
    return {"seq": run.seq, "digest": run.digest, "status": run.status, "arm": run.arm,
            "plan": None if plan is None else {"slug": plan.slug, "digest": plan.digest},
            "model": run.apparatus.get("model"), "metric": run.metric,
            "suite": {"dataset_hash": h, "name": name, "split": split},
            "retracted": run.retracted, "page": href("runs", run.digest)}


def _rows(src: Source, run: RunView) -> list[Item]:
    return items_of(run.body, src.ledger.entry_log.blob)


def item_href(digest: str, item_id: str, sample: int | None = None) -> str:
    return href("runs", digest, "items", item_id, query={"sample": sample})


def _row(digest: str, it: Item) -> dict[str, Any]:
    out = it.as_json()
    if out["trace"] is not None:
        out["trace"] = {k: v for k, v in out["trace"].items() if k in LISTED}
    return {**out, "page": item_href(digest, it.id)}


def items_data(src: Source, ref: str, q: dict[str, list[str]]) -> dict[str, Any]:
    """A run's items: ``where`` (``FIELD OP VALUE`` as `show --items --where` takes it,
    repeatable: every one must hold), ``page`` and ``per`` as the runs table takes them."""
    run = _run(src, ref)
    wheres = [w for w in q.get("where", []) if w.strip()]
    rows = _rows(src, run)
    try:
        matched = select(rows, wheres)
    except InputError as exc:  # the message names --where: here it is a query parameter
        raise InputError(str(exc).removeprefix("--")) from None
    page, per = _paging(*(_one(q, n) for n in ("page", "per")))
    pages = max(1, -(-len(matched) // per))
    if page > pages:
        raise InputError(f"page {page} is past the last page ({pages} of {per} items)")
    shown = matched[(page - 1) * per:page * per]
    return {"integrity": integrity(src), "run": _run_head(src, run),
            "traces_kept": has_traces(run.body), "where": wheres, "total": len(rows),
            "matched": len(matched), "page": page, "pages": pages, "per": per,
            "items": [_row(run.digest, it) for it in shown]}


def _one(q: dict[str, list[str]], name: str) -> str | None:
    values = [v for v in q.get(name, []) if v != ""]
    if len(values) > 1:
        raise InputError(f"{name} is given {len(values)} times (give it once)")
    return values[0] if values else None


def _sample(q: dict[str, list[str]]) -> int | None:
    text = _one(q, "sample")
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise InputError(f"sample must be a whole number, not {text!r}") from None


def elsewhere(src: Source, run: RunView, item_id: str) -> list[dict[str, Any]]:
    """The item's result in every other run of the run's suite (`same_suite`) whose items
    `compare` would pair with this run's: its score as that run reduces its samples
    (`RunView.item_scores`) and its errors."""
    mine = suite_of(src.view, run)
    out = []
    for other in src.view.runs:
        if other.digest == run.digest or not same_suite(mine, suite_of(src.view, other)):
            continue
        scores = other.item_scores
        if item_id not in scores or not _comparable(src, run, other):
            continue
        # the outcome rows alone: another run's traces are read on its own item page
        rows = [it for it in items_of({"outcomes": other.body.get("outcomes")},
                                      src.ledger.entry_log.blob) if it.id == item_id]
        errors = list(dict.fromkeys(it.error for it in rows if it.error is not None))
        out.append({**_run_head(src, other), "score": scores[item_id], "errors": errors,
                    "samples": len(rows), "item_page": item_href(other.digest, item_id)})
    return out


def item_data(src: Source, ref: str, item_id: str, q: dict[str, list[str]]) -> dict[str, Any]:
    """One item of a run: each of its rows (every sample or epoch, or the ``sample`` named)
    with its trace, and its result in the other runs of the same suite."""
    run = _run(src, ref)
    sample = _sample(q)
    try:
        rows = the_item(_rows(src, run), item_id, sample)
    except InputError as exc:
        raise NotFound(f"run @{run.seq} has no {str(exc).split(' has no ', 1)[-1]}") from None
    return {"integrity": integrity(src), "run": _run_head(src, run), "item": item_id,
            "sample": sample, "traces_kept": has_traces(run.body),
            "items_page": href("runs", run.digest, "items"),
            "rows": [r.as_json() for r in rows], "elsewhere": elsewhere(src, run, item_id)}


# HTML ---------------------------------------------------------------------------------------

def _score(x: float | None) -> str:
    return "missing" if x is None else f"{x:g}"


def _snippet(text: str | None) -> Any:
    if text is None:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[:SNIPPET - 1] + "…"


def folded(name: str, text: str) -> Markup:
    """A trace's text as escaped, preformatted text; a long one folded under its first line."""
    pre = tag("pre", text, cls=f"trace-{name}")
    if len(text) <= FOLD and text.count("\n") < FOLD_LINES:
        return pre
    return tag("details", tag("summary", f"{_snippet(text)} ({len(text):,} characters)"), pre)


def _run_line(r: dict[str, Any]) -> Markup:
    s = r["suite"]
    suite = s["name"] or (s["dataset_hash"] or "")[:12] or "no suite named"
    return tag("p", link(f"run @{r['seq']}", "runs", r["digest"]), f" · {r['status']}",
               f" · plan {r['plan']['slug']} arm {r['arm']}" if r["plan"] else " · exploratory",
               f" · model {r['model']}" if r["model"] else "", f" · suite {suite}",
               f" ({s['split']})" if s["split"] else "", f" · metric {r['metric']}",
               " · retracted" if r["retracted"] else "", cls="meta", id="run-line")


def items_page(d: dict[str, Any]) -> list[Any]:
    r = d["run"]
    form = tag("form", [tag("label", "where (FIELD OP VALUE)",
                            tag("input", name="where", value=w)) for w in d["where"] or [""]],
               tag("label", "per page", tag("input", name="per", value=d["per"])),
               tag("button", "filter", type="submit"), cls="filters", method="get",
               action=href("runs", r["digest"], "items"))
    head = ["item", "sample", "score", "error"] + (list(LISTED) if d["traces_kept"] else [])
    rows, attrs = [], []
    for it in d["items"]:
        trace = it["trace"] or {}
        rows.append([tag("a", tag("code", it["id"]), href=it["page"]), it["sample"],
                     _score(it["score"]), _snippet(it["error"]),
                     *([_snippet(trace.get(k)) for k in LISTED] if d["traces_kept"] else [])])
        attrs.append({"data_item": it["id"]})
    query = {"where": d["where"], "per": d["per"]}
    pager = [f"{d['matched']} of {d['total']} items",
             f" where {' and '.join(d['where'])}" if d["where"] else "",
             f"; page {d['page']} of {d['pages']}",
             [" ", link("previous", "runs", r["digest"], "items",
                        query={**query, "page": d["page"] - 1})] if d["page"] > 1 else "",
             [" ", link("next", "runs", r["digest"], "items",
                        query={**query, "page": d["page"] + 1})]
             if d["page"] < d["pages"] else ""]
    return [_run_line(r), form,
            tag("p", "Filters are what `logbook show RUN --items --where` takes: FIELD OP "
                "VALUE, e.g. score=0, output~Paris, error!=null.", cls="meta"),
            tag("p", pager, cls="meta", id="pager"),
            "" if d["traces_kept"] else tag("p", "This run keeps no traces: its items have "
                                            "scores and errors only.", cls="meta",
                                            id="no-traces"),
            tag("div", table(head, rows, cls="run-items", row_attrs=attrs), cls="wide")]


def item_page(d: dict[str, Any]) -> list[Any]:
    out: list[Any] = [_run_line(d["run"]),
                      tag("p", tag("a", "all items of this run", href=d["items_page"]),
                          cls="meta", id="all-items")]
    if not d["traces_kept"]:
        out.append(tag("p", "This run keeps no traces: the item's score and error only.",
                       cls="meta", id="no-traces"))
    for row in d["rows"]:
        trace = row["trace"] or {}
        label = "" if row["sample"] is None else f"sample {row['sample']}: "
        out += [tag("h2", f"{label}score {_score(row['score'])}"),
                tag("div", tag("p", "error: ", tag("code", row["error"]), cls="item-error")
                    if row["error"] else "",
                    [tag("section", tag("h3", name), folded(name, trace[name]), cls="trace",
                         data_field=name)
                     for name in ("prompt", "output", "target", "verdict", "explanation")
                     if name in trace],
                    cls="item-row", data_sample=row["sample"])]
    others = d["elsewhere"]
    out.append(tag("h2", f"In the other runs of this suite: {len(others)}"))
    rows = [[tag("a", f"@{o['seq']}", href=o["item_page"]),
             o["plan"]["slug"] if o["plan"] else "exploratory", o["arm"], o["model"],
             o["status"] + (" (retracted)" if o["retracted"] else ""), _score(o["score"]),
             join([tag("code", e) for e in o["errors"]], "; ") if o["errors"] else ""]
            for o in others]
    out.append(table(["run", "plan", "arm", "model", "status", "score", "error"], rows,
                     cls="elsewhere", row_attrs=[{"data_seq": o["seq"]} for o in others])
               if others else tag("p", "none: no other run of the same suite and metric "
                                  "lists this item", cls="meta"))
    return out
