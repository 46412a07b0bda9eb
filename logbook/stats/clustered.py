"""Item structure (Miller 2024, "Adding Error Bars to Evals", arXiv 2411.00640).

Items that share a passage or environment are not independent: ``clustered_se``. Items
answered k times carry two kinds of noise: ``variance_components``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
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
    """Mean score with Miller's cluster-robust standard error and the design effect.

    se² = naive_se² + (1/n²) Σ_c Σ_i Σ_{j≠i} (s_ic − s̄)(s_jc − s̄), with naive_se² =
    var(s, ddof=1)/n: the cross terms add the within-cluster covariance that the naive
    formula drops. With singleton clusters se equals naive_se. Interval: mean ± z·se.
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
    cross = (xdot(cluster_sums, cluster_sums) - xdot(d, d)) / n**2
    # Never negative: it equals (Σ_c (Σ_i d_ic)² + Σ d²/(n-1)) / n².
    se = math.sqrt(max(naive_var + cross, 0.0))
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
