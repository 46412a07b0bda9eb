"""Whether a printed number is a value rounded to the digits it shows. Pure."""

from __future__ import annotations


def half_unit(decimals: int, scale: float = 1.0) -> float:
    """Half a unit of the last of `decimals` printed digits, on a figure printed at `scale`
    (100 for percent), in the figure's own units."""
    return 0.5 * 10.0 ** -decimals / scale


def rounds_to(printed: float, decimals: int, target: float) -> bool:
    """Whether `printed` is `target` rounded to `decimals` places (signs set aside)."""
    return abs(printed - abs(target)) <= 0.5 * 10.0 ** -decimals + 1e-9 * max(1.0, abs(target))
