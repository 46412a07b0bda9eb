"""Statistics that fit the data (issue 15), through `logbook report` as a user runs it."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import draft, plan_body, write_json, write_jsonl
from conftest import run_cli

from logbook import stats


def _plan(tmp: Path, **kw: Any) -> str:
    r = run_cli("plan", str(write_json(tmp / "plan.json", plan_body(**kw))), "--json")
    assert r.code == 0, r.err
    return str(r.json["digest"])


def _append(tmp: Path, drafts: list[dict[str, Any]]) -> None:
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / "runs.jsonl", drafts)), "--json")
    assert r.code == 0, r.err


def _run(plan: str, arm: str, scores: list[float | None], seed: int = 0,
         **outcomes: Any) -> dict[str, Any]:
    ids = outcomes.pop("id", [f"q{i:03d}" for i in range(len(scores))])
    return draft("run", {
        "plan": plan, "arm": arm, "status": "completed", "session": "s1",
        "apparatus": {"model": "m", "kv_cache_precision": arm,
                      "decoding": {"temperature": 0.0, "seed": seed}},
        "outcomes": {"metric": "acc", "id": ids, "score": scores, **outcomes}})


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"(?<![\w.@])[-+]?\d+(?:\.\d+)?(?![\w.])", text)]


def test_two_run_proportion_bounds_stay_in_range(ledger_dir: Path, tmp_path: Path) -> None:
    # runs at 0.55 and 0.95: the plain t-interval over two runs is -198 to 348 points
    plan = _plan(tmp_path, slug="two-runs", runs_per_arm=2, n_items=20, arms=("a", "b"))
    drafts = []
    for arm in ("a", "b"):
        for k, p in enumerate((0.55, 0.95)):
            right = round(p * 20)
            drafts.append(_run(plan, arm, [1.0] * right + [0.0] * (20 - right), seed=k))
    _append(tmp_path, drafts)
    rep = run_cli("report", "two-runs", "--json").json
    for arm in rep["arms"]:
        rl = arm["run_level"]
        assert rl["method"] == "logit-t" and 0 <= rl["low"] < rl["mean"] < rl["high"] <= 1
        assert 0 <= arm["interval"]["low"] <= arm["interval"]["high"] <= 1
    for form in ((), ("--markdown",)):
        text = run_cli("report", "two-runs", *form).out
        lines = [ln.strip().removeprefix("- ") for ln in text.splitlines()
                 if ln.strip().removeprefix("- ").startswith(("run-level:", "line:",
                                                               "item-level:"))]
        assert len(lines) == 6, text
        for ln in lines:  # every figure before "over 2 runs" / "(bootstrap..., n=...)"
            head = re.split(r" over \d+ runs| \(", ln)[0]
            nums = _numbers(head)
            assert nums and all(0 <= x <= 100 for x in nums), ln


def test_logit_t_interval_against_a_direct_computation() -> None:
    p = np.array([0.55, 0.95, 0.7])
    m, sd = p.mean(), p.std(ddof=1)
    from scipy import stats as sps

    half = sps.t.ppf(0.975, 2) * sd / math.sqrt(3) / (m * (1 - m))
    expit = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
    logit = math.log(m / (1 - m))
    est = stats.logit_t_interval(p)
    # logbook's t quantile agrees with scipy's to a relative 1e-10 (tests/stats/test_stats_dist.py)
    assert est.low == pytest.approx(expit(logit - half), rel=1e-9)
    assert est.high == pytest.approx(expit(logit + half), rel=1e-9)
    assert est.point == pytest.approx(m) and est.sd == pytest.approx(sd)


def test_logit_t_interval_contains_its_mean() -> None:
    # nine runs at 100% and one at 50%: the mean is 95%; the interval must hold it
    est = stats.logit_t_interval([1.0] * 9 + [0.5])
    assert est.low <= est.point <= est.high < 1.0
    flat = stats.logit_t_interval([0.7, 0.7, 0.7])  # no spread seen: the point itself
    assert flat.low == flat.point == flat.high == pytest.approx(0.7)


def _pass_at_k_plan(tmp: Path, k: int = 5) -> str:
    return _plan(tmp, slug="codegen", runs_per_arm=1, n_items=30, arms=("a", "b"),
                 metric={"name": "pass", "kind": "pass_at_k", "k": k, "higher_is_better": True})


def _samples(rng: np.random.Generator, n_items: int, per_item: int,
             p: np.ndarray) -> tuple[list[str], list[int], list[float]]:
    ids, sample, score = [], [], []
    for i in range(n_items):
        for s in range(per_item):
            ids.append(f"t{i:02d}")
            sample.append(s)
            score.append(float(rng.random() < p[i]))
    return ids, sample, score


def test_pass_at_k_is_the_unbiased_estimator(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _pass_at_k_plan(tmp_path)
    rng = np.random.default_rng(3)
    p = rng.beta(0.6, 1.2, size=30)
    drafts, want = [], {}
    for arm in ("a", "b"):
        ids, sample, score = _samples(rng, 30, 10, p)
        # the plan's metric is `pass`: a plan takes only runs of its metric (issue 13)
        drafts.append(_run(plan, arm, score, id=ids, sample=sample, metric="pass"))
        c = np.array(score).reshape(30, 10).sum(axis=1)
        # 1 - C(n - c, k) / C(n, k), the combinatorial formula
        want[arm] = float(np.mean([1 - math.comb(10 - int(ci), 5) / math.comb(10, 5)
                                   for ci in c]))
        pass1 = float(np.mean(score))
        assert want[arm] > pass1 + 0.1  # pass@5 is not the mean of the samples
    _append(tmp_path, drafts)
    rep = run_cli("report", "codegen", "--json").json
    for arm in rep["arms"]:
        assert arm["runs"][0]["score"] == pytest.approx(want[arm["name"]], abs=1e-12)
        assert arm["mean"] == pytest.approx(want[arm["name"]], abs=1e-12)


def test_pass_at_k_needs_k_samples(ledger_dir: Path, tmp_path: Path) -> None:
    r = run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(
        slug="no-k", metric={"name": "pass", "kind": "pass_at_k"}))))
    assert r.code == 2 and "metric.k" in r.err
    plan = _pass_at_k_plan(tmp_path, k=5)
    size = run_cli("log", "--json").json
    ids, sample, score = _samples(np.random.default_rng(1), 30, 3, np.full(30, 0.5))
    r = run_cli("append", str(write_json(tmp_path / "r.json",
                                         _run(plan, "a", score, id=ids, sample=sample,
                                              metric="pass"))))
    assert r.code == 2, r.err
    assert "has 3 sample(s), fewer than the plan's pass@k k=5" in r.err
    assert run_cli("log", "--json").json == size


def _clustered(tmp: Path) -> str:
    plan = _plan(tmp, slug="passages", runs_per_arm=1, n_items=300, arms=("a", "b"),
                 suite={"name": "rc", "version": "1", "n_items": 300,
                        "cluster_field": "passage"})
    rng = np.random.default_rng(7)
    difficulty = rng.beta(2, 2, size=60)  # five questions share each passage
    helps = rng.random(60) < 0.3  # and the treatment helps on some passages only
    drafts = []
    for arm in ("a", "b"):
        lift = np.where(helps, 0.3, 0.0) if arm == "b" else np.zeros(60)
        score = [float(rng.random() < min(1.0, difficulty[i // 5] + lift[i // 5]))
                 for i in range(300)]
        drafts.append(_run(plan, arm, score, cluster=[f"p{i // 5}" for i in range(300)]))
    _append(tmp, drafts)
    return plan


def test_clusters_reach_the_paired_effect_in_every_format(ledger_dir: Path,
                                                          tmp_path: Path) -> None:
    _clustered(tmp_path)
    rep = run_cli("report", "passages", "--json")
    assert rep.code == 0, rep.err
    e = rep.json["effects"][0]
    assert e["method"].startswith("paired-cluster-bootstrap")
    assert e["clusters"] == 60 and e["design_effect"] > 1
    for arm in rep.json["arms"]:
        assert arm["item_level"]["method"].startswith("cluster-bootstrap")
        assert arm["item_level"]["design_effect"] is not None
    text = run_cli("report", "passages").out
    assert "60 clusters, design effect" in text
    md = run_cli("report", "passages", "--markdown")
    assert md.code == 0 and "design effect" in md.out
    pytest.importorskip("matplotlib")
    html = run_cli("report", "passages", "--html", str(tmp_path / "r.html"))
    assert html.code == 0, html.err
    assert "design effect" in (tmp_path / "r.html").read_text()


def test_cluster_paired_bootstrap_against_a_reference_resampler() -> None:
    # reference: resample whole clusters of paired differences, literally
    rng = np.random.default_rng(11)
    g = 80
    sizes = rng.integers(2, 7, size=g)
    labels = np.repeat(np.arange(g), sizes)
    base = rng.beta(2, 2, size=g)[labels]
    a = (rng.random(labels.size) < base).astype(float)
    lift = np.where(rng.random(g) < 0.3, 0.5, 0.0)[labels]  # helps in some clusters only
    b = np.maximum(a, rng.random(labels.size) < lift).astype(float)
    d = b - a
    groups = [d[labels == c] for c in range(g)]
    ref_rng = np.random.default_rng(5)
    means = np.sort([np.concatenate([groups[i] for i in ref_rng.integers(0, g, g)]).mean()
                     for _ in range(4000)])
    ref = np.quantile(means, [0.025, 0.975])
    est = stats.paired(a, b, clusters=labels.tolist(), bootstrap_method="percentile",
                       n_resamples=4000)
    # two independent Monte Carlo estimates of the same quantiles: their sd is about
    # sd(means) * sqrt(2 * 0.025 * 0.975 / 4000) / density; allow 4 of them (~ 0.006)
    sd = float(np.std(means))
    assert abs(est.low - ref[0]) < 0.25 * sd and abs(est.high - ref[1]) < 0.25 * sd
    naive = stats.paired(a, b, bootstrap_method="percentile", n_resamples=4000)
    assert est.high - est.low > naive.high - naive.low  # clusters widen it here


def test_text_prints_points_and_never_p_zero(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="big-lift", runs_per_arm=1, n_items=400, arms=("a", "b"))
    rng = np.random.default_rng(2)
    base = rng.random(400) < 0.4
    lifted = base | (rng.random(400) < 0.5)
    _append(tmp_path, [_run(plan, "a", base.astype(float).tolist()),
                       _run(plan, "b", lifted.astype(float).tolist())])
    text = run_cli("report", "big-lift").out
    assert "p < 0.0001" in text and "p=0)" not in text and "p=0," not in text
    # the verdict's thresholds and observed values are in points, like the effect line
    assert "effect_low > -5 points — observed" in text
    observed = float(re.search(r"effect_low > -5 points — observed (\S+)", text).group(1))
    eff = run_cli("report", "big-lift", "--json").json["effects"][0]
    # printed with the digits the effect's interval supports (issue 33: the rule of A13)
    digits = stats.decimals_supported(eff["low"], eff["high"], 100)
    assert observed == pytest.approx(eff["low"] * 100, abs=0.5 * 10**-digits + 1e-9)


def test_welch_says_over_runs(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="welch-runs", runs_per_arm=3, n_items=50, arms=("a", "b"),
                 analysis="welch")
    drafts = []
    for arm, ps in (("a", (0.6, 0.62, 0.58)), ("b", (0.64, 0.66, 0.7))):
        for k, p in enumerate(ps):
            right = round(p * 50)
            drafts.append(_run(plan, arm, [1.0] * right + [0.0] * (50 - right), seed=k))
    _append(tmp_path, drafts)
    text = run_cli("report", "welch-runs").out
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("b − a"))
    assert "over 6 runs" in line and "paired items" not in line


def test_sampled_items_show_both_variance_components(ledger_dir: Path,
                                                     tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="sampled", runs_per_arm=1, n_items=40, arms=("a", "b"))
    rng = np.random.default_rng(4)
    p = rng.beta(1, 1, size=40)
    drafts, pooled = [], {}
    for arm in ("a", "b"):
        ids, sample, score = _samples(rng, 40, 4, p)
        drafts.append(_run(plan, arm, score, id=ids, sample=sample))
        pooled[arm] = (score, ids)
    _append(tmp_path, drafts)
    rep = run_cli("report", "sampled", "--json").json
    for arm in rep["arms"]:
        want = stats.variance_components(pooled[arm["name"]][0], pooled[arm["name"]][1])
        sc = arm["samples"]
        assert sc["k"] == 4 and sc["n_items"] == 40
        assert (sc["between"], sc["within"]) == pytest.approx((want.between, want.within))
    text = run_cli("report", "sampled").out
    assert "samples: k=4 per item over 40 items: sd between items" in text


def test_spread_between_seeds_and_items_in_quadrature(ledger_dir: Path,
                                                      tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="seeds", runs_per_arm=5, n_items=60, arms=("a", "b"),
                 total_spread=True)
    drafts, scores = [], []
    for k, acc in enumerate((0.717, 0.800, 0.733, 0.700, 0.750)):  # 003's five seeds
        right = round(acc * 60)
        score = [1.0] * right + [0.0] * (60 - right)
        drafts.append(_run(plan, "a", score, seed=k))
        drafts.append(_run(plan, "b", score, seed=k))
        scores.append(score)
    _append(tmp_path, drafts)
    sp = run_cli("report", "seeds", "--json").json["arms"][0]["spread"]
    means = [sum(s) / 60 for s in scores]
    seeds = float(np.std(means, ddof=1))
    items = math.sqrt(np.mean([np.var(s, ddof=1) / 60 for s in scores]))
    assert (sp["seeds"], sp["items"]) == pytest.approx((seeds, items))
    assert sp["total"] == pytest.approx(math.hypot(seeds, items))
    assert 0.03 < sp["seeds"] < 0.045 and 0.05 < sp["items"] < 0.06  # 003: 0.038 and 0.052
    assert "in quadrature" in run_cli("report", "seeds").out


def test_a_perfect_run_gets_wilson_not_a_point(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="perfect", runs_per_arm=1, n_items=200, arms=("a", "b"),
                 success=[{"stat": "mean_low", "op": ">", "value": 0.99, "arm": "b"}],
                 failure=[])
    _append(tmp_path, [_run(plan, "a", [1.0] * 200), _run(plan, "b", [1.0] * 200)])
    rep = run_cli("report", "perfect", "--json").json
    for arm in rep["arms"]:
        iv = arm["runs"][0]["interval"]
        assert iv["method"] == "wilson" and iv["low"] == pytest.approx(0.9812, abs=1e-4)
    # 200 of 200 does not show a mean above 99% with 95% confidence
    assert rep["verdict"]["success"][0]["holds"] is False
