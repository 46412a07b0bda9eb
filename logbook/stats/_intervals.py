"""The bootstrap distribution as resampled, and what intervals and p-values read off it:
BCa levels (Efron 1987), the linear quantile, and the p-value that inverts the interval."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ._exact import xvar


@dataclass(frozen=True, slots=True)
class _Dist:
    """A bootstrap distribution (sorted) with the BCa constants; percentile has z0 = a = 0."""

    theta_hat: float
    boot: NDArray[np.float64]
    z0: float
    accel: float
    method: str


def _levels(confidence: float, z0: float, a: float) -> tuple[float, float]:
    """Quantile levels of the interval; (alpha/2, 1 - alpha/2) when z0 = a = 0."""
    from ._dist import ndtr, ndtri

    z = float(ndtri((1.0 - confidence) / 2.0))
    lo, hi = z0 + z, z0 - z
    return float(ndtr(z0 + lo / (1 - a * lo))), float(ndtr(z0 + hi / (1 - a * hi)))


def _interval(dist: _Dist, confidence: float) -> tuple[float, float]:
    lo_level, hi_level = _levels(confidence, dist.z0, dist.accel)
    return _quantile(dist.boot, lo_level), _quantile(dist.boot, hi_level)


def _quantile(ordered: NDArray[np.float64], q: float) -> float:
    """The linear (type 7) quantile of sorted values, as np.quantile and scipy compute it
    (and the same two-sided lerp), without np.quantile's partition and its numpy.ma import."""
    h = (ordered.size - 1) * q
    i = min(math.floor(h), ordered.size - 1)
    t = h - i
    if t == 0.0 or i + 1 >= ordered.size:
        return float(ordered[i])
    a, b = float(ordered[i]), float(ordered[i + 1])
    return b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t


def _crossing(boot: NDArray[np.float64], side: str) -> float:
    """Level q where the linear quantile function of sorted ``boot`` crosses 0.

    side="le": sup{q: Q(q) <= 0}; side="ge": inf{q: Q(q) >= 0}.  Returns -inf/inf when the
    set is empty or everything (see callers).
    """
    b = boot.size
    j = int(np.searchsorted(boot, 0.0, side="right" if side == "le" else "left"))
    if j == 0:
        return -math.inf if side == "le" else 0.0
    if j == b:
        return 1.0 if side == "le" else math.inf
    lo, hi = float(boot[j - 1]), float(boot[j])
    return ((j - 1) + (0.0 - lo) / (hi - lo)) / (b - 1)


def _pvalue(dist: _Dist) -> float:
    """Two-sided p-value by inverting the interval: the smallest alpha at which the
    (1 - alpha) interval, built from the same resamples, z0 and a, excludes 0.

    The interval is [Q(L(alpha)), Q(U(alpha))] with Q the linear quantile of the resamples,
    L(alpha) = Phi(z0 + w/(1 - a w)), w = z0 + z_{alpha/2}, and U the mirror image. It lies
    above 0 iff L(alpha) > q0 = sup{q: Q(q) <= 0}; solving L(alpha) = q0 in closed form gives
    the threshold, likewise below 0. So the interval excludes 0 iff p < alpha. For the
    percentile interval this is p = 2 min(q0, 1 - q1).
    """
    from ._dist import ndtr, ndtri

    z0, a = dist.z0, dist.accel

    def alpha_at(q: float, lower: bool) -> float:
        # lower: smallest alpha with L(alpha) > q; upper: smallest alpha with U(alpha) < q.
        if q <= 0.0:
            return 0.0 if lower else 1.0
        if q >= 1.0:
            return 1.0 if lower else 0.0
        g = float(ndtri(q)) - z0
        if 1.0 + a * g <= 0.0:  # level outside the range the BCa map reaches
            return float(lower == (a < 0))
        w = g / (1.0 + a * g)
        return min(1.0, 2.0 * float(ndtr(w - z0 if lower else z0 - w)))

    q0 = _crossing(dist.boot, "le")
    q1 = _crossing(dist.boot, "ge")
    p_above = alpha_at(max(q0, 0.0), lower=True) if q0 > -math.inf else 0.0
    p_below = alpha_at(min(q1, 1.0), lower=False) if q1 < math.inf else 0.0
    return min(p_above, p_below, 1.0)


def _se(dist: _Dist) -> float:
    return math.sqrt(xvar(dist.boot)) if dist.boot.size > 1 else 0.0
