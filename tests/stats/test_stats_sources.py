"""stats.sources: the pooled within-group sd against numpy, the one-way random-effects
decomposition against scipy.stats.f_oneway, and by simulation (a fixed seed stream) the
between-group component unbiased for unbalanced groups."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import f_oneway

from logbook.stats.sources import one_way_random, pooled_sd


def test_pooled_sd_is_the_within_group_sd() -> None:
    groups = [[0.70, 0.72, 0.71], [0.60, 0.64], [0.9]]  # a lone value tells nothing
    got = pooled_sd(groups)
    assert got is not None
    ss = sum(float(np.sum((np.array(g) - np.mean(g)) ** 2)) for g in groups[:2])
    assert got.sd == pytest.approx(math.sqrt(ss / 3), rel=1e-12)
    assert (got.runs, got.groups, got.df) == (5, 2, 3)
    assert pooled_sd([[0.5], [0.6]]) is None


def test_one_way_matches_f_oneway_on_random_groups() -> None:
    rng = np.random.default_rng(20261206)
    for _ in range(50):
        sizes = rng.integers(2, 7, size=int(rng.integers(2, 6)))
        groups = [rng.normal(rng.normal(0.7, 0.02), 0.01, size=int(n)) for n in sizes]
        values = np.concatenate(groups).tolist()
        labels = [str(i) for i, g in enumerate(groups) for _ in g]
        got = one_way_random(values, labels)
        want = f_oneway(*groups)
        assert got is not None
        assert got.f == pytest.approx(float(want.statistic), rel=1e-9)
        assert got.p == pytest.approx(float(want.pvalue), rel=1e-9, abs=1e-300)
        assert (got.df_between, got.df_within) == (len(groups) - 1, len(values) - len(groups))


def test_between_component_is_unbiased_by_simulation() -> None:
    """4 variants with 2, 3, 4 and 5 runs, between-variant sd 2 points, within 1 point:
    over 4000 simulated arms the mean of the between component is its true value within
    4 standard errors of the simulation (and 5%), the within component likewise."""
    rng = np.random.default_rng(36_6)
    sizes, sb, sw = (2, 3, 4, 5), 0.02, 0.01
    labels = [str(i) for i, n in enumerate(sizes) for _ in range(n)]
    between, within = [], []
    for _ in range(4000):
        effects = rng.normal(0.0, sb, size=len(sizes))
        values = [0.7 + effects[int(g)] + rng.normal(0.0, sw) for g in labels]
        fit = one_way_random(values, labels)
        assert fit is not None
        between.append(fit.between)
        within.append(fit.within)
    for est, true in ((np.array(between), sb**2), (np.array(within), sw**2)):
        se = est.std(ddof=1) / math.sqrt(est.size)
        assert abs(est.mean() - true) < 4 * se, (est.mean(), true, se)
        assert abs(est.mean() - true) < 0.05 * true


def test_nothing_to_decompose() -> None:
    assert one_way_random([0.5, 0.6], ["a", "b"]) is None  # no group with two values
    assert one_way_random([0.5, 0.6, 0.7], ["a", "a", "a"]) is None  # one group
    tie = one_way_random([0.5, 0.5, 0.6, 0.6], ["a", "a", "b", "b"])
    assert tie is not None and tie.f == math.inf and tie.p == 0.0
