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


def welch_p(xs: list[float], ys: list[float]) -> float | None:
    """Two-sided p of Welch's t-test of the means of ``xs`` and ``ys`` (each of 2 or more
    values; None otherwise). Both without spread: 0 when the means differ, else 1 (the test's
    limit: every value agrees within its side)."""
    from ._dist import _t_tail

    if len(xs) < 2 or len(ys) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    vx = sum((x - mx) ** 2 for x in xs) / (len(xs) - 1) / len(xs)
    vy = sum((y - my) ** 2 for y in ys) / (len(ys) - 1) / len(ys)
    se2 = vx + vy
    if se2 <= 0:
        return 0.0 if mx != my else 1.0
    df = se2 * se2 / ((vx * vx / (len(xs) - 1) if vx else 0.0)
                      + (vy * vy / (len(ys) - 1) if vy else 0.0))
    return min(1.0, 2.0 * _t_tail(df, (mx - my) / math.sqrt(se2)))


def poisson_upper(k: int, mu: float) -> float:
    """P(X >= k) for X ~ Poisson(mu): summed from k upward when the tail is the smaller side
    (no cancellation for a tiny mean), else one minus the lower sum."""
    if k <= 0:
        return 1.0
    if mu <= 0:
        return 0.0
    if mu < k:
        term = math.exp(-mu + k * math.log(mu) - math.lgamma(k + 1))
        total, i = 0.0, k
        while term > total * 1e-17 and i < k + 10_000:
            total += term
            i += 1
            term *= mu / i
        return min(1.0, total)
    term = total = math.exp(-mu)
    for i in range(1, k):
        term *= mu / i
        total += term
    return max(0.0, 1.0 - total)
