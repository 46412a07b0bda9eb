"""The paired effect with every source of variance in it: items, runs and named clusters.

Two arms are each run k times over one suite (runs x items arrays on one item axis, NaN where
a run has no score). The effect is the mean over items of (treatment's item mean − control's
item mean), as the item-level paired effect. Its variance has two parts that the item-level
bootstrap alone does not both see:

* **items** (and the noise of single answers): the variance of the mean of the paired item
  differences, S_d²/n, or with named clusters its cluster-robust form with statsmodels' CR1
  factor G/(G − 1) (the cluster sums of the centred differences, squared and summed, / n²);
* **runs**: a shift shared by every item of a run (batch, decoding, server noise) moves all of
  an arm's items together, so it does not average out over items. Per arm, the shift of run r
  is the mean over its items of (score − the item's mean over the arm's runs); their variance
  over runs estimates σ²_run + σ²_resid/n_r, and the residual mean square of the two-way
  table (run shift and item mean removed) estimates σ²_resid. So the arm adds
  max(0, var(shifts) − MS_resid · mean(1/n_r)) / k to the variance of the effect.

The interval is d̄ ± t_{df} · se with Satterthwaite's (1946) degrees of freedom for the sum
of these mean squares, and the p-value is the matching two-sided t test, so the interval
excludes 0 exactly when p < 1 − confidence.

For binary pairs with few discordant items (a single run per arm, or runs that agree on
every item), ``newcombe_paired`` gives Newcombe's (1998) hybrid score interval for the
difference of paired proportions (his method 10).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._exact import column_means, xdot, xmean, xvar
from ._results import PairedEstimate
from ._validate import as_labels, as_stack, check_confidence, check_int

Stack = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class RunsPairedEstimate(PairedEstimate):
    """A paired effect whose interval carries items and runs (and named clusters).

    ``se_items`` and ``se_runs`` are the two parts of ``se`` (se² = se_items² + se_runs²);
    ``runs_a``/``runs_b`` the runs of each arm; ``df`` Satterthwaite's degrees of freedom;
    ``n_clusters`` the clusters when given (None otherwise)."""

    se_items: float
    se_runs: float
    df: float
    runs_a: int
    runs_b: int
    n_clusters: int | None


@dataclass(frozen=True, slots=True)
class RunComponent:
    """One arm's run-to-run part: ``between`` = var(run shifts) (df k − 1), ``within`` =
    MS_resid · mean(1/n_r) (df ``df_resid``); the arm adds max(0, between − within) / k."""

    k: int
    between: float
    within: float
    df_resid: float

    @property
    def variance(self) -> float:
        return max(0.0, self.between - self.within) / self.k


def run_component(stack: Stack) -> RunComponent | None:
    """The run-to-run component of one arm (runs x items, NaN where missing); None with
    fewer than two runs that scored an item."""
    stack = np.asarray(stack, dtype=np.float64)
    present = ~np.isnan(stack)
    per_run = present.sum(axis=1)
    stack, present, per_run = stack[per_run > 0], present[per_run > 0], per_run[per_run > 0]
    k = int(stack.shape[0])
    if k < 2:
        return None
    means = column_means(stack)
    resid = np.where(present, stack - means[None, :], 0.0)
    shifts = np.array([xmean(resid[r][present[r]]) for r in range(k)])
    between = xvar(shifts)
    items = int((present.sum(axis=0) > 0).sum())
    rest = np.where(present, resid - shifts[:, None], 0.0)
    df_resid = float(int(present.sum()) - items - k + 1)
    ms_resid = xdot(rest.ravel(), rest.ravel()) / df_resid if df_resid > 0 else 0.0
    within = ms_resid * xmean(1.0 / per_run)
    return RunComponent(k, between, within, max(df_resid, 1.0))


def _items_variance(d: Stack, codes: NDArray[np.intp] | None,
                    g: int) -> tuple[float, float]:
    """(variance of the mean of d, its df): S²/n, or the CR1 cluster-robust form."""
    n = d.size
    if codes is None:
        return xvar(d) / n, float(n - 1)
    centred = d - xmean(d)
    sums = np.bincount(codes, weights=centred, minlength=g)
    return g / (g - 1) * xdot(sums, sums) / n**2, float(g - 1)


def paired_over_runs(
    a: Stack,
    b: Stack,
    confidence: float = 0.95,
    clusters: Sequence[Hashable] | None = None,
) -> RunsPairedEstimate:
    """The paired effect b − a over items, each item averaged over its arm's runs, with a
    variance-components t-interval that carries item, run (and cluster) variance.

    ``a`` and ``b`` are runs x items arrays on one item axis (NaN where a run has no score);
    ``clusters`` one label per item (the item axis) or None.
    """
    from ._dist import stdtr, stdtrit

    confidence = check_confidence(confidence)
    sa = as_stack("a", a)
    sb = as_stack("b", b)
    if sa.shape[1] != sb.shape[1]:
        raise ValueError(f"b: has {sb.shape[1]} items but a has {sa.shape[1]}")
    ma, mb = column_means(sa), column_means(sb)
    keep = ~(np.isnan(ma) | np.isnan(mb))
    n = int(keep.sum())
    if n < 2:
        raise ValueError(f"a, b: only {n} complete pair(s); need >= 2")
    d = mb[keep] - ma[keep]
    codes, g = None, 0
    if clusters is not None:
        labels = as_labels("clusters", clusters, sa.shape[1], "items")
        index: dict[Any, int] = {}
        kept = [x for x, k in zip(labels, keep.tolist(), strict=True) if k]
        codes = np.asarray([index.setdefault(x, len(index)) for x in kept], dtype=np.intp)
        g = len(index)
        if g < 2:
            codes, g = None, 0
    v_items, df_items = _items_variance(d, codes, g)
    # the run components over the items both arms scored (the items the effect averages)
    parts = [c for c in (run_component(sa[:, keep]), run_component(sb[:, keep]))
             if c is not None and c.variance > 0]
    v_runs = sum(c.variance for c in parts)
    var = v_items + v_runs
    point = xmean(d)
    if var <= 0.0:
        df = float(df_items)
        return _estimate(point, 0.0, point, point, confidence, n, int(sa.shape[1] - n),
                         float(point == 0.0), 0.0, 0.0, df, sa, sb, g or None)
    denom = (v_items**2 / df_items if df_items > 0 else 0.0) + sum(
        (c.between / c.k) ** 2 / (c.k - 1) + (c.within / c.k) ** 2 / c.df_resid for c in parts)
    df = var**2 / denom if denom > 0 else float(df_items)
    df = max(df, 1.0)
    se = math.sqrt(var)
    half = stdtrit(df, 0.5 + confidence / 2.0) * se
    p = 2.0 * stdtr(df, -abs(point) / se)
    return _estimate(point, se, point - half, point + half, confidence, n,
                     int(sa.shape[1] - n), min(1.0, p), math.sqrt(v_items),
                     math.sqrt(v_runs), df, sa, sb, g or None)


def _estimate(point: float, se: float, low: float, high: float, confidence: float, n: int,
              dropped: int, p: float, se_items: float, se_runs: float, df: float, sa: Stack,
              sb: Stack, g: int | None) -> RunsPairedEstimate:
    runs = int((~np.isnan(sa)).any(axis=1).sum()), int((~np.isnan(sb)).any(axis=1).sum())
    method = "paired-runs-t" if g is None else "paired-runs-cluster-t"
    return RunsPairedEstimate(point, se, low, high, confidence, method, n, dropped, p,
                              se_items, se_runs, df, runs[0], runs[1], g)


def newcombe_paired(both: int, b_only: int, a_only: int, neither: int,
                    confidence: float = 0.95) -> PairedEstimate:
    """Newcombe's (1998) hybrid score interval for p_b − p_a on paired binary items (his
    method 10: the two Wilson intervals combined with the continuity-corrected φ).

    Counts: ``both`` items right on both sides, ``b_only`` right for b only, ``a_only`` for a
    only, ``neither``. The p-value inverts the interval (the smallest alpha whose interval
    excludes 0, by bisection), so the interval excludes 0 iff p < 1 − confidence.
    """
    confidence = check_confidence(confidence)
    counts = (check_int("both", both), check_int("b_only", b_only),
              check_int("a_only", a_only), check_int("neither", neither))
    n = sum(counts)
    if n < 1:
        raise ValueError("both: need at least one pair")
    low, high = _newcombe(*counts, confidence)
    point = (counts[1] - counts[2]) / n
    if point == 0.0:
        p = 1.0
    else:  # the interval's end nearest 0 moves monotonically with the confidence
        lo_c, hi_c = 1e-12, 1.0 - 1e-12
        if _excludes_zero(*counts, hi_c):
            p = 1.0 - hi_c
        else:
            for _ in range(60):
                mid = (lo_c + hi_c) / 2.0
                if _excludes_zero(*counts, mid):
                    lo_c = mid
                else:
                    hi_c = mid
            p = 1.0 - lo_c
    se = math.sqrt(max((counts[1] + counts[2]) / n - point**2, 0.0) / n)
    return PairedEstimate(point, se, low, high, confidence, "paired-newcombe-score", n, 0, p)


def _excludes_zero(both: int, b_only: int, a_only: int, neither: int, conf: float) -> bool:
    low, high = _newcombe(both, b_only, a_only, neither, conf)
    return low > 0.0 or high < 0.0


def _newcombe(both: int, b_only: int, a_only: int, neither: int,
              confidence: float) -> tuple[float, float]:
    from .proportions import wilson

    n = both + b_only + a_only + neither
    kb, ka = both + b_only, both + a_only
    pb, pa = kb / n, ka / n
    wb, wa = wilson(kb, n, confidence), wilson(ka, n, confidence)
    margins = kb * (n - kb) * ka * (n - ka)
    phi = 0.0
    if margins > 0:
        cross = both * neither - b_only * a_only
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    dl, ub = pb - wb.low, wb.high - pb
    la, ua = pa - wa.low, wa.high - pa
    low = (pb - pa) - math.sqrt(max(dl**2 - 2 * phi * dl * ua + ua**2, 0.0))
    high = (pb - pa) + math.sqrt(max(la**2 - 2 * phi * la * ub + ub**2, 0.0))
    return max(-1.0, low), min(1.0, high)
