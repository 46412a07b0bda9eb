"""Item-level arrays: scores on one axis of item ids, the means and spreads taken over them.

A run's scores are an array over its item ids, NaN where an item was not scored (missing,
never zero). These functions align several such arrays (runs that wrote different item sets)
and reduce them with the exact sums of ``_exact``, so the digits do not depend on the numpy
build. They know ids and numbers only: which runs count is the caller's business.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from ._exact import column_sums, xvar
from ._results import Estimate, MeanEstimate, VarianceComponents

Scores = NDArray[np.float64]


def sample_means(ids: Sequence[str], values: Scores) -> tuple[list[str], Scores, Scores]:
    """Items scored several times (one row per sample): (distinct ids in first-seen order,
    each item's mean over its scored samples (NaN when none was scored), scored samples)."""
    order = list(dict.fromkeys(ids))
    index = {i: k for k, i in enumerate(order)}
    codes = np.fromiter((index[i] for i in ids), dtype=np.intp, count=len(ids))
    present = ~np.isnan(values)
    sums = _weighted(codes, np.where(present, values, 0.0), len(order))
    counts = _weighted(codes, present.astype(float), len(order))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return order, means, counts


def sample_reduced(ids: Sequence[str], values: Scores,
                   reduce: Callable[[list[float]], float | None]) -> tuple[list[str], Scores]:
    """Items scored several times (one row per sample), each reduced to one score by
    ``reduce`` (which takes the item's scored samples in row order and gives its score, or None
    for none): (distinct ids in first-seen order, each item's score, NaN for None)."""
    per_item: dict[str, list[float]] = {}
    for rid, v in zip(ids, values.tolist(), strict=True):
        got = per_item.setdefault(rid, [])
        if v == v:  # not NaN: a scored sample
            got.append(v)
    order = list(per_item)
    reduced = [reduce(per_item[i]) for i in order]
    return order, np.array([np.nan if r is None else r for r in reduced], dtype=np.float64)


def _weighted(codes: NDArray[np.intp], weights: Scores, size: int) -> Scores:
    """Per code, the sum of its weights (np.bincount with weights, which returns floats)."""
    return np.asarray(np.bincount(codes, weights=weights, minlength=size), dtype=np.float64)


def sample_passes(ids: Sequence[str], values: Scores, order: Sequence[str]) -> Scores:
    """How many of each item's samples scored exactly 1 (``order`` from ``sample_means``)."""
    index = {i: k for k, i in enumerate(order)}
    codes = np.fromiter((index[i] for i in ids), dtype=np.intp, count=len(ids))
    present = ~np.isnan(values)
    return _weighted(codes, (present & (values == 1.0)).astype(float), len(order))


def mean_over_runs(id_lists: Sequence[list[str]],
                   values: Sequence[Scores]) -> tuple[list[str], Scores]:
    """(ids, each item's mean over the runs that scored it, NaN if none did). Runs that wrote
    different item sets are aligned on the union of their ids, in first-seen order."""
    if not id_lists:
        return [], np.zeros(0)
    first = id_lists[0]
    if all(ids == first for ids in id_lists[1:]):
        ids = first
        stack = np.vstack(list(values))
    else:
        ids = list(dict.fromkeys(i for run in id_lists for i in run))
        stack = stack_on(id_lists, values, ids)
    present = ~np.isnan(stack)
    counts = present.sum(axis=0)
    sums = column_sums(np.where(present, stack, 0.0))  # the same digits on any numpy
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return list(ids), means


def stack_on(id_lists: Sequence[list[str]], values: Sequence[Scores],
             ids: list[str]) -> Scores:
    """Runs x items scores on the axis ``ids`` (NaN where a run has no score for an item)."""
    index: dict[str, int] | None = None  # built only when a run's items are in another order
    stack = np.full((len(id_lists), len(ids)), np.nan)
    for row, (rids, vals) in enumerate(zip(id_lists, values, strict=True)):
        if rids == ids:
            stack[row] = vals
        else:
            index = index or {i: k for k, i in enumerate(ids)}
            stack[row, [index[i] for i in rids]] = vals
    return stack


def align(ids_a: list[str], a: Scores, ids_b: list[str],
          b: Scores) -> tuple[list[str], Scores, Scores]:
    """Two item arrays on one id axis (the union, first-seen order), NaN where one lacks an
    item: after this, pairing by position is pairing by id."""
    if ids_a == ids_b:
        return ids_a, a, b
    ids = list(dict.fromkeys([*ids_a, *ids_b]))
    index = {i: k for k, i in enumerate(ids)}
    out_a = np.full(len(ids), np.nan)
    out_b = np.full(len(ids), np.nan)
    out_a[[index[i] for i in ids_a]] = a
    out_b[[index[i] for i in ids_b]] = b
    return ids, out_a, out_b


def complete(a: Scores, b: Scores) -> NDArray[np.bool_]:
    """Items scored on both sides."""
    return np.asarray((a == a) & (b == b))


def binary_pairs(a: Scores, b: Scores) -> tuple[list[float], list[float]] | None:
    """The complete pairs as two lists when every one is 0 or 1 (what McNemar counts), else
    None (also when no pair is complete)."""
    both = complete(a, b)
    x, y = a[both], b[both]
    if not x.size or not bool(np.all((x == 0.0) | (x == 1.0))
                              and np.all((y == 0.0) | (y == 1.0))):
        return None
    return x.tolist(), y.tolist()


def in_unit(x: Scores) -> bool:
    """Whether every score that is not NaN lies in [0, 1]."""
    return bool(np.all(np.isnan(x) | ((x >= 0) & (x <= 1))))


def item_interval(values: Scores, proportion: bool, confidence: float,
                  clusters: list[str] | None, n_resamples: int, seed: int) -> Estimate | None:
    """The interval of a mean over items: Wilson for a binary proportion (also at 0 or 100%:
    200 of 200 is 98.1-100, not a point), a point when every value is the same ("degenerate"),
    the BCa bootstrap otherwise (resampling whole clusters when ``clusters`` is given)."""
    from .proportions import wilson
    from .resampling import bootstrap

    if values.size == 0:
        return None
    lo, hi = float(values.min()), float(values.max())
    binary = bool(np.isin(values, (0.0, 1.0)).all())
    if proportion and binary and clusters is None:
        return wilson(int(values.sum()), int(values.size), confidence)
    if lo == hi:
        return Estimate(point=lo, se=None, low=lo, high=hi, confidence=confidence,
                        method="degenerate", n=int(values.size))
    return bootstrap(values, method="bca", confidence=confidence, seed=seed, clusters=clusters,
                     n_resamples=n_resamples)


def run_mean(scores: list[float], confidence: float, bounded: bool) -> MeanEstimate:
    """Mean over runs with its t-interval; for scores bounded in [0, 1] (a proportion or
    pass@k) the t-interval on the runs' logits, which stays inside [0, 1]."""
    from .runs import logit_t_interval, t_interval

    if bounded and all(0.0 <= x <= 1.0 for x in scores):
        return logit_t_interval(scores, confidence)
    return t_interval(scores, confidence)


def finite_suite_sd(values: Sequence[Scores]) -> float | None:
    """The spread a finite suite adds: each run's item-level standard error (runs with two or
    more scored items), root mean square over the runs; None when no run has two."""
    item_var = []
    for run in values:
        v = run[~np.isnan(run)]
        if v.size >= 2:
            item_var.append(xvar(v) / v.size)
    if not item_var:
        return None
    return math.sqrt(sum(item_var) / len(item_var))


def quadrature(a: float, b: float) -> float:
    """sqrt(a² + b²): independent spreads added."""
    return math.sqrt(a**2 + b**2)


def repeated_components(ids: list[str], scores: list[float]) -> VarianceComponents | None:
    """Variance components of single scores over the items scored at least twice; None when
    fewer than two items were."""
    from .clustered import variance_components

    codes, counts = np.unique(np.asarray(ids, dtype=object), return_counts=True)
    repeated = set(codes[counts >= 2].tolist())
    if len(repeated) < 2:
        return None
    keep = [k for k, i in enumerate(ids) if i in repeated]
    return variance_components([scores[k] for k in keep], [ids[k] for k in keep])
