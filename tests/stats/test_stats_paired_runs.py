"""The effect with every source of variance in it (issue 33): items and runs together,
Newcombe's paired score interval, clustered standard errors with CR1, the cluster check."""

from __future__ import annotations

import numpy as np
import pytest

from logbook import stats
from logbook.stats._stream import Stream
from logbook.stats.clustered import cluster_check
from logbook.stats.paired_runs import newcombe_paired, paired_over_runs


def test_newcombe_matches_the_published_interval() -> None:
    # Cavo et al. (2012), complete response before (columns) and after (rows) consolidation:
    # 59 both, 6 after only, 16 before only, 80 neither. Fagerland, Lydersen & Laake's
    # Newcombe square-and-add interval: -0.0621 (-0.1186 to -0.0046).
    est = newcombe_paired(59, 6, 16, 80)
    assert round(est.point, 4) == -0.0621
    assert round(est.low, 4) == -0.1186 and round(est.high, 4) == -0.0046
    assert est.method == "paired-newcombe-score"
    # the p-value inverts the interval: it excludes 0 at 95%, and not at the level 1 - p
    assert est.pvalue < 0.05
    at = newcombe_paired(59, 6, 16, 80, confidence=1 - est.pvalue * 0.999)
    assert at.low <= 0 <= at.high


def test_newcombe_on_three_agreeing_items_is_wide_not_a_point() -> None:
    est = newcombe_paired(2, 0, 0, 1)
    assert est.point == 0 and est.pvalue == 1.0
    assert est.low < -0.4 and est.high > 0.4


def test_clustered_se_carries_statsmodels_cr1() -> None:
    import statsmodels.api as sm

    s = Stream(3)
    for g in (5, 6, 12):
        sizes = 3 + (s.indices(5, g) % 5)
        labels = np.repeat(np.arange(g), sizes)
        shared = s.uniforms(g)[labels]
        y = (s.uniforms(labels.size) < 0.3 + 0.4 * shared).astype(float)
        est = stats.clustered_se(y, labels.tolist())
        fit = sm.OLS(y, np.ones(y.size)).fit(cov_type="cluster",
                                               cov_kwds={"groups": labels})
        # statsmodels' default: CR1, G/(G-1)·(N-1)/(N-K); the same se to a relative 1e-10
        assert est.se == pytest.approx(float(fit.bse[0]), rel=1e-10)
        uncorrected = sm.OLS(y, np.ones(y.size)).fit(
            cov_type="cluster", cov_kwds={"groups": labels, "use_correction": False})
        assert est.se > float(uncorrected.bse[0])


def test_one_sided_clusters_are_warned_and_independent_items_are_not() -> None:
    s = Stream(11)
    labels = np.repeat(np.arange(40), 5).tolist()
    clustered = (s.uniforms(200) < np.repeat(s.uniforms(40), 5)).astype(float)
    check = cluster_check(clustered, labels)
    assert check is not None and check.warn and check.design_effect > 1.2
    independent = (s.uniforms(200) < 0.6).astype(float)
    quiet = cluster_check(independent, labels)
    assert quiet is not None and not quiet.warn


def _arms(run_sd: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    s = Stream(seed)
    p = s.uniforms(300)
    out = []
    for _ in range(2):
        shift = run_sd * (s.uniforms(4) - 0.5)
        out.append((s.uniforms(4 * 300).reshape(4, 300) < np.clip(p + shift[:, None], 0, 1))
                   .astype(float))
    return out[0], out[1]


def test_run_shifts_widen_the_effect_and_the_p_value_agrees_with_the_interval() -> None:
    a, b = _arms(0.0, 1)
    quiet = paired_over_runs(a, b)
    a2, b2 = _arms(0.3, 1)
    noisy = paired_over_runs(a2, b2)
    assert noisy.se_runs > quiet.se_runs and noisy.high - noisy.low > quiet.high - quiet.low
    assert noisy.df < quiet.df  # a few runs measure run noise with few degrees of freedom
    for est in (quiet, noisy):
        assert est.se == pytest.approx((est.se_items**2 + est.se_runs**2) ** 0.5)
        assert (est.low > 0 or est.high < 0) == (est.pvalue < 0.05)
        assert est.runs_a == est.runs_b == 4 and est.method == "paired-runs-t"
    # with no run noise it is the paired t over items (the run part found nothing to add)
    if quiet.se_runs == 0:
        d = b.mean(axis=0) - a.mean(axis=0)
        assert quiet.se == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))


def test_missing_item_runs_and_named_clusters() -> None:
    a, b = _arms(0.1, 5)
    a[0, :30] = np.nan
    b[2, 100:110] = np.nan
    labels = [f"c{i // 6}" for i in range(300)]
    est = paired_over_runs(a, b, clusters=labels)
    assert est.method == "paired-runs-cluster-t" and est.n_clusters == 50 and est.n == 300
    plain = paired_over_runs(a, b)
    assert est.point == plain.point
