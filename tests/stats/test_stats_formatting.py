"""Printing no more digits than the interval supports."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logbook.stats import FormattedEstimate, decimals_supported, format_estimate


@pytest.mark.parametrize(
    ("half_width_points", "digits"),
    [
        (12.0, 0),
        (5.0, 0),
        (1.0, 0),
        (0.99, 1),
        (0.3, 1),
        (0.1, 1),
        (0.05, 2),
        (0.0123, 2),
        (0.003, 3),
    ],
)
def test_rule(half_width_points: float, digits: int) -> None:
    # Keep digits down to the decimal place of the half-width's leading significant digit.
    low = 0.84 - half_width_points / 100
    high = 0.84 + half_width_points / 100
    assert decimals_supported(low, high) == digits


def test_the_books_examples() -> None:
    # shared/seeds/000 "Decimals are a claim about precision": a ±5-point interval prints "84",
    # a few tenths earns a decimal place.
    wide = format_estimate(0.8437, 0.7937, 0.8937)
    assert (wide.point, wide.low, wide.high, wide.digits) == ("84", "79", "89", 0)
    assert str(wide) == "84 (79–89)"
    narrow = format_estimate(0.8437, 0.8407, 0.8467)
    assert str(narrow) == "84.4 (84.1–84.7)" and narrow.digits == 1
    assert isinstance(narrow, FormattedEstimate)


def test_other_scales_and_signs() -> None:
    # Run-level scores on a 0-1 scale: 0.8114 with a ±0.0036 interval keeps three decimals.
    assert str(format_estimate(0.8114, 0.8078, 0.8150, scale=1)) == "0.811 (0.808–0.815)"
    # Negative effects: spelled "to", since an en dash before a minus sign misreads.
    assert str(format_estimate(-0.0312, -0.0512, -0.0112)) == "-3 (-5 to -1)"
    # A value that rounds to zero loses its sign.
    assert format_estimate(-0.0004, -0.02, 0.02).point == "0"
    # Zero-width interval: capped at max_digits (default 4).
    assert format_estimate(0.7, 0.7, 0.7).point == "70.0000"
    assert format_estimate(0.7, 0.7, 0.7, max_digits=1).point == "70.0"


@given(st.floats(1e-4, 1e3), st.floats(-100, 100))
def test_digits_property(half: float, centre: float) -> None:
    f = format_estimate(centre, centre - half, centre + half, scale=1)
    d = f.digits
    assert 0 <= d <= 4
    h = float(f"{half:.12g}")
    if 0 < d < 4:
        # The printed resolution sits at the half-width's leading digit.
        assert 10.0 ** (-d) <= h * (1 + 1e-12) and h < 10.0 ** (1 - d)
    for s in (f.point, f.low, f.high):
        assert len(s.partition(".")[2]) == d
    # Wider never earns more digits.
    assert decimals_supported(centre - 2 * half, centre + 2 * half, scale=1) <= d
    assert math.isclose(float(f.point), round(centre, d), abs_tol=10.0 ** (-d))


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: decimals_supported(0.9, 0.8), "high"),
        (lambda: decimals_supported(float("nan"), 0.8), "low"),
        (lambda: decimals_supported(0.7, float("inf")), "high"),
        (lambda: decimals_supported(0.7, 0.8, scale=0), "scale"),
        (lambda: decimals_supported(0.7, 0.8, max_digits=-1), "max_digits"),
        (lambda: format_estimate(None, 0.7, 0.8), "point"),
        (lambda: format_estimate(0.75, 0.8, 0.7), "high"),
    ],
)
def test_bad_input(call, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}:"):
        call()
