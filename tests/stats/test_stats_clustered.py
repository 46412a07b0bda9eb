"""Cluster-robust standard errors and variance components (Miller 2024)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from logbook.stats import ClusteredEstimate, clustered_se, variance_components

REPS = 20


def _clustered(seed: int, g: int, m: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(g), m)
    y = rng.normal(0, math.sqrt(rho), g)[labels] + rng.normal(0, math.sqrt(1 - rho), g * m)
    return y, labels


def test_matches_statsmodels_sandwich() -> None:
    # issue 33: the se is statsmodels' default cluster covariance, with its small-sample
    # correction CR1 (G/(G-1)·(N-1)/(N-K), K = 1): (G/(G-1)) (1/n²) Σ_c (Σ_i d_ic)²
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 9, size=50)
    labels = np.repeat(np.arange(50), sizes)
    y = rng.normal(size=50)[labels] + rng.normal(size=labels.size)
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": labels}
    )
    n = y.size
    r = clustered_se(y, labels)
    assert isinstance(r, ClusteredEstimate)
    assert r.se**2 == pytest.approx(fit.bse[0] ** 2, rel=1e-12)
    assert r.naive_se == pytest.approx(stats.sem(y), rel=1e-12)
    assert r.design_effect == pytest.approx((r.se / r.naive_se) ** 2)
    assert (r.n, r.n_clusters, r.point) == (n, 50, pytest.approx(y.mean()))
    assert (r.low, r.high) == pytest.approx(
        (y.mean() - 1.959963984540054 * r.se, y.mean() + 1.959963984540054 * r.se)
    )


def test_singleton_clusters_reduce_to_the_naive_se() -> None:
    y = np.random.default_rng(1).normal(size=40)
    r = clustered_se(y, range(40))
    assert r.se == pytest.approx(r.naive_se, rel=1e-12)
    assert r.design_effect == pytest.approx(1.0, rel=1e-12)


def test_design_effect_matches_the_textbook_formula() -> None:
    # The study notes (shared/seeds/002): m items per cluster with intra-cluster correlation
    # rho inflate the variance by 1 + (m - 1) rho: 5 per passage, rho 0.2 -> 1.8. Over 20
    # simulated suites the mean design effect must sit within 4 standard errors (measured
    # from the 20) of 1.8, plus 0.01 for the O(1/G) bias of the estimator at G = 1000.
    deffs = np.array(
        [clustered_se(*_clustered(s, 1000, 5, 0.2)).design_effect for s in range(REPS)]
    )
    assert abs(deffs.mean() - 1.8) <= 4 * deffs.std(ddof=1) / math.sqrt(REPS) + 0.01


def test_constant_scores() -> None:
    r = clustered_se([1.0] * 6, [0, 0, 1, 1, 2, 2])
    assert (r.se, r.naive_se, r.design_effect, r.low, r.high) == (0.0, 0.0, None, 1.0, 1.0)


def _resampled_suite(seed: int, items: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    # Item i is answered correctly with probability p_i ~ Beta(2, 2), sampled k times:
    # between = Var(p) = 0.05, within = E[p(1 - p)] = 0.2.
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, items)
    ids = np.repeat(np.arange(items), k)
    return (rng.random(items * k) < p[ids]).astype(float), ids


def test_variance_components_recover_known_values() -> None:
    # Mean of 20 simulated suites within 4 standard errors (measured from the 20) of the truth.
    est = np.array(
        [
            (vc.between, vc.within)
            for vc in (variance_components(*_resampled_suite(s, 500, 8)) for s in range(REPS))
        ]
    )
    tol = 4 * est.std(axis=0, ddof=1) / math.sqrt(REPS)
    assert (np.abs(est.mean(axis=0) - [0.05, 0.2]) <= tol).all(), (est.mean(axis=0), tol)


def test_variance_components_match_one_way_anova() -> None:
    # Balanced design: F = MS_between / MS_within = k var(item means) / within.
    scores, ids = _resampled_suite(3, 40, 6)
    vc = variance_components(scores, ids)
    f = stats.f_oneway(*[scores[ids == i] for i in range(40)]).statistic
    assert f == pytest.approx(6 * vc.var_mean * vc.n_items / vc.within, rel=1e-10)
    means = np.array([scores[ids == i].mean() for i in range(40)])
    assert vc.se_mean == pytest.approx(means.std(ddof=1) / math.sqrt(40), rel=1e-12)
    assert vc.mean == pytest.approx(means.mean())
    assert (vc.n_items, vc.n_scores, vc.k_mean) == (40, 240, 6.0)


def test_which_component_dominates() -> None:
    # Greedy decoding: each item always gets the same score -> no within-item noise.
    greedy = variance_components([1, 1, 0, 0, 1, 1, 0, 0], ["a", "a", "b", "b", "c", "c", "d", "d"])
    assert greedy.within == 0.0 and greedy.dominant == "between"
    # Every item a coin flip: the spread is all within-item noise.
    coins = np.random.default_rng(4).integers(0, 2, 2000).astype(float)
    noisy = variance_components(coins, np.repeat(np.arange(500), 4))
    assert noisy.dominant == "within" and noisy.within == pytest.approx(0.25, abs=0.02)


def test_unbalanced_items_accepted() -> None:
    vc = variance_components([1, 0, 1, 1, 1, 0, 0], ["a", "a", "b", "b", "b", "c", "c"])
    assert vc.n_items == 3 and vc.k_mean == pytest.approx(7 / 3)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: clustered_se([], []), "scores"),
        (lambda: clustered_se([0.5], [1]), "scores"),
        (lambda: clustered_se([0.5, float("nan")], [1, 2]), "scores"),
        (lambda: clustered_se([0.5, 0.6], [1]), "clusters"),
        (lambda: clustered_se([0.5, 0.6], [1, 1]), "clusters"),
        (lambda: clustered_se([0.5, 0.6], [1, 2], confidence=2), "confidence"),
        (lambda: variance_components([1, 0, 1], [1, 1, 2]), "scores"),
        (lambda: variance_components([1, 0, 1, 1], [1, 1, 2]), "item_ids"),
        (lambda: variance_components([1, 0, 1, 1], [1, 1, 1, 1]), "item_ids"),
        (lambda: variance_components([1, 0, 1, 1, 0], [1, 1, 2, 2, 3]), "item_ids"),
        (lambda: variance_components([1, 0, 1, None], [1, 1, 2, 2]), "scores"),
    ],
)
def test_bad_input(call, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}:"):
        call()
