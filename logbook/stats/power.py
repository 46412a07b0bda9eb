"""Sample size and minimum detectable effect for comparing two accuracies (two-sided).

Unpaired (two independent item samples): the normal approximation to the two-proportion
test, n = (z_{1-α/2} + z_{1-β})² (p1 q1 + p2 q2) / δ² items per system.

Paired (both systems on the same items): McNemar's test in Connor's (1987) approximation,
n = (z_{1-α/2} √ψ + z_{1-β} √(ψ − δ²))² / δ² items, where ψ = P(the systems disagree on an
item). Pairing helps exactly as much as ψ is small. When ``discordance`` is None we assume the
systems err independently, ψ = p1 q2 + p2 q1, which gives pairing no credit: pass a measured ψ
(the share of items where the two runs disagree) to get the real gain.

The two functions are inverses: sample_size(min_detectable_effect(n, ...), ...) == n.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ._validate import check_finite, check_int, check_open_unit

MAX_ITEMS = 1e15  # beyond any suite: a delta that needs more is a typo, not a plan


def _z(alpha: float, power: float) -> tuple[float, float]:
    from ._dist import ndtri

    za = float(ndtri(1.0 - alpha / 2.0))
    zb = float(ndtri(power))
    if za + zb <= 0:
        raise ValueError(f"power: must exceed alpha/2 ({alpha / 2}), got {power}")
    return za, zb


def _psi(p: float, delta: float, discordance: float | None) -> float:
    p2 = p + delta
    if discordance is None:
        return p * (1.0 - p2) + p2 * (1.0 - p)
    # Given the two accuracies, disagreement is at least |δ| and at most min(p1+p2, 2-p1-p2).
    hi = min(p + p2, 2.0 - p - p2)
    if not abs(delta) <= discordance <= hi + 1e-12:
        raise ValueError(
            f"discordance: {discordance} is impossible for accuracies {p} and {p2} "
            f"(must lie in [{abs(delta)}, {hi}])"
        )
    return discordance


def _n_raw(delta: float, p: float, za: float, zb: float, paired: bool, disc: float | None) -> float:
    if paired:
        psi = _psi(p, delta, disc)
        return (za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta**2, 0.0))) ** 2 / delta**2
    p2 = p + delta
    return (za + zb) ** 2 * (p * (1.0 - p) + p2 * (1.0 - p2)) / delta**2


def _check(p: float, alpha: float, power: float, discordance: float | None) -> tuple[float, ...]:
    p = check_open_unit("p", p)
    alpha = check_open_unit("alpha", alpha)
    power = check_open_unit("power", power)
    if discordance is not None:
        discordance = check_finite("discordance", discordance)
        if not 0.0 < discordance <= 1.0:
            raise ValueError(f"discordance: must lie in (0, 1], got {discordance}")
    return p, alpha, power


def sample_size(
    delta: float,
    p: float,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    discordance: float | None = None,
) -> int:
    """Items needed (per system; pairs if ``paired``) to detect a change ``delta`` from
    accuracy ``p`` (to ``p + delta``) with a two-sided level-``alpha`` test at ``power``."""
    p, alpha, power = _check(p, alpha, power, discordance)
    delta = check_finite("delta", delta)
    if delta == 0 or not 0.0 < p + delta < 1.0:
        raise ValueError(f"delta: p + delta must lie in (0, 1) and delta != 0, got {delta}")
    za, zb = _z(alpha, power)
    try:
        n = _n_raw(delta, p, za, zb, paired, discordance)
    except (ZeroDivisionError, OverflowError):  # delta**2 underflowed
        n = math.inf
    if not n <= MAX_ITEMS:
        raise ValueError(f"delta: {delta:g} is too small to plan for: detecting it would take "
                         f"more than {MAX_ITEMS:.0e} items")
    # Forgive float noise so that sample_size(min_detectable_effect(n)) == n exactly.
    return max(1, math.ceil(n - 1e-9 * n))


def min_detectable_effect(
    n: int,
    p: float,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    discordance: float | None = None,
) -> float:
    """Smallest improvement δ > 0 over accuracy ``p`` that ``n`` items (per system; pairs if
    ``paired``) detect with a two-sided level-``alpha`` test at ``power``."""
    p, alpha, power = _check(p, alpha, power, discordance)
    n = check_int("n", n, minimum=1)
    za, zb = _z(alpha, power)
    q = 1.0 - p
    if not paired:
        # Closed form: δ²(1+K) − K(q−p)δ − 2Kpq = 0 with K = (za+zb)²/n.
        k = (za + zb) ** 2 / n
        delta = (k * (q - p) + math.sqrt(k * k * (q - p) ** 2 + 8.0 * (1.0 + k) * k * p * q)) / (
            2.0 * (1.0 + k)
        )
        if delta >= q:
            raise ValueError(f"n: {n} items cannot detect any improvement over p = {p}")
        return delta
    # Feasible δ: p + δ < 1 and, for a given ψ, |δ| <= ψ <= min(p1 + p2, 2 - p1 - p2).
    shrink = 1.0 - 1e-12
    lo, hi = 0.0, q * shrink
    if discordance is not None:
        lo = max(0.0, discordance - 2.0 * p)
        hi = min(hi, discordance, 2.0 * q - discordance) * shrink
        if lo > hi:
            raise ValueError(f"discordance: {discordance} is impossible for accuracy p = {p}")

    def excess(d: float) -> float:
        return _n_raw(d, p, za, zb, True, discordance) - n

    if excess(hi) > 0:
        raise ValueError(f"n: {n} pairs cannot detect any improvement over p = {p}")
    if lo > 0 and excess(lo) <= 0:
        return lo  # every effect this discordance allows is detectable; the smallest is lo
    return _bisect(excess, max(lo, hi * 1e-9), hi)


def _bisect(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of an increasing-then-crossing ``f`` in [lo, hi] (f(lo) > 0 >= f(hi)), to
    the last representable bit: bisection needs no scipy and cannot step outside the bracket."""
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi
