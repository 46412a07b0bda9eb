"""Epoch reducers: the one score of an item scored several times (Inspect's epochs, the
outcome's ``sample`` column), as the run's ``outcomes.reducer`` names it (``mean`` when absent).

Each reducer takes the item's scored samples (missing ones are left out), in the order the
outcomes list them, and gives the item's score, or None when it has none (no sample scored;
``pass_at_k`` with fewer than k scored). They are Inspect AI's reducers of the same names on
numeric values, a sample passing when it scores at least 1 (Inspect's default threshold):

- ``mean``, ``median`` (the mean of the middle two of an even count), ``max``;
- ``mode``: the most frequent value, a tie going to the value seen first;
- ``at_least_K``: 1 when at least K samples pass, else 0;
- ``pass_at_K``: the unbiased pass@K of n samples of which c pass, 1 - C(n-c, K)/C(n, K)
  (computed as 1 - prod(1 - K/i, i = n-c+1..n)), 1 when n - c < K, None when n < K.

Pure Python: the ingest's check of a harness's figure uses these, and must not import numpy.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

MEAN = "mean"
NAMES = ("mean", "median", "mode", "max", "at_least_k", "pass_at_k")
PASS = 1.0  # a sample passes when it scores at least this (Inspect's default `value`)
# what outcomes.reducer may hold: a reducer logbook applies (K from 1 to 999,999)
PATTERN = r"^(mean|median|mode|max|at_least_[1-9][0-9]{0,5}|pass_at_[1-9][0-9]{0,5})$"
_PARAMETRISED = re.compile(r"^(at_least|pass_at)_([1-9][0-9]{0,5})$")

Reduce = Callable[[Sequence[float]], float | None]


def reducer_of(outcomes: Mapping[str, Any]) -> str:
    """The reducer a run's outcomes name (``mean`` when they name none)."""
    name = outcomes.get("reducer")
    return name if isinstance(name, str) and name else MEAN


def known(name: str) -> bool:
    """Whether logbook can apply the reducer ``name``."""
    return re.fullmatch(PATTERN, name) is not None


def reducer(name: str) -> Reduce:
    """The function of the reducer ``name``; ValueError naming it when logbook cannot apply
    it."""
    simple: dict[str, Reduce] = {"mean": _mean, "median": _median, "mode": _mode, "max": _max}
    if name in simple:
        return simple[name]
    match = _PARAMETRISED.fullmatch(name)
    if match is None:
        raise ValueError(f"epochs reducer {name!r} is not one logbook applies "
                         f"({', '.join(NAMES)})")
    k = int(match.group(2))
    return _at_least(k) if match.group(1) == "at_least" else _pass_at(k)


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _mode(values: Sequence[float]) -> float | None:
    return Counter(values).most_common(1)[0][0] if values else None


def _max(values: Sequence[float]) -> float | None:
    return max(values) if values else None


def _at_least(k: int) -> Reduce:
    def reduce(values: Sequence[float]) -> float | None:
        if not values:
            return None
        return 1.0 if sum(1 for v in values if v >= PASS) >= k else 0.0
    return reduce


def _pass_at(k: int) -> Reduce:
    def reduce(values: Sequence[float]) -> float | None:
        n = len(values)
        if not n or n < k:
            return None
        c = sum(1 for v in values if v >= PASS)
        if n - c < k:  # every k of the samples hold one that passes
            return 1.0
        return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))
    return reduce


def item_scores(ids: Sequence[str], scores: Sequence[float | None],
                name: str) -> dict[str, float | None]:
    """Each item's reduced score (first-seen order of ids), None when it has none."""
    per_item: dict[str, list[float]] = {}
    for rid, score in zip(ids, scores, strict=True):
        got = per_item.setdefault(rid, [])
        if score is not None:
            got.append(float(score))
    fn = reducer(name)
    return {rid: fn(values) for rid, values in per_item.items()}
