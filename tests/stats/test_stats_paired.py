"""Paired effects, the interval/p-value agreement, complete-case deletion, worst case, McNemar."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from logbook.stats import PairedEstimate, mcnemar_exact, paired, worst_case_bounds

SEEDS = range(20)


def _binary_pair(n: int, seed: int, flip: float = 0.12, p_b: float = 0.8):
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.7).astype(float)
    b = np.where(rng.random(n) < flip, (rng.random(n) < p_b).astype(float), a)
    return a, b


def test_normal_method_is_the_z_interval() -> None:
    rng = np.random.default_rng(0)
    a = rng.random(300)
    b = a + rng.normal(0.02, 0.1, 300)
    r = paired(a, b, method="normal")
    d = b - a
    se = stats.sem(d)
    assert isinstance(r, PairedEstimate)
    assert (r.point, r.se) == pytest.approx((d.mean(), se), rel=1e-12)
    assert (r.low, r.high) == pytest.approx(
        (d.mean() - 1.959963984540054 * se, d.mean() + 1.959963984540054 * se), rel=1e-12
    )
    z = stats.ttest_1samp(d, 0.0).statistic  # same ratio mean/se; normal rather than t tail
    assert r.pvalue == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-10)
    assert (r.n, r.n_dropped, r.method) == (300, 0, "paired-normal")


def test_percentile_bootstrap_agrees_with_scipy_paired() -> None:
    # Tolerance from the measured spread of our endpoints over 20 seeds: 4 sd of
    # (mean of 20 - one scipy run), plus the 1/n grid step of binary differences.
    a, b = _binary_pair(400, 1)
    ends = np.array(
        [
            (r.low, r.high)
            for r in (
                paired(a, b, n_resamples=4000, seed=s, bootstrap_method="percentile") for s in SEEDS
            )
        ]
    )
    ref = stats.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=4000,
        rng=np.random.default_rng(77),
    ).confidence_interval
    tol = 4 * ends.std(axis=0, ddof=1) * math.sqrt(1 + 1 / len(SEEDS)) + 1 / 400
    assert (np.abs(ends.mean(axis=0) - [ref.low, ref.high]) <= tol).all()


DATASETS = {
    "binary-null": _binary_pair(300, 2, p_b=0.7),
    "binary-tiny": _binary_pair(300, 13, p_b=0.7),
    "binary-effect": _binary_pair(300, 3, flip=0.2, p_b=0.9),
    "binary-borderline": _binary_pair(500, 4, flip=0.1, p_b=0.82),
    "continuous-skewed": (np.zeros(80), np.random.default_rng(5).exponential(0.05, 80) - 0.03),
    "continuous-small": (np.zeros(12), np.random.default_rng(6).normal(0.3, 1.0, 12)),
}


@pytest.mark.parametrize("bootstrap_method", ["bca", "percentile"])
@pytest.mark.parametrize("name", DATASETS)
def test_bootstrap_pvalue_agrees_with_interval(name: str, bootstrap_method: str) -> None:
    # The documented contract: the interval excludes 0 iff pvalue < 1 - confidence, at every
    # confidence, with the p-value from the same resamples.
    a, b = DATASETS[name]
    pvals = set()
    for confidence in np.linspace(0.5, 0.999, 60):
        r = paired(a, b, n_resamples=2000, confidence=confidence, bootstrap_method=bootstrap_method)
        pvals.add(r.pvalue)
        alpha = 1 - confidence
        if abs(r.pvalue - alpha) < 1e-9:
            continue  # exactly on the boundary either answer is consistent
        assert (r.low > 0 or r.high < 0) == (r.pvalue < alpha), (confidence, r)
    assert len(pvals) == 1  # the p-value does not depend on the confidence asked for


def test_pvalue_grid_is_not_vacuous() -> None:
    # The datasets above must put p-values inside the swept range, or the check proves little.
    ps = [paired(*DATASETS[k], n_resamples=2000).pvalue for k in DATASETS]
    assert min(ps) < 0.01 and any(0.01 < p < 0.5 for p in ps) and max(ps) > 0.5


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([-1.0, 0.0, 0.0, 0.0, 1.0]), min_size=5, max_size=60)
    | st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=40),
    st.sampled_from(["bca", "percentile"]),
    st.floats(0.5, 0.99),
)
def test_pvalue_interval_agreement_property(
    d: list[float], bootstrap_method: str, conf: float
) -> None:
    r = paired(
        np.zeros(len(d)), d, n_resamples=300, confidence=conf, bootstrap_method=bootstrap_method
    )
    assert 0.0 <= r.pvalue <= 1.0
    if abs(r.pvalue - (1 - conf)) > 1e-9:
        assert (r.low > 0 or r.high < 0) == (r.pvalue < 1 - conf)


def test_bootstrap_pvalue_close_to_normal_on_smooth_data() -> None:
    # With n = 2000 continuous differences the bootstrap and z-test see the same near-normal
    # sampling distribution; p differs by Monte Carlo error (sd of a tail share ~0.002 at
    # B = 10,000) plus O(1/sqrt n) skew terms. 0.02 allows both.
    rng = np.random.default_rng(8)
    d = rng.normal(0.05, 1.0, 2000)
    boot = paired(np.zeros(2000), d, bootstrap_method="percentile")
    norm = paired(np.zeros(2000), d, method="normal")
    assert 0.01 < norm.pvalue < 0.5
    assert boot.pvalue == pytest.approx(norm.pvalue, abs=0.02)


def test_complete_case_deletion_by_position() -> None:
    a = [1.0, 0.0, None, 1.0, float("nan"), 0.0]
    b = [1.0, 1.0, 1.0, None, 0.0, 1.0]
    r = paired(a, b, method="normal")
    assert (r.n, r.n_dropped) == (3, 3)
    assert r.point == pytest.approx((0 + 1 + 1) / 3)


def test_ids_align_and_count_missing_items() -> None:
    rng = np.random.default_rng(9)
    a, b = _binary_pair(200, 10)
    ids = [f"q{i}" for i in range(200)]
    order = rng.permutation(200)
    aligned = paired(a, b, method="normal")
    shuffled = paired(a, b[order], ids, [ids[i] for i in order], method="normal")
    assert shuffled.point == pytest.approx(aligned.point) and shuffled.se == pytest.approx(
        aligned.se
    )
    # Items present on one side only are dropped and counted.
    r = paired(a[:150], b[50:], ids[:150], ids[50:], method="normal")
    assert (r.n, r.n_dropped) == (100, 100)
    assert r.point == pytest.approx((b[50:150] - a[50:150]).mean())


def test_degenerate_differences() -> None:
    same = paired([1, 0, 1, 1], [1, 0, 1, 1])
    assert (same.low, same.high, same.se, same.pvalue) == (0.0, 0.0, 0.0, 1.0)
    shifted = paired([0.5] * 4, [0.75] * 4, method="normal")
    assert (shifted.low, shifted.high, shifted.pvalue) == (0.25, 0.25, 0.0)


def test_worst_case_bounds_by_hand() -> None:
    # items: (1,1) -> 0, (0,1) -> +1, (1,missing), (missing,0)
    a = [1.0, 0.0, 1.0, None]
    b = [1.0, 1.0, None, 0.0]
    up = worst_case_bounds(a, b)
    # Claim b > a: missing b scored 0, missing a scored 1 -> (0 + 1 - 1 - 1) / 4.
    assert up.worst == pytest.approx(-0.25)
    assert up.best == pytest.approx((0 + 1 + 0 + 0) / 4)
    assert (up.low, up.high) == (up.worst, up.best)
    assert up.complete_case == pytest.approx(0.5)
    assert (up.n, up.n_dropped, up.direction) == (4, 2, 1)
    down = worst_case_bounds(a, b, direction=-1)
    assert (down.worst, down.best) == (up.best, up.worst)
    # An id absent from one side counts as a dropped item too; a custom score range applies.
    r = worst_case_bounds([3.0, 5.0], [4.0, 5.0, 2.0], ["x", "y"], ["x", "y", "z"], low=1, high=5)
    assert r.worst == pytest.approx((1 + 0 + (2 - 5)) / 3)  # z: b = 2, a imputed 5
    assert r.best == pytest.approx((1 + 0 + (2 - 1)) / 3)  # z: a imputed 1
    assert (r.n, r.n_dropped) == (3, 1)


def test_worst_case_without_drops_is_the_complete_case() -> None:
    r = worst_case_bounds([0, 1, 1], [1, 1, 0])
    assert r.worst == r.best == r.complete_case == pytest.approx(0.0) and r.n_dropped == 0


@pytest.mark.parametrize("seed", range(5))
def test_mcnemar_matches_statsmodels(seed: int) -> None:
    a, b = _binary_pair(60 + 20 * seed, seed, flip=0.1 + 0.05 * seed)
    table = [
        [np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
        [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))],
    ]
    ref = mcnemar(table, exact=True)
    r = mcnemar_exact(a, b)
    assert r.statistic == ref.statistic
    assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    assert r.b_better == table[1][0] and r.a_better == table[0][1] and r.n == a.size


def test_mcnemar_edges() -> None:
    assert mcnemar_exact([1, 0, 1], [1, 0, 1]).pvalue == 1.0
    # 10 discordant pairs all one way: p = 2 * 0.5**10.
    r = mcnemar_exact([0] * 10 + [1] * 5, [1] * 10 + [1] * 5)
    assert r.pvalue == pytest.approx(2 * 0.5**10) and (r.b_better, r.a_better) == (10, 0)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: paired([], [1.0]), "a"),
        (lambda: paired([1.0, 0.0], [1.0]), "b"),
        (lambda: paired([1.0, None], [None, 1.0]), "a, b"),
        (lambda: paired([1.0, 0.0], [1.0, 0.0], ids_a=["x", "y"]), "ids_b"),
        (lambda: paired([1.0, 0.0], [1.0, 0.0], ids_b=["x", "y"]), "ids_a"),
        (lambda: paired([1.0, 0.0], [1.0, 0.0], ["x", "x"], ["x", "y"]), "ids_a"),
        (lambda: paired([1.0, 0.0], [1.0, 0.0], ["x", "y"], ["x"]), "ids_b"),
        (lambda: paired([1.0, 0.0], [1.0, 0.0], method="t"), "method"),
        (lambda: paired([1.0, 0.0], [1.0, 0.0], confidence=1), "confidence"),
        (lambda: paired([1.0, 0.0], [1.0, 0.0], n_resamples=0), "n_resamples"),
        (lambda: paired([1.0, 0.0], [0.0, 0.0], bootstrap_method="basic"), "method"),
        (lambda: paired(["x", 0.0], [0.0, 0.0]), "a"),
        (lambda: worst_case_bounds([1.0], [0.0], direction=0), "direction"),
        (lambda: worst_case_bounds([1.0], [0.0], direction=True), "direction"),
        (lambda: worst_case_bounds([1.0], [0.0], low=1.0, high=0.0), "high"),
        (lambda: worst_case_bounds([2.0], [0.0]), "a"),
        (lambda: worst_case_bounds([1.0], [float("inf")]), "b"),
        (lambda: mcnemar_exact([1, 0], [1]), "b"),
        (lambda: mcnemar_exact([1, 0.5], [1, 0]), "a"),
        (lambda: mcnemar_exact([1, 0], [1, None]), "b"),
        (lambda: mcnemar_exact([], []), "a"),
    ],
)
def test_bad_input(call, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}:"):
        call()


@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, -0.0, math.nan, 0.5, 2.0, 1e-300]),
                          st.sampled_from([0.0, 1.0, -0.0, math.nan, 0.5])), max_size=40))
@settings(max_examples=400, deadline=None)
def test_binary_pairs_are_the_complete_zero_one_pairs(pairs: list[tuple[float, float]]) -> None:
    """The pairs McNemar and Newcombe count: those scored on both sides, in order, each value
    the float it was (-0.0 stays -0.0), or None when one is not 0 or 1 or none is complete;
    held to the plain definition, item by item."""
    from logbook.stats.items import binary_pairs

    a = np.array([x for x, _ in pairs], dtype=float)
    b = np.array([y for _, y in pairs], dtype=float)
    kept = [(x, y) for x, y in pairs if x == x and y == y]
    want = None if not kept or not all(x in (0.0, 1.0) and y in (0.0, 1.0) for x, y in kept) \
        else ([x for x, _ in kept], [y for _, y in kept])
    assert repr(binary_pairs(a, b)) == repr(want)
