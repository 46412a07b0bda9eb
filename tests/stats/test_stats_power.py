"""Sample size and minimum detectable effect: statsmodels, exact power, mutual inverses."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom
from statsmodels.stats.power import NormalIndPower

from logbook.stats import min_detectable_effect, sample_size

Z = 1.959963984540054  # two-sided 5%

UNPAIRED = [(0.7, 0.05), (0.5, 0.1), (0.84, 0.05), (0.3, 0.1), (0.9, 0.05), (0.7, -0.05)]
PAIRED = [
    (0.7, 0.05, 0.1),
    (0.5, 0.1, 0.2),
    (0.84, 0.03, 0.06),
    (0.7, 0.05, None),
    (0.6, 0.02, 0.1),
]


@pytest.mark.parametrize(("p", "delta"), UNPAIRED)
def test_unpaired_matches_statsmodels(p: float, delta: float) -> None:
    # NormalIndPower with effect size delta / sqrt((p1 q1 + p2 q2) / 2) is the same normal
    # approximation; statsmodels also counts the (negligible) opposite tail, so compare after
    # rounding up.
    p2 = p + delta
    es = abs(delta) / math.sqrt((p * (1 - p) + p2 * (1 - p2)) / 2)
    ref = NormalIndPower().solve_power(effect_size=es, alpha=0.05, power=0.8, ratio=1.0)
    assert sample_size(delta, p) == math.ceil(ref)


def _power_two_proportion(n: int, p1: float, p2: float) -> float:
    """Exact power of the unpooled two-proportion z-test, summing over both binomials."""
    h = np.arange(n + 1) / n
    h1, h2 = np.meshgrid(h, h, indexing="ij")
    se = np.sqrt(h1 * (1 - h1) / n + h2 * (1 - h2) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        reject = np.abs(np.where(se > 0, (h2 - h1) / se, 0.0)) > Z
    k = np.arange(n + 1)
    return float((np.outer(binom.pmf(k, n, p1), binom.pmf(k, n, p2)) * reject).sum())


def _power_mcnemar(n: int, psi: float, delta: float) -> float:
    """Exact power of McNemar's z-test: discordant count ~ Bin(n, psi), then b ~ Bin(m, pi)."""
    pi = (psi + delta) / (2 * psi)
    pm = binom.pmf(np.arange(n + 1), n, psi)
    total = 0.0
    for m in range(1, n + 1):
        b = np.arange(m + 1)
        total += pm[m] * binom.pmf(b, m, pi)[np.abs(2 * b - m) / math.sqrt(m) > Z].sum()
    return total


@pytest.mark.parametrize(("p", "delta"), UNPAIRED[:4])
def test_unpaired_size_delivers_the_power(p: float, delta: float) -> None:
    # The normal approximation is good at these n (350-1250): exact power within 0.015 of 0.8.
    n = sample_size(delta, p)
    assert _power_two_proportion(n, p, p + delta) == pytest.approx(0.8, abs=0.015)


@pytest.mark.parametrize(("p", "delta", "psi"), PAIRED)
def test_paired_size_delivers_the_power(p: float, delta: float, psi: float | None) -> None:
    # Connor's approximation is slightly conservative for small discordance (exact power up
    # to ~0.83); it must never fall short by more than 0.01 nor overshoot by more than 0.04.
    n = sample_size(delta, p, paired=True, discordance=psi)
    psi_used = psi if psi is not None else p * (1 - p - delta) + (p + delta) * (1 - p)
    assert 0.79 <= _power_mcnemar(n, psi_used, delta) <= 0.84


def test_pairing_pays_only_with_low_discordance() -> None:
    unpaired = sample_size(0.02, 0.7)
    assert sample_size(0.02, 0.7, paired=True, discordance=0.1) < unpaired / 3
    # Independent errors (the default) give pairing no credit: about the unpaired n.
    assert sample_size(0.02, 0.7, paired=True) == pytest.approx(unpaired, rel=0.02)


@pytest.mark.parametrize("n", [30, 100, 500, 1000, 5000, 100_000])
@pytest.mark.parametrize(
    ("paired", "disc"), [(False, None), (True, None), (True, 0.3), (True, 0.05)]
)
def test_mutual_inverses(n: int, paired: bool, disc: float | None) -> None:
    try:
        d = min_detectable_effect(n, 0.7, paired=paired, discordance=disc)
    except ValueError as exc:
        # Only allowed when n really is too small: the largest feasible effect needs more.
        assert str(exc).startswith("n:")
        top = min(0.3, disc or 1.0) * (1 - 1e-9)
        assert sample_size(top, 0.7, paired=paired, discordance=disc) > n
        return
    assert sample_size(d, 0.7, paired=paired, discordance=disc) == n
    # And the other way round: the size for delta is the smallest n that detects delta.
    delta = 0.04
    m = sample_size(delta, 0.7, paired=paired, discordance=disc)
    assert min_detectable_effect(m, 0.7, paired=paired, discordance=disc) <= delta
    if m > 1:
        assert min_detectable_effect(m - 1, 0.7, paired=paired, discordance=disc) > delta


@settings(max_examples=80, deadline=None)
@given(
    st.integers(200, 50_000),
    st.floats(0.05, 0.9),
    st.sampled_from([0.01, 0.05, 0.1]),
    st.floats(0.5, 0.95),
)
def test_inverse_property(n: int, p: float, alpha: float, power: float) -> None:
    d = min_detectable_effect(n, p, alpha=alpha, power=power)
    assert 0 < d < 1 - p
    assert sample_size(d, p, alpha=alpha, power=power) == n


def test_card_et_al_scale() -> None:
    # The point Card et al. (2020) make about typical test sets, in numbers: 500 items at
    # ~70% accuracy cannot detect a couple of points unpaired; 80% power needs ~8 points.
    assert 0.07 < min_detectable_effect(500, 0.7) < 0.09


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: sample_size(0.0, 0.7), "delta"),
        (lambda: sample_size(0.4, 0.7), "delta"),
        (lambda: sample_size(float("nan"), 0.7), "delta"),
        (lambda: sample_size(0.05, 0.0), "p"),
        (lambda: sample_size(0.05, 1.2), "p"),
        (lambda: sample_size(0.05, 0.7, alpha=0), "alpha"),
        (lambda: sample_size(0.05, 0.7, power=1), "power"),
        (lambda: sample_size(0.05, 0.7, alpha=0.5, power=0.2), "power"),
        (lambda: sample_size(0.05, 0.7, paired=True, discordance=0.01), "discordance"),
        (lambda: sample_size(0.05, 0.7, paired=True, discordance=1.5), "discordance"),
        (lambda: sample_size(0.05, 0.9, paired=True, discordance=0.9), "discordance"),
        (lambda: min_detectable_effect(0, 0.7), "n"),
        (lambda: min_detectable_effect(2.5, 0.7), "n"),
        (lambda: min_detectable_effect(3, 0.7), "n"),
        (lambda: min_detectable_effect(20, 0.7, paired=True, discordance=0.02), "n"),
        (lambda: min_detectable_effect(100, 0.7, paired=True, discordance=0.0), "discordance"),
    ],
)
def test_bad_input(call, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}:"):
        call()
