"""A run's items, one row per outcome row with its trace when one is kept (logbook.format.
traces): what `show RUN --item ID`, `show RUN --items --where EXPR` and the web's item pages
print. Rows are read from the run's signed body and its traces blob, checked against the
digest the body records.

A filter (``--where``) is ``FIELD OP VALUE``: OP one of ``=``, ``!=``, ``<``, ``<=``, ``>``,
``>=`` and ``~`` (contains, for text); FIELD one of ``id``, ``sample``, ``score``, ``error``,
``cluster`` and the trace's texts (``prompt``, ``output``, ``target``, ``verdict``,
``explanation``). ``score=null`` matches the missing items; numbers compare as numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from logbook.errors import InputError
from logbook.format.traces import TEXTS, read
from logbook.storage.base import MAX_BLOB_BYTES

Blob = Callable[[str, int], "bytes | None"]
FIELDS = ("id", "sample", "score", "error", "cluster", *TEXTS)
_EXPR = re.compile(r"\s*([a-z_]+)\s*(!=|<=|>=|=|<|>|~)\s*(.*?)\s*", re.DOTALL)


@dataclass(frozen=True)
class Item:
    """One outcome row: its id, sample (None without a sample column), score (None: missing),
    error, cluster, and its trace's texts (empty when none was kept)."""

    id: str
    sample: int | None
    score: float | None
    error: str | None
    cluster: str | None
    trace: dict[str, str] = field(default_factory=dict)

    def value(self, name: str) -> Any:
        return self.trace.get(name) if name in TEXTS else getattr(self, name)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "sample": self.sample, "score": self.score,
                               "error": self.error, "cluster": self.cluster}
        return {**out, "trace": dict(self.trace) if self.trace else None}


def has_traces(body: dict[str, Any]) -> bool:
    return isinstance(body.get("traces"), dict)


def items_of(body: dict[str, Any], blob: Blob) -> list[Item]:
    """Every outcome row of a run body, with its trace; [] for a run without outcomes.
    StorageDamaged when the run names traces that are missing or altered."""
    o = body.get("outcomes")
    if not isinstance(o, dict):
        return []
    ids: list[str] = o.get("id") or []
    n = len(ids)
    samples = o.get("sample") or [None] * n
    errors = o.get("error") or [None] * n
    clusters = o.get("cluster") or [None] * n
    traces: dict[tuple[str, int | None], dict[str, str]] = {}
    if has_traces(body):
        for row in read(blob, body["traces"], MAX_BLOB_BYTES):
            traces[(str(row.get("id")), row.get("sample"))] = {
                k: v for k, v in row.items() if k in TEXTS and isinstance(v, str)}
    return [Item(i, s, score, e, c, traces.get((i, s), {}))
            for i, s, score, e, c in zip(ids, samples, o.get("score") or [None] * n, errors,
                                         clusters, strict=False)]


def where(expr: str) -> Callable[[Item], bool]:
    """The test ``expr`` (``FIELD OP VALUE``) makes of an item; an InputError naming
    ``--where`` when it is not one."""
    m = _EXPR.fullmatch(expr)
    if m is None or m.group(1) not in FIELDS:
        raise InputError(f"--where {expr!r}: give FIELD OP VALUE with FIELD one of "
                         f"{', '.join(FIELDS)} and OP one of = != < <= > >= ~ (e.g. score=0)")
    name, op, text = m.groups()
    if text.lower() == "null":
        if op not in ("=", "!="):
            raise InputError(f"--where {expr!r}: null compares with = or != only")
        return (lambda it: it.value(name) is None) if op == "=" else \
            (lambda it: it.value(name) is not None)
    if op == "~":
        return lambda it: isinstance(it.value(name), str) and text in it.value(name)
    number = _number(text) if name in ("score", "sample") else None
    if name in ("score", "sample") and number is None:
        raise InputError(f"--where {expr!r}: {name} compares with a number or null")
    if op in ("<", "<=", ">", ">=") and number is None:
        raise InputError(f"--where {expr!r}: {op} compares numbers (score, sample)")

    def test(it: Item) -> bool:
        v = it.value(name)
        if v is None:
            return op == "!="
        if number is not None:
            x = float(v)
            return {"=": x == number, "!=": x != number, "<": x < number, "<=": x <= number,
                    ">": x > number, ">=": x >= number}[op]
        return (str(v) == text) if op == "=" else (str(v) != text)
    return test


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def select(items: Iterable[Item], exprs: list[str]) -> list[Item]:
    """The items every expression of ``exprs`` holds for, in the run's order."""
    tests = [where(e) for e in exprs]
    return [it for it in items if all(t(it) for t in tests)]


def the_item(items: list[Item], item_id: str, sample: int | None = None) -> list[Item]:
    """The rows of one item (every sample, or the one named); an InputError naming ``--item``
    when the run has no such item."""
    rows = [it for it in items if it.id == item_id and (sample is None or it.sample == sample)]
    if not rows:
        what = f"item {item_id!r}" + (f" sample {sample}" if sample is not None else "")
        raise InputError(f"--item: the run has no {what}")
    return rows
