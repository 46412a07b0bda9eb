"""Paired comparisons of two systems scored on the same items (effect = b - a)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ._exact import column_means, column_sums, xmean, xvar
from ._intervals import _interval, _pvalue, _se
from ._results import McNemarResult, PairedEstimate, WorstCaseBounds
from ._validate import (
    as_float_array,
    as_labels,
    as_stack,
    check_confidence,
    check_finite,
    check_int,
)
from .resampling import _build, _cluster_codes

Scores = Sequence[float | None] | NDArray[np.floating[Any]]


def _align(
    a: Scores, b: Scores, ids_a: Sequence[Hashable] | None, ids_b: Sequence[Hashable] | None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Both score vectors over the union of items, NaN where a side has no score."""
    va = as_float_array("a", a, allow_nan=True)
    vb = as_float_array("b", b, allow_nan=True)
    if (ids_a is None) != (ids_b is None):
        raise ValueError(f"{'ids_b' if ids_b is None else 'ids_a'}: give both ids or neither")
    if ids_a is None or ids_b is None:
        if va.size != vb.size:
            raise ValueError(f"b: has {vb.size} scores but a has {va.size} (pair by position)")
        return va, vb
    la = as_labels("ids_a", ids_a, va.size, "a")
    lb = as_labels("ids_b", ids_b, vb.size, "b")
    for name, labels in (("ids_a", la), ("ids_b", lb)):
        if len(set(labels)) != len(labels):
            raise ValueError(f"{name}: contains duplicate ids")
    pos = {label: i for i, label in enumerate(la)}
    for label in lb:
        pos.setdefault(label, len(pos))
    ua = np.full(len(pos), np.nan)
    ub = np.full(len(pos), np.nan)
    ua[[pos[label] for label in la]] = va
    ub[[pos[label] for label in lb]] = vb
    return ua, ub


def paired(
    a: Scores,
    b: Scores,
    ids_a: Sequence[Hashable] | None = None,
    ids_b: Sequence[Hashable] | None = None,
    method: Literal["bootstrap", "normal"] = "bootstrap",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
    *,
    bootstrap_method: Literal["bca", "percentile"] = "bca",
    clusters: Sequence[Hashable] | None = None,
) -> PairedEstimate:
    """Mean paired effect b - a over complete cases, with interval and p-value.

    Items pair by position, or by id when ``ids_a``/``ids_b`` are given. An item is dropped
    (counted in ``n_dropped``) when either score is NaN/None or its id is missing on one side:
    unbiased only if items fail at random; see ``worst_case_bounds``.

    "bootstrap" resamples the differences (Efron 1979/1987). Its p-value inverts the interval
    built from the same resamples: the smallest alpha whose (1 - alpha) interval excludes 0,
    so the interval excludes 0 iff pvalue < 1 - confidence (0.0 means every resample fell on
    one side: report it as p < 1/n_resamples). "normal" uses mean ± z·sd/sqrt(n) and the
    matching two-sided z-test.
    """
    from ._dist import ndtr, ndtri

    confidence = check_confidence(confidence)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    if seed is not None:
        seed = check_int("seed", seed)
    if method not in ("bootstrap", "normal"):
        raise ValueError(f"method: expected 'bootstrap' or 'normal', got {method!r}")
    va, vb = _align(a, b, ids_a, ids_b)
    keep = ~(np.isnan(va) | np.isnan(vb))
    n = int(keep.sum())
    n_dropped = int(va.size - n)
    if n < 2:
        raise ValueError(f"a, b: only {n} complete pair(s) ({n_dropped} dropped); need >= 2")
    d = vb[keep] - va[keep]
    codes = None
    if clusters is not None:
        if method != "bootstrap":
            raise ValueError("clusters: only the bootstrap resamples clusters")
        labels = as_labels("clusters", clusters, va.size, "items")
        codes = _cluster_codes([x for x, k in zip(labels, keep.tolist(), strict=True) if k], n)
    if method == "bootstrap":
        dist = _build(d, "mean", bootstrap_method, n_resamples, seed, codes)
        low, high = _interval(dist, confidence)
        name = "paired-" + dist.method
        return PairedEstimate(
            dist.theta_hat, _se(dist), low, high, confidence, name, n, n_dropped, _pvalue(dist)
        )
    point = xmean(d)
    # All differences equal: the effect is exactly the point (avoid a rounding-noise se).
    degenerate = bool(np.all(d == d[0]))
    se = 0.0 if degenerate else math.sqrt(xvar(d)) / math.sqrt(n)
    half = float(ndtri(0.5 + confidence / 2.0)) * se
    p = float(2.0 * ndtr(-abs(point) / se)) if not degenerate else float(point == 0)
    return PairedEstimate(
        point, se, point - half, point + half, confidence, "paired-normal", n, n_dropped, p
    )


def worst_case_bounds(
    a: Scores,
    b: Scores,
    ids_a: Sequence[Hashable] | None = None,
    ids_b: Sequence[Hashable] | None = None,
    direction: int = +1,
    low: float = 0.0,
    high: float = 1.0,
) -> WorstCaseBounds:
    """Bounds on the effect b - a over all items when dropped items are imputed adversarially.

    For ``direction=+1`` (claim: b beats a) the worst case gives every missing b score ``low``
    and every missing a score ``high``; ``best`` does the reverse. A claim that survives only
    under complete-case deletion rests on the failures being random.

    ``a`` and ``b`` may also be 2-D, one row per run over one axis of items (NaN where a run
    has no score): each item's score is then its mean over the runs, and every missing
    item-run is imputed, so an item missing in one run of several still counts.
    """
    if isinstance(direction, bool) or direction not in (1, -1):
        raise ValueError(f"direction: must be +1 or -1, got {direction!r}")
    lo = check_finite("low", low)
    hi = check_finite("high", high)
    if not lo < hi:
        raise ValueError(f"high: must exceed low ({lo}), got {hi}")
    # numpy's ArrayLike leaves out None (a missing score), which np.ndim takes like any value
    if np.ndim(a) == 2 or np.ndim(b) == 2:  # type: ignore[arg-type]
        if ids_a is not None or ids_b is not None:
            raise ValueError("ids_a: runs x items arrays are already on one item axis")
        sa, sb = as_stack("a", a), as_stack("b", b)
        if sa.shape[1] != sb.shape[1]:
            raise ValueError(f"b: has {sb.shape[1]} items but a has {sa.shape[1]}")
    else:
        va, vb = _align(a, b, ids_a, ids_b)
        sa, sb = va[None, :], vb[None, :]
    for name, v in (("a", sa), ("b", sb)):
        seen = v[~np.isnan(v)]
        if seen.size and (seen.min() < lo or seen.max() > hi):
            raise ValueError(f"{name}: scores must lie within [low, high] = [{lo}, {hi}]")
    ma, mb = column_means(sa), column_means(sb)
    keep = ~(np.isnan(ma) | np.isnan(mb))
    complete = xmean(mb[keep] - ma[keep]) if keep.any() else None

    def effect(fill_a: float, fill_b: float) -> float:
        ia = column_sums(np.where(np.isnan(sa), fill_a, sa)) / sa.shape[0]
        ib = column_sums(np.where(np.isnan(sb), fill_b, sb)) / sb.shape[0]
        return xmean(ib - ia)

    against = effect(hi, lo) if direction == 1 else effect(lo, hi)
    favour = effect(lo, hi) if direction == 1 else effect(hi, lo)
    # one row per side: the incomplete items; runs x items: every missing item-run
    one_row = sa.shape[0] == 1 and sb.shape[0] == 1
    missing = int((~keep).sum()) if one_row else int(np.isnan(sa).sum() + np.isnan(sb).sum())
    return WorstCaseBounds(
        against,
        favour,
        min(against, favour),
        max(against, favour),
        complete,
        int(sa.shape[1]),
        missing,
        direction,
    )


def mcnemar_exact(
    a: Sequence[float] | NDArray[np.floating[Any]], b: Sequence[float] | NDArray[np.floating[Any]]
) -> McNemarResult:
    """Exact McNemar test for paired binary scores (0/1, aligned by position).

    Under no difference the discordant pairs split Binomial(n_discordant, 1/2); the p-value is
    min(1, 2 * P(X <= min(b_better, a_better))).
    """
    from scipy.special import bdtr  # the binomial cdf, without importing scipy.stats

    va = as_float_array("a", a)
    vb = as_float_array("b", b)
    if va.size != vb.size:
        raise ValueError(f"b: has {vb.size} scores but a has {va.size}")
    for name, v in (("a", va), ("b", vb)):
        if not np.isin(v, (0.0, 1.0)).all():
            raise ValueError(f"{name}: McNemar needs binary scores (0 or 1)")
    b_better = int(((va == 0) & (vb == 1)).sum())
    a_better = int(((va == 1) & (vb == 0)).sum())
    stat = min(b_better, a_better)
    disc = b_better + a_better
    p = min(1.0, 2.0 * float(bdtr(stat, disc, 0.5))) if disc else 1.0
    return McNemarResult(float(stat), p, int(va.size), b_better, a_better)
