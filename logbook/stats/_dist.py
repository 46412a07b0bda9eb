"""The normal and Student t distribution functions the report path needs, without scipy.

Importing scipy.special costs ~0.15 s (it pulls in numpy.f2py through its array-API layer),
more than a whole `logbook report` computes. The normal functions come from the standard
library (statistics.NormalDist: Wichura's AS 241 for the quantile; math.erfc for the cdf).
The t cdf is the regularized incomplete beta function (continued fraction, modified Lentz;
Press et al., Numerical Recipes, 3rd ed., §6.4), and the t quantile inverts it by bisection to
full double precision; the F survival function (for the audit's A18) is the same incomplete
beta. tests/stats/test_stats_dist.py checks all five against scipy.special over wide grids
(relative error below 1e-10).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

_NORMAL = NormalDist()
_SQRT2 = math.sqrt(2.0)


def ndtr(x: float) -> float:
    """Standard normal cdf."""
    return 0.5 * math.erfc(-x / _SQRT2)


def ndtri(p: float) -> float:
    """Standard normal quantile; -inf at 0 and +inf at 1."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _t_tail(df: float, t: float) -> float:
    """P(T > |t|) for Student's t with df degrees of freedom."""
    return 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))


def _t_center(df: float, t: float) -> float:
    """P(0 < T < |t|), computed directly so that small t keeps its relative precision."""
    return 0.5 * betainc(0.5, df / 2.0, t * t / (df + t * t))


def stdtr(df: float, t: float) -> float:
    """Student t cdf."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if abs(t) < 1.0:
        center = _t_center(df, t)
        return 0.5 + center if t > 0 else 0.5 - center
    tail = _t_tail(df, t)
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=1024)  # a pure function, asked the same (df, p) run after run
def stdtrit(df: float, p: float) -> float:
    """Student t quantile, by bisection to full precision.

    Near the median it solves for P(0 < T < t) = p - 0.5, in the tails for P(T > t) = 1 - p:
    both differences are exact in floating point there, so neither loses digits.
    """
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    sign = 1.0 if p > 0.5 else -1.0
    # each target below is exact in floating point (Sterbenz), so no digit is lost to 1 - p
    center = 0.25 < p < 0.75
    target = abs(p - 0.5) if center else (1.0 - p if p > 0.5 else p)

    def below(t: float) -> bool:
        return _t_center(df, t) < target if center else _t_tail(df, t) > target

    lo, hi = 0.0, max(1.0, 2.0 * abs(ndtri(p)))
    while below(hi):
        lo, hi = hi, hi * 2.0
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if below(mid):
            lo = mid
        else:
            hi = mid
    return sign * 0.5 * (lo + hi)


def fdtrc(d1: float, d2: float, f: float) -> float:
    """P(F > f) for Snedecor's F with (d1, d2) degrees of freedom: I_x(d2/2, d1/2) at
    x = d2 / (d2 + d1 f) (Abramowitz & Stegun 26.6.2)."""
    if f <= 0.0:
        return 1.0
    if math.isinf(f):
        return 0.0
    return betainc(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f))
