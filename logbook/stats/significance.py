"""Two-sided p-values the audit reads from counts, intervals and variances. Pure."""

from __future__ import annotations

import math
from statistics import NormalDist


def two_proportion_p(m0: int, n0: int, m1: int, n1: int) -> float | None:
    """Two-sided p of a two-proportion z-test (pooled) of m0/n0 against m1/n1; None when it
    cannot be computed (an empty side, or a pooled rate of 0 or 1)."""
    if not n0 or not n1:
        return None
    pooled = (m0 + m1) / (n0 + n1)
    if pooled in (0.0, 1.0):
        return None
    z = abs(m0 / n0 - m1 / n1) / math.sqrt(pooled * (1 - pooled) * (1 / n0 + 1 / n1))
    return math.erfc(z / math.sqrt(2))


def interval_p(value: float, low: float, high: float, alpha: float) -> float:
    """Approximate two-sided p of an estimate from its (1 - alpha) interval: se = width / (2 z),
    normal."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    se = (high - low) / (2 * z)
    if se <= 0:
        return 1.0 if value == 0 else 0.0
    return math.erfc(abs(value / se) / math.sqrt(2))


def variance_ratio_test(sd: float, k: int, sd_ref: float, k_ref: int) -> tuple[float, float]:
    """(F, p) of the one-sided F-test that `k` values of sample sd `sd` vary more than `k_ref`
    values of sd `sd_ref` > 0: F = (sd / sd_ref)² on (k - 1, k_ref - 1) degrees of freedom."""
    from ._dist import fdtrc

    ratio = sd / sd_ref
    f = ratio * ratio  # not ** 2: a huge ratio gives inf, not OverflowError
    return f, fdtrc(k - 1, k_ref - 1, f)


def bonferroni_threshold(alpha: float, m: int) -> float:
    """The p each of `m` comparisons needs for a family-wise error rate of `alpha`."""
    return alpha / m
