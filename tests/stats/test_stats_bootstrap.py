"""Bootstrap intervals against scipy.stats.bootstrap, with Monte-Carlo-justified tolerances.

Two bootstrap runs with different seeds disagree by Monte Carlo error alone. Each comparison
measures that error: our endpoints over 20 seeds give their mean and sd; scipy's endpoint,
from an independent seed, has (about) the same sd, so mean_ours - scipy has sd
sd * sqrt(1 + 1/20). We allow 4 of those (a false alarm about 1 in 15,000 per endpoint if
normal), plus one grid step 1/n for binary data, whose resampled means move in steps of 1/n.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import logbook.stats.resampling as bmod
from logbook.stats import Estimate, bootstrap, clustered_se

SEEDS = range(20)
B = 5000


def _std_stat(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.std(x, axis=axis, ddof=1)


RNG = np.random.default_rng(2024)
SKEWED = RNG.exponential(size=120)  # right-skewed: BCa and percentile differ
BINARY = np.array([1.0] * 168 + [0.0] * 32)  # 84% of 200, the book's example


def _ours(values: np.ndarray, **kw: object) -> tuple[np.ndarray, np.ndarray]:
    ends = np.array([(r.low, r.high) for r in (bootstrap(values, seed=s, **kw) for s in SEEDS)])
    return ends.mean(axis=0), ends.std(axis=0, ddof=1)


def _tolerance(sd: np.ndarray, grid: float) -> np.ndarray:
    return 4.0 * sd * math.sqrt(1 + 1 / len(SEEDS)) + grid


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize(
    ("data", "ours_stat", "scipy_stat", "grid"),
    [
        (SKEWED, "mean", np.mean, 0.0),
        (SKEWED, "median", np.median, 0.0),
        (SKEWED, _std_stat, _std_stat, 0.0),
        (BINARY, "mean", np.mean, 1 / 200),
    ],
    ids=["skewed-mean", "skewed-median", "skewed-sd", "binary-mean"],
)
def test_agrees_with_scipy(data, ours_stat, scipy_stat, grid: float, method: str) -> None:
    mean, sd = _ours(data, statistic=ours_stat, method=method, n_resamples=B)
    ref = stats.bootstrap(
        (data,), scipy_stat, method=method, n_resamples=B, rng=np.random.default_rng(99)
    ).confidence_interval
    gap = np.abs(mean - np.array([ref.low, ref.high]))
    assert (gap <= _tolerance(sd, grid)).all(), (mean, (ref.low, ref.high), sd)


TIED = np.round(SKEWED, 1)  # many ties: exercises the per-distinct-value jackknife


class _NumpyIndices:
    """A stream that draws indices as scipy.stats.bootstrap does (rng.integers(0, n, (B, n)),
    row-major), so that both see the same resamples; the logbook's own stream is tested in
    tests/stats/test_stats_stream.py."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def indices(self, n: int, size: int) -> np.ndarray:
        return self.rng.integers(0, n, size=size)


def _with_scipy_draws(data, statistic, method, seed, codes=None):
    dist = bmod._build(data, statistic, method, 2000, None, codes, stream=_NumpyIndices(seed))
    _, boot, _, _ = bmod._distribution(data, statistic, 2000, _NumpyIndices(seed), codes)
    return dist, boot


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize(
    ("data", "ours_stat", "scipy_stat"),
    [
        (SKEWED, "mean", np.mean),
        (SKEWED, "median", np.median),
        (TIED, "mean", np.mean),
        (TIED, _std_stat, _std_stat),
    ],
    ids=["skewed-mean", "skewed-median", "tied-mean", "tied-sd"],
)
def test_same_draws_give_scipy_endpoints_exactly(data, ours_stat, scipy_stat, method) -> None:
    # On the generic path we draw rows of (B, n) indices in chunks, as scipy draws them at
    # once; given the same draws the two bootstrap distributions coincide, and then z0, the
    # jackknife acceleration and the quantiles must agree to rounding. This pins the BCa
    # arithmetic far tighter than any Monte Carlo tolerance can.
    ref = stats.bootstrap(
        (data,), scipy_stat, method=method, n_resamples=2000, rng=np.random.default_rng(4)
    )
    dist, boot = _with_scipy_draws(data, ours_stat, method, 4)
    assert np.allclose(np.sort(boot), np.sort(ref.bootstrap_distribution), rtol=0, atol=1e-12)
    ci = ref.confidence_interval
    assert bmod._interval(dist, 0.95) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert bmod._se(dist) == pytest.approx(ref.standard_error, rel=1e-9)


def test_flat_jackknife_means_no_acceleration() -> None:
    # With ties at the median every leave-one-out median is equal: the acceleration is 0/0.
    # scipy returns NaN there; we take a = 0 (no skew seen) and still give an interval.
    assert len(set(bmod._jackknife_general(TIED, lambda m: np.median(m, axis=-1))[0])) == 1
    r = bootstrap(TIED, statistic="median", n_resamples=2000)
    assert r.method == "bootstrap-bca" and r.low < r.point < r.high


def test_bca_corrects_for_skew() -> None:
    # On right-skewed data BCa shifts the interval right of the percentile one (Efron 1987);
    # the shift must exceed the Monte Carlo noise for the comparison to mean anything.
    pct_mean, pct_sd = _ours(SKEWED, method="percentile", n_resamples=B)
    bca_mean, bca_sd = _ours(SKEWED, method="bca", n_resamples=B)
    noise = 4 * np.sqrt(pct_sd**2 + bca_sd**2) / math.sqrt(len(SEEDS))
    assert ((bca_mean - pct_mean) > noise).all()


@pytest.mark.parametrize(
    ("ones", "n", "iters", "printed"),
    [
        # shared/seeds/000 "Chapter 2 — Error Bars Before Claims": 168 of 200, 10,000
        # resamples -> "95% CI [78.50%, 89.00%]".
        (168, 200, 10_000, (0.785, 0.890)),
        # shared/seeds/003 "LM9-T3": 48 of 60, 1,000 resamples -> (0.6833333333333333, 0.9).
        (48, 60, 1_000, (0.6833333333333333, 0.9)),
    ],
)
def test_percentile_reproduces_printed_transcripts(ones, n, iters, printed) -> None:
    # The sources used Python's random and an order-statistic quantile; ours uses numpy and
    # linear interpolation. Agreement is therefore up to Monte Carlo error (measured over our
    # seeds, as above) plus one grid step 1/n for the different quantile rule.
    data = np.array([1.0] * ones + [0.0] * (n - ones))
    mean, sd = _ours(data, method="percentile", n_resamples=iters)
    assert (np.abs(mean - np.array(printed)) <= _tolerance(sd, 1 / n)).all(), (mean, sd)


def test_counts_path_matches_index_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Few distinct values take the multinomial-counts path; forcing the generic index path
    # must give the same distribution (Monte Carlo tolerance from both sides' spreads).
    data = np.random.default_rng(5).choice([0.0, 0.5, 1.0], size=300, p=[0.2, 0.3, 0.5])
    fast_mean, fast_sd = _ours(data, n_resamples=B)
    monkeypatch.setattr(bmod, "counts_path_is_cheaper", lambda counts, n: False)
    slow_mean, slow_sd = _ours(data, n_resamples=B)
    noise = 4 * np.sqrt((fast_sd**2 + slow_sd**2) / len(SEEDS)) + 1 / 600
    assert (np.abs(fast_mean - slow_mean) <= noise).all()


# Few common values and a long tail of rare ones, like per-item differences of run means.
_TAILED_VALUES = np.arange(-6, 7) / 10
_TAILED_COUNTS = np.array([1, 2, 3, 8, 24, 300, 2000, 310, 25, 9, 3, 1, 1])


def test_rare_value_draws_follow_the_multinomial_law() -> None:
    # Rare values are drawn item by item (stats/_multinomial.py); the rows must still be
    # Multinomial(n, p): each column is Binomial(n, p_j), with mean n p_j and variance
    # v = n p_j (1 - p_j), and two columns covary by -n p_i p_j. Over B rows a column mean has
    # se sqrt(v / B), the sample variance has relative se sqrt((2 + g) / B) with g the
    # binomial's excess kurtosis (1 - 6 p q) / v, and the covariance has se about
    # sqrt(v_i v_j / B). We allow 4 se for each.
    from logbook.stats._multinomial import RARE, multinomial_counts
    from logbook.stats._stream import Stream

    counts = _TAILED_COUNTS
    assert (counts < RARE).any() and (counts >= RARE).any()
    n, rows = int(counts.sum()), 40_000
    p = counts / n
    for max_cells in (4_000_000, 997):  # one chunk, and many ragged ones
        draws = multinomial_counts(counts, rows, Stream(11), max_cells)
        assert draws.shape == (rows, counts.size) and (draws.sum(axis=1) == n).all()
        v = n * p * (1 - p)
        assert (np.abs(draws.mean(axis=0) - n * p) <= 4 * np.sqrt(v / rows)).all()
        rel_se = np.sqrt((2 + (1 - 6 * p * (1 - p)) / v) / rows)
        assert (np.abs(draws.var(axis=0, ddof=1) / v - 1) <= 4 * rel_se).all()
        cov = np.cov(draws[:, 6], draws[:, 1])[0, 1]  # a common and a rare column
        assert abs(cov + n * p[6] * p[1]) <= 4 * math.sqrt(v[6] * v[1] / rows)


def test_rare_value_path_gives_the_plain_multinomial_interval(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import logbook.stats._multinomial as mmod

    data = np.repeat(_TAILED_VALUES, _TAILED_COUNTS)
    fast_mean, fast_sd = _ours(data, n_resamples=B)
    monkeypatch.setattr(mmod, "RARE", 0)  # every value drawn by conditional binomials
    plain_mean, plain_sd = _ours(data, n_resamples=B)
    noise = 4 * np.sqrt((fast_sd**2 + plain_sd**2) / len(SEEDS))
    assert (np.abs(fast_mean - plain_mean) <= noise).all(), (fast_mean, plain_mean, noise)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_chunking_does_not_change_the_result(monkeypatch: pytest.MonkeyPatch, statistic) -> None:
    # The same draws in smaller chunks (ragged last chunk) must give bit-identical results.
    data = np.random.default_rng(1).normal(size=97)
    whole = bootstrap(data, statistic=statistic, n_resamples=1001, seed=3)
    monkeypatch.setattr(bmod, "_MAX_CELLS", 97 * 7 + 5)
    assert bootstrap(data, statistic=statistic, n_resamples=1001, seed=3) == whole


def test_deterministic_per_seed() -> None:
    a = bootstrap(SKEWED, seed=7, n_resamples=500)
    assert a == bootstrap(SKEWED, seed=7, n_resamples=500)
    assert a != bootstrap(SKEWED, seed=8, n_resamples=500)
    assert isinstance(a, Estimate) and a.n == SKEWED.size and a.method == "bootstrap-bca"
    assert a.se == pytest.approx(np.std(SKEWED, ddof=1) / math.sqrt(SKEWED.size), rel=0.1)


@pytest.mark.parametrize("method", ["bca", "percentile"])
@pytest.mark.parametrize("clusters", [None, [0, 0, 1, 1, 2]])
def test_degenerate_data_gives_zero_width(method: str, clusters) -> None:
    r = bootstrap([0.7] * 5, method=method, clusters=clusters)
    assert (r.point, r.low, r.high, r.se) == (0.7, 0.7, 0.7, 0.0)
    assert bootstrap([1.0, 1.0], statistic="median").high == 1.0


def test_bca_undefined_falls_back_to_percentile() -> None:
    # The number of distinct values is smaller in every resample than in the data, so the
    # bias correction z0 = Phi^-1(0) is infinite (scipy returns NaN); we fall back and say so.
    def distinct(x: np.ndarray, axis: int = -1) -> np.ndarray:
        return (np.diff(np.sort(x, axis=axis), axis=axis) != 0).sum(axis=axis) + 1.0

    r = bootstrap(SKEWED, statistic=distinct, n_resamples=500)
    assert r.method == "bootstrap-percentile (bca undefined)"
    assert r.point == SKEWED.size and r.low <= r.high < r.point


def _clustered_data(seed: int, g: int = 60) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 8, size=g)
    labels = np.repeat(np.arange(g), sizes)
    p = rng.beta(2, 2, size=g)[labels]  # items in a cluster share a difficulty
    return (rng.random(labels.size) < p).astype(float), labels


def _brute_force_cluster_percentile(x, labels, seed: int, n_resamples: int) -> tuple[float, float]:
    # Reference: literally draw clusters with replacement and concatenate their items.
    rng = np.random.default_rng(seed)
    groups = [x[labels == c] for c in np.unique(labels)]
    g = len(groups)
    means = [
        np.concatenate([groups[i] for i in rng.integers(0, g, g)]).mean()
        for _ in range(n_resamples)
    ]
    return tuple(np.quantile(means, [0.025, 0.975]))


def test_cluster_bootstrap_matches_brute_force() -> None:
    x, labels = _clustered_data(0)
    mean, sd = _ours(x, method="percentile", n_resamples=B, clusters=labels)
    ref = np.array(_brute_force_cluster_percentile(x, labels, 12345, B))
    assert (np.abs(mean - ref) <= _tolerance(sd, 1 / x.size)).all(), (mean, ref, sd)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_cluster_bootstrap_is_a_bootstrap_over_cluster_totals(method: str) -> None:
    # Resampling clusters = resampling the pairs (cluster sum, cluster size) with the ratio
    # statistic; scipy's paired bootstrap of those pairs jackknifes leave-one-cluster-out for
    # BCa. Same seed -> same draws (checked first), so endpoints must agree to rounding.
    x, labels = _clustered_data(2)
    sums = np.bincount(labels, weights=x)
    sizes = np.bincount(labels).astype(float)
    ref = stats.bootstrap(
        (sums, sizes),
        lambda s, m, axis: s.sum(axis=axis) / m.sum(axis=axis),
        paired=True,
        vectorized=True,
        method=method,
        n_resamples=2000,
        rng=np.random.default_rng(6),
    )
    dist, boot = _with_scipy_draws(x, "mean", method, 6, bmod._cluster_codes(labels, x.size))
    assert np.allclose(np.sort(boot), np.sort(ref.bootstrap_distribution), rtol=0, atol=1e-12)
    ci = ref.confidence_interval
    assert bmod._interval(dist, 0.95) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_cluster_bootstrap_se_agrees_with_clustered_se() -> None:
    # Both estimate the same cluster-robust se; they differ by O(1/G) finite-sample terms
    # (G = 400 clusters: ~0.3%) and by Monte Carlo error (B = 4000: ~1.1% relative sd of a
    # bootstrap sd). 6% covers 4 sd of both with room.
    x, labels = _clustered_data(1, g=400)
    boot = bootstrap(x, clusters=labels, n_resamples=4000, method="percentile")
    ref = clustered_se(x, labels)
    assert boot.se == pytest.approx(ref.se, rel=0.06)
    # And clustering matters here: the item-level interval is too narrow by ~sqrt(deff).
    naive = bootstrap(x, n_resamples=4000, method="percentile")
    ratio = (boot.high - boot.low) / (naive.high - naive.low)
    assert ref.design_effect is not None and ref.design_effect > 1.5
    assert ratio == pytest.approx(math.sqrt(ref.design_effect), rel=0.06)
    assert boot.method == "cluster-bootstrap-percentile"


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"values": []}, "values"),
        ({"values": [0.5]}, "values"),
        ({"values": [0.5, float("nan")]}, "values"),
        ({"values": [0.5, None]}, "values"),
        ({"values": ["a", "b"]}, "values"),
        ({"values": [0.1, 0.2], "method": "basic"}, "method"),
        ({"values": [0.1, 0.2], "statistic": "mode"}, "statistic"),
        ({"values": [0.1, 0.2], "n_resamples": 0}, "n_resamples"),
        ({"values": [0.1, 0.2], "n_resamples": 10.5}, "n_resamples"),
        ({"values": [0.1, 0.2], "confidence": 0}, "confidence"),
        ({"values": [0.1, 0.2], "confidence": 1.2}, "confidence"),
        ({"values": [0.1, 0.2], "seed": -1}, "seed"),
        ({"values": [0.1, 0.2], "clusters": [1]}, "clusters"),
        ({"values": [0.1, 0.2], "clusters": [1, 1]}, "clusters"),
        ({"values": [0.1, 0.2], "clusters": [[1], [2]]}, "clusters"),
        ({"values": [0.1, 0.2], "clusters": [1, 2], "statistic": "median"}, "statistic"),
        ({"values": [0.1, 0.2], "statistic": lambda x, axis: x}, "statistic"),
    ],
)
def test_bad_input(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name}:"):
        bootstrap(**kwargs)
