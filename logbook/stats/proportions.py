"""Intervals for a binomial proportion k/n (an accuracy over n independent items)."""

from __future__ import annotations

import math

from ._results import Estimate
from ._validate import check_confidence, check_int


def _check_counts(k: int, n: int) -> tuple[int, int]:
    n = check_int("n", n, minimum=1)
    k = check_int("k", k, minimum=0)
    if k > n:
        raise ValueError(f"k: must be <= n ({n}), got {k}")
    return k, n


def _wald_se(k: int, n: int) -> float:
    # Reported as the se of the point estimate; the interval itself never uses it.
    p = k / n
    return math.sqrt(p * (1.0 - p) / n)


def wilson(k: int, n: int, confidence: float = 0.95) -> Estimate:
    """Wilson (1927) score interval for k successes out of n.

    Inverts the score test, so it stays inside [0, 1] and keeps near-nominal coverage at
    small n and near 0 or 1, where the Wald interval p ± z·se collapses or overshoots.
    """
    from ._dist import ndtri

    k, n = _check_counts(k, n)
    confidence = check_confidence(confidence)
    z = float(ndtri(0.5 + confidence / 2.0))
    p = k / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    # Rounding can push an endpoint a hair past p or past [0, 1]; the exact interval cannot.
    low = 0.0 if k == 0 else max(0.0, min(centre - half, p))
    high = 1.0 if k == n else min(1.0, max(centre + half, p))
    return Estimate(p, _wald_se(k, n), low, high, confidence, "wilson", n)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> Estimate:
    """Clopper & Pearson (1934) exact interval from beta quantiles.

    Guarantees coverage >= confidence for every true p, at the price of being wider than
    needed; endpoints are exactly 0 at k = 0 and 1 at k = n.
    """
    from scipy.special import betaincinv  # the beta quantile, without importing scipy.stats

    k, n = _check_counts(k, n)
    confidence = check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, tail))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1.0 - tail))
    return Estimate(k / n, _wald_se(k, n), low, high, confidence, "clopper-pearson", n)
