"""Bonferroni and Benjamini–Hochberg against statsmodels.multipletests."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from logbook.stats import MultipleTestResult, benjamini_hochberg, bonferroni

RNG = np.random.default_rng(11)
VECTORS = [
    [0.01],
    [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216],  # B&H-style example
    [0.02, 0.02, 0.02, 0.5, 0.0, 1.0],  # ties and both ends
    list(RNG.uniform(size=50) ** 3),
]


@pytest.mark.parametrize("alpha", [0.05, 0.1])
@pytest.mark.parametrize("pvalues", VECTORS)
def test_matches_statsmodels(pvalues: list[float], alpha: float) -> None:
    for ours, method in (
        (bonferroni(pvalues, alpha), "bonferroni"),
        (benjamini_hochberg(pvalues, alpha), "fdr_bh"),
    ):
        reject, adjusted, _, _ = multipletests(pvalues, alpha=alpha, method=method)
        # Same arithmetic, different order of operations: agreement to rounding.
        np.testing.assert_allclose(ours.pvalues_adjusted, adjusted, rtol=1e-12, atol=1e-15)
        assert ours.reject == tuple(bool(x) for x in reject)
        assert ours.alpha == alpha


def test_worked_example() -> None:
    # Ten p-values, alpha 0.05: Bonferroni keeps only p < 0.005; BH's step-up keeps the
    # largest i with p_(i) <= i * 0.05 / 10, i.e. the first two (0.008 <= 0.010, 0.039 > 0.015).
    p = VECTORS[1]
    assert bonferroni(p).reject == (True,) + (False,) * 9
    bh = benjamini_hochberg(p)
    assert bh.reject == (True, True) + (False,) * 8
    assert bh.pvalues_adjusted[0] == pytest.approx(0.01) and bh.method == "benjamini-hochberg"


@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.floats(0.001, 0.5))
def test_properties(p: list[float], alpha: float) -> None:
    bon, bh = bonferroni(p, alpha), benjamini_hochberg(p, alpha)
    assert isinstance(bh, MultipleTestResult) and len(bh.reject) == len(p)
    for raw, adj_bon, adj_bh in zip(p, bon.pvalues_adjusted, bh.pvalues_adjusted, strict=True):
        assert raw <= adj_bh <= adj_bon <= 1.0  # BH is never stricter than Bonferroni
    assert all(b or not a for a, b in zip(bon.reject, bh.reject, strict=True))
    # Rejections are monotone in the raw p-value.
    order = np.argsort(p, kind="stable")
    rej = np.array(bh.reject)[order]
    assert not np.any(~rej[:-1] & rej[1:] & (np.diff(np.array(p)[order]) > 0))


@pytest.mark.parametrize("f", [bonferroni, benjamini_hochberg])
@pytest.mark.parametrize(
    ("args", "name"),
    [
        (([],), "pvalues"),
        (([0.1, 1.2],), "pvalues"),
        (([0.1, -0.1],), "pvalues"),
        (([0.1, float("nan")],), "pvalues"),
        (([0.1], 0.0), "alpha"),
        (([0.1], 1.0), "alpha"),
    ],
)
def test_bad_input(f, args: tuple, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}:"):
        f(*args)
