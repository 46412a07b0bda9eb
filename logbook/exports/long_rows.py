"""The long format of the CSV and Parquet exports: one row per item of a run, per sample (an
Inspect epoch, a pass@k attempt) when the run records several, with the run's and the
apparatus's columns repeated on each row, so that a data frame groups and filters them
directly. A score the harness did not give is empty (missing, never zero), with its error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from logbook.analysis.flat import APPARATUS_COLUMNS, column
from logbook.analysis.run_view import one_at_a_time
from logbook.analysis.view import RunView
from logbook.exports.selection import Selection

RUN_COLUMNS: tuple[tuple[str, type], ...] = (
    ("ledger", str), ("run", str), ("run_seq", int), ("ts", str), ("plan", str),
    ("plan_slug", str), ("arm", str), ("status", str), ("retracted", bool), ("metric", str),
    ("task", str), ("session", str),
    *((column(name), str) for name in APPARATUS_COLUMNS),
)
ITEM_COLUMNS: tuple[tuple[str, type], ...] = (
    ("item", str), ("position", int), ("sample", int), ("score", float), ("error", str),
    ("cluster", str), ("component", str),
)
COLUMNS = (*RUN_COLUMNS, *ITEM_COLUMNS)
NAMES = tuple(name for name, _ in COLUMNS)


def _text(value: Any) -> str | None:
    """An apparatus value as text: a string as it is, a number or a structure as JSON."""
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


def run_values(sel: Selection, run: RunView, slugs: dict[str, str]) -> tuple[Any, ...]:
    body = run.body
    flat = run.apparatus  # flattened (logbook.format.apparatus), from the run's facts if kept
    plan = run.plan if run.plan in slugs else None
    return (sel.origin, run.digest, run.seq, run.entry.envelope.get("ts"), plan,
            slugs.get(plan or ""), run.arm, run.status, run.retracted,
            (body.get("outcomes") or {}).get("metric"), _text(body.get("task")), run.session,
            *[v if v is None or isinstance(v, str) else _text(v)
              for v in map(flat.get, APPARATUS_COLUMNS)])


ITEM_FIELDS = ("sample", "score", "error", "cluster", "component")  # beside id and position


def runs_with_items(sel: Selection) -> Iterator[tuple[tuple[Any, ...], list[str],
                                                      dict[str, list[Any]]]]:
    """Each selected run that has items, in ledger order: its run columns (``RUN_COLUMNS``),
    its item ids, and its ``ITEM_FIELDS`` columns (all None where it records none)."""
    slugs = {p.digest: p.slug for p in sel.view.plans.values()}
    for run in one_at_a_time(sel.runs):  # memory stays one plan's runs
        oc = run.body.get("outcomes") or {}
        ids = oc.get("id") or []
        if ids:
            none = [None] * len(ids)
            yield (run_values(sel, run, slugs), ids,
                   {name: oc.get(name) or none for name in ITEM_FIELDS})


def rows(sel: Selection) -> Iterator[tuple[Any, ...]]:
    """Every row of the selection's runs, in ledger order and each run's item order."""
    for head, ids, cols in runs_with_items(sel):
        for i, row in enumerate(zip(ids, *(cols[name] for name in ITEM_FIELDS), strict=True)):
            yield (*head, row[0], i, *row[1:])
