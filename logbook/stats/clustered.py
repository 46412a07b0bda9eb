"""Item structure (Miller 2024, "Adding Error Bars to Evals", arXiv 2411.00640).

Items that share a passage or environment are not independent: ``clustered_se``. Items
answered k times carry two kinds of noise: ``variance_components``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._exact import xdot, xmean, xvar
from ._results import ClusteredEstimate, VarianceComponents
from ._validate import as_float_array, as_labels, check_confidence

Values = Sequence[float] | NDArray[np.floating[Any]]


def _codes(name: str, labels: Sequence[Hashable], n: int, of: str) -> tuple[NDArray[np.intp], int]:
    index: dict[Any, int] = {}
    codes = [index.setdefault(label, len(index)) for label in as_labels(name, labels, n, of)]
    return np.asarray(codes, dtype=np.intp), len(index)


def clustered_se(
    scores: Values, clusters: Sequence[Hashable], confidence: float = 0.95
) -> ClusteredEstimate:
    """Mean score with a cluster-robust standard error and the design effect.

    se² = G/(G − 1) · Σ_c (Σ_i (s_ic − s̄))² / n², the sandwich over the G clusters with the
    small-sample factor statsmodels applies by default (CR1: G/(G − 1)·(N − 1)/(N − K), K = 1
    for a mean). With singleton clusters it is var(s, ddof=1)/n, the naive se², as in
    Miller's (2024) form, which adds the within-cluster cross terms to the naive variance
    but leaves out the G/(G − 1) factor (6-10% too small a se with 5-6 clusters).
    Interval: mean ± z·se.
    """
    from ._dist import ndtri

    s = as_float_array("scores", scores, min_len=2)
    confidence = check_confidence(confidence)
    codes, g = _codes("clusters", clusters, s.size, "scores")
    if g < 2:
        raise ValueError("clusters: need at least 2 distinct clusters")
    n = int(s.size)
    mean = xmean(s)
    d = s - mean
    naive_var = xdot(d, d) / (n - 1) / n
    cluster_sums = np.bincount(codes, weights=d)
    se = math.sqrt(g / (g - 1) * xdot(cluster_sums, cluster_sums) / n**2)
    naive_se = math.sqrt(naive_var)
    deff = (se / naive_se) ** 2 if naive_se > 0 else None
    half = float(ndtri(0.5 + confidence / 2.0)) * se
    return ClusteredEstimate(
        mean, se, mean - half, mean + half, confidence, "clustered", n, naive_se, deff, g
    )


def variance_components(scores: Values, item_ids: Sequence[Hashable]) -> VarianceComponents:
    """Split score variance into between-item and within-item parts (Miller 2024 §resampling).

    Each item must be scored at least twice. ``within`` = mean over items of the sample
    variance of its repeated scores; ``between`` = var(item means) − mean(var_i / k_i)
    (the one-way random-effects ANOVA estimator, clipped at 0). More samples per item shrink
    only the within part (as 1/k); only more items shrink the between part. ``dominant``
    compares the two contributions to the variance of the benchmark mean at the current k.
    """
    s = as_float_array("scores", scores, min_len=4)
    codes, g = _codes("item_ids", item_ids, s.size, "scores")
    if g < 2:
        raise ValueError("item_ids: need at least 2 distinct items")
    k = np.bincount(codes)
    if k.min() < 2:
        raise ValueError(
            "item_ids: every item needs at least 2 scores to measure within-item spread"
        )
    means = np.bincount(codes, weights=s) / k
    resid = s - means[codes]
    var_i = np.bincount(codes, weights=resid**2) / (k - 1)
    within = xmean(var_i)
    within_part = xmean(var_i / k)  # expected within-item share of var(item means)
    var_means = xvar(means)
    between = max(0.0, var_means - within_part)
    return VarianceComponents(
        n_items=g,
        n_scores=int(s.size),
        k_mean=xmean(k),
        mean=xmean(means),
        between=between,
        within=within,
        var_mean=var_means / g,
        se_mean=math.sqrt(var_means / g),
        dominant="within" if within_part > between else "between",
    )


DEFF_WARN = 1.2  # a design effect above this matters: error bars 10% too narrow or more
ICC_ALPHA = 0.001  # and the clustering must be plain: the ANOVA F test's p below this


@dataclass(frozen=True, slots=True)
class ClusterCheck:
    """Whether a cluster column the analysis does not use matters: the one-way ANOVA
    intra-class correlation ``icc`` of the values by cluster, the design effect
    1 + (m₀ − 1)·icc (m₀ the ANOVA's mean cluster size), the F test's ``pvalue``, and
    ``warn`` when the design effect exceeds 1.2 with p < 0.001."""

    icc: float
    design_effect: float
    pvalue: float
    n_clusters: int
    cluster_size: float
    warn: bool


def cluster_check(values: Values, clusters: Sequence[Hashable]) -> ClusterCheck | None:
    """The intra-class correlation of ``values`` by ``clusters`` and its design effect; None
    with fewer than two clusters or no cluster of two items (nothing to correlate)."""
    from ._dist import fdtrc

    s = as_float_array("values", values, min_len=2)
    codes, g = _codes("clusters", clusters, s.size, "values")
    sizes = np.bincount(codes, minlength=g).astype(float)
    n = int(s.size)
    if g < 2 or sizes.max() < 2 or n - g < 1:
        return None
    means = np.bincount(codes, weights=s, minlength=g) / sizes
    grand = xmean(s)
    ssb = xdot(sizes, (means - grand) ** 2)
    resid = s - means[codes]
    ssw = xdot(resid, resid)
    msb, msw = ssb / (g - 1), ssw / (n - g)
    m0 = (n - xdot(sizes, sizes) / n) / (g - 1)
    if msb + (m0 - 1) * msw <= 0:
        return None  # every value equal: nothing correlates
    icc = (msb - msw) / (msb + (m0 - 1) * msw)
    deff = 1.0 + (m0 - 1.0) * max(icc, 0.0)
    p = 0.0 if msw == 0 else float(fdtrc(g - 1, n - g, msb / msw))
    return ClusterCheck(icc, deff, p, g, m0, deff > DEFF_WARN and p < ICC_ALPHA)
