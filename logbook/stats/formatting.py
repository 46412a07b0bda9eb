"""Print an estimate with no more digits than its interval supports."""

from __future__ import annotations

import math

from ._results import FormattedEstimate
from ._validate import check_finite, check_int, check_positive

MAX_DIGITS = 4  # cap for a zero-width (or vanishingly narrow) interval


def decimals_supported(
    low: float, high: float, scale: float = 100, *, max_digits: int = MAX_DIGITS
) -> int:
    """Decimal places the interval supports after multiplying by ``scale``.

    Rule: keep digits down to the decimal place of the leading significant digit of the
    half-width h = (high − low)·scale/2, i.e. max(0, −floor(log10 h)), capped at
    ``max_digits``. ±5 → 0 (prints "84"), ±0.3 → 1 ("84.0"), ±0.05 → 2. A zero-width interval
    gets ``max_digits``. Never negative: we do not round to tens.
    """
    lo = check_finite("low", low)
    hi = check_finite("high", high)
    scale = check_positive("scale", scale)
    max_digits = check_int("max_digits", max_digits)
    if hi < lo:
        raise ValueError(f"high: must be >= low ({lo}), got {hi}")
    half = (hi - lo) * scale / 2.0
    if half == 0.0:
        return max_digits
    # Round to 12 significant digits first so 0.1 computed as 0.0999999... counts as 0.1.
    exponent = math.floor(math.log10(float(f"{half:.12g}")))
    return min(max_digits, max(0, -exponent))


def _fmt(x: float, digits: int) -> str:
    s = f"{x:.{digits}f}"
    # "-0.0" would claim a sign the rounded value does not have.
    return s[1:] if s.startswith("-") and float(s) == 0.0 else s


def format_estimate(
    point: float, low: float, high: float, scale: float = 100, *, max_digits: int = MAX_DIGITS
) -> FormattedEstimate:
    """Point and interval scaled (default: proportions to percent) and rounded to the digits
    the interval supports (see ``decimals_supported``); ``str()`` gives "84.0 (82.1–85.6)"."""
    pt = check_finite("point", point)
    digits = decimals_supported(low, high, scale, max_digits=max_digits)
    scale = float(scale)
    return FormattedEstimate(
        _fmt(pt * scale, digits), _fmt(low * scale, digits), _fmt(high * scale, digits), digits
    )
