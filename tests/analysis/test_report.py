"""Reports over the whole ledger (issue 7): scenarios built from the numbers in the sources."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from builders import draft, plan_body, write_json, write_jsonl
from conftest import run_cli


def _plan(tmp: Path, **kw: Any) -> str:
    r = run_cli("plan", str(write_json(tmp / "plan.json", plan_body(**kw))), "--json")
    assert r.code == 0, r.err
    return r.json["digest"]


def _runs(tmp: Path, drafts: list[dict[str, Any]]) -> list[str]:
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / "runs.jsonl", drafts)), "--json")
    assert r.code == 0, r.err
    rows = r.json if isinstance(r.json, list) else [r.json]
    return [row["digest"] for row in rows]


def _run_with_score(plan: str, arm: str, score: float, n: int, seed: int,
                    session: str = "s1") -> dict[str, Any]:
    """A run of n items whose mean is exactly `score` (a multiple of 1/n)."""
    k = round(score * n)
    rng = random.Random(seed)
    correct = set(rng.sample(range(n), k))
    return draft("run", {
        "plan": plan, "arm": arm, "status": "completed", "session": session,
        "apparatus": {"model": "m", "engine": "vllm", "engine_build": arm,
                      "decoding": {"temperature": 0.0, "seed": seed}},
        "outcomes": {"metric": "acc", "id": [f"q{i}" for i in range(n)],
                     "score": [1.0 if i in correct else 0.0 for i in range(n)]}})


def _report(slug: str) -> dict[str, Any]:
    r = run_cli("report", slug, "--json")
    assert r.code == 0, r.err
    return r.json


@pytest.mark.parametrize("old,new,status", [
    # new engine build vs old: indistinguishable at this suite and run budget
    ([88.1, 86.9, 88.4, 87.2, 88.0], [85.4, 87.9, 86.1, 88.2, 86.8], "inconclusive"),
    # a regression
    ([88.0, 87.8, 88.3, 87.9, 88.1], [84.9, 85.3, 84.6, 85.1, 84.8], "failure"),
])
def test_engine_build_scenarios(ledger_dir: Path, tmp_path: Path, old: list[float],
                                new: list[float], status: str) -> None:
    plan = _plan(tmp_path, slug="engine-build", arms=("old", "new"), runs_per_arm=5,
                 n_items=1000, analysis="welch", variable=["engine_build"],
                 success=[{"stat": "effect_low", "op": ">", "value": -0.01}],
                 failure=[{"stat": "effect_high", "op": "<", "value": -0.01}])
    drafts = []
    for i, (o, n) in enumerate(zip(old, new, strict=True)):
        drafts.append(_run_with_score(plan, "old", o / 100, 1000, seed=i))
        drafts.append(_run_with_score(plan, "new", n / 100, 1000, seed=100 + i))
    _runs(tmp_path, drafts)
    rep = _report("engine-build")
    assert rep["verdict"]["status"] == status
    eff = rep["effects"][0]
    assert eff["method"].startswith("welch")
    assert eff["point"] == pytest.approx((sum(new) - sum(old)) / 500, abs=1e-9)
    # one method: the interval excludes zero exactly when its p-value is below alpha
    assert (eff["low"] > 0 or eff["high"] < 0) == (eff["pvalue"] < 0.05)
    if status == "inconclusive":
        assert "indistinguishable at this suite and run budget" in rep["verdict"]["wording"]
        assert eff["low"] < 0 < eff["high"]
    else:
        assert eff["high"] < -0.01
    text = run_cli("report", "engine-build").out
    assert rep["verdict"]["wording"].split(";")[0] in text


def _paired_runs(plan: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Three interleaved runs per arm on 300 shared items, about 1.5% of requests failed."""
    rng = random.Random(42)
    n = 300
    base = [rng.random() < 0.7 for _ in range(n)]
    helped = {i for i in range(n) if not base[i] and rng.random() < 0.2}  # treatment fixes some
    drafts, missing = [], {}
    for k in range(3):
        for arm in ("control", "treatment"):
            score: list[float | None] = []
            error: list[str | None] = []
            for i in range(n):
                right = base[i] or (arm == "treatment" and i in helped)
                if rng.random() < 0.04:  # run-to-run noise: a few answers flip
                    right = not right
                if rng.random() < 0.015:
                    score.append(None)
                    error.append("HTTP 429 after retries")
                else:
                    score.append(1.0 if right else 0.0)
                    error.append(None)
            d = draft("run", {
                "plan": plan, "arm": arm, "status": "completed", "session": "s1",
                "apparatus": {"model": "m", "kv_cache_precision": arm,
                              "decoding": {"temperature": 0.0, "seed": k}},
                "outcomes": {"metric": "acc", "id": [f"q{i:03d}" for i in range(n)],
                             "score": score, "error": error}})
            missing[f"{arm}{k}"] = sum(s is None for s in score)
            drafts.append(d)
    return drafts, missing


def test_paired_effect_with_missing_items(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="paired-three", arms=("control", "treatment"), runs_per_arm=3,
                 n_items=300)
    drafts, missing = _paired_runs(plan)
    _runs(tmp_path, drafts)
    rep = _report("paired-three")
    arms = {a["name"]: a for a in rep["arms"]}
    for name in ("control", "treatment"):
        for k, row in enumerate(arms[name]["runs"]):
            assert row["missing"] == missing[f"{name}{k}"]
            assert row["missing"] > 0
            scores = drafts[2 * k + (name == "treatment")]["body"]["outcomes"]["score"]
            present = [s for s in scores if s is not None]
            # missing items are not scored as zero: the mean is over the scored items
            assert row["score"] == pytest.approx(sum(present) / len(present))
            assert row["missing_rate"] == pytest.approx(row["missing"] / 300)
    eff = rep["effects"][0]
    assert eff["low"] > 0, eff
    assert (eff["pvalue"] < 0.05)
    # every single run's item-level interval is wider than the effect itself
    for a in arms.values():
        for row in a["runs"]:
            assert row["interval"]["high"] - row["interval"]["low"] > eff["point"]
    # items are averaged over the arm's runs first, so an item is dropped only when every run
    # of an arm missed it; but the worst case counts every missing item-run (issue 15):
    # control's missing answers imputed right, treatment's wrong, then averaged per item
    assert eff["n_dropped"] == 0
    wc = eff["worst_case"]
    assert wc["missing"] == sum(missing.values()) > 0
    def imputed(arm: str, fill: float) -> list[float]:
        rows = [d["body"]["outcomes"]["score"] for d in drafts if d["body"]["arm"] == arm]
        return [sum(fill if r[i] is None else r[i] for r in rows) / 3 for i in range(300)]
    worst = sum(t - c for t, c in zip(imputed("treatment", 0.0), imputed("control", 1.0),
                                      strict=True)) / 300
    best = sum(t - c for t, c in zip(imputed("treatment", 1.0), imputed("control", 0.0),
                                     strict=True)) / 300
    assert (wc["low"], wc["high"]) == pytest.approx((worst, best))
    assert wc["low"] < eff["point"] < wc["high"]


def test_incomplete_plan(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="five-planned", runs_per_arm=5)
    drafts = [_run_with_score(plan, arm, 0.7, 50, seed=i)
              for i in range(3) for arm in ("f16", "q8")]
    _runs(tmp_path, drafts)
    rep = _report("five-planned")
    assert rep["verdict"]["status"] == "incomplete"
    assert "f16 3/5" in rep["verdict"]["wording"]


def test_failed_and_retracted_runs_are_shown(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="with-failures", runs_per_arm=2, n_items=100)  # the runs' 100
    drafts = [_run_with_score(plan, "f16", 0.70, 100, 1), _run_with_score(plan, "q8", 0.72, 100, 2),
              _run_with_score(plan, "f16", 0.74, 100, 3), _run_with_score(plan, "q8", 0.20, 100, 4),
              _run_with_score(plan, "q8", 0.71, 100, 5)]
    failed = draft("run", {"plan": plan, "arm": "q8", "status": "failed",
                           "reason": "engine OOM", "apparatus": {"model": "m"}})
    digests = _runs(tmp_path, [*drafts, failed])
    bad = digests[3]
    r = run_cli("retract", bad, "--reason", "prompt template was wrong", "--category",
                "harness_defect")
    assert r.code == 0, r.err
    rep = _report("with-failures")
    q8 = next(a for a in rep["arms"] if a["name"] == "q8")
    statuses = [(row["status"], row["retracted"]) for row in q8["runs"]]
    assert ("failed", False) in statuses and ("completed", True) in statuses
    assert q8["completed"] == 2 and q8["failed"] == 1 and q8["retracted"] == 1
    assert q8["run_level"]["mean"] == pytest.approx((0.72 + 0.71) / 2)
    assert rep["excluded"][0]["digest"] == bad
    assert "prompt template was wrong" in rep["excluded"][0]["reason"]
    text = run_cli("report", "with-failures").out
    assert "RETRACTED" in text and "failed" in text and "engine OOM" in text
    md = run_cli("report", "with-failures", "--markdown")
    assert md.code == 0 and "| seq |" in md.out


def test_reporting_line_and_apparatus_differences(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="line", runs_per_arm=2, n_items=200)
    d1 = _run_with_score(plan, "f16", 0.84, 200, 1)
    d2 = _run_with_score(plan, "f16", 0.85, 200, 2)
    d2["body"]["apparatus"]["engine_build"] = "b1240"  # drifted between runs of one arm
    for d in (d1, d2):
        d["body"]["apparatus"].update({"kv_cache_precision": "f16",
                                       "hardware": {"gpu": "3×GPU"}})
    _runs(tmp_path, [d1, d2])
    rep = _report("line")
    f16 = next(a for a in rep["arms"] if a["name"] == "f16")
    assert "engine_build" in f16["differing_apparatus"]
    assert "decoding.seed" not in f16["differing_apparatus"]  # per-run identity
    assert f16["line"].startswith("84") and "over 2 runs" in f16["line"]
    assert "n=200" in f16["line"] and "greedy" in f16["line"] and "f16 KV" in f16["line"]
    assert "3×GPU" in f16["line"]


@pytest.mark.parametrize("machine,shown", [
    ({}, None),  # no GPU known on the machine: the device asked for is not printed
    ({"hardware": {"gpu": "NVIDIA H100 80GB"}}, "NVIDIA H100 80GB, cuda:0 requested"),
    ({"captured": {"gpus": [{"name": "NVIDIA L4"}, {"name": "NVIDIA L4"}]}},
     "2 x NVIDIA L4, cuda:0 requested"),
])
def test_reporting_line_prints_a_requested_device_only_beside_a_gpu_the_machine_has(
        ledger_dir: Path, tmp_path: Path, machine: dict[str, Any], shown: str | None) -> None:
    plan = _plan(tmp_path, slug="device", runs_per_arm=1, n_items=50)
    d = _run_with_score(plan, "f16", 0.8, 50, 1)
    d["body"]["apparatus"].update({"placement": {"requested": "cuda:0"}, **machine})
    _runs(tmp_path, [d])
    line = next(a for a in _report("device")["arms"] if a["name"] == "f16")["line"]
    if shown is None:
        assert "cuda" not in line and line.endswith("greedy, engine f16"), line
    else:
        assert line.endswith(shown), line


def test_strict_exits_1_unless_success(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="strict", runs_per_arm=3)
    _runs(tmp_path, [_run_with_score(plan, "f16", 0.7, 50, 1)])
    assert run_cli("report", "strict", "--strict").code == 1
    assert run_cli("report", "strict").code == 0


def test_report_json_matches_its_schema(ledger_dir: Path, tmp_path: Path) -> None:
    import json

    jsonschema = pytest.importorskip("jsonschema")
    plan = _plan(tmp_path, slug="schema", runs_per_arm=2)
    _runs(tmp_path, [_run_with_score(plan, a, 0.7, 50, i) for i in range(2)
                     for a in ("f16", "q8")])
    rep = _report("schema")
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "report.json").read_text())
    jsonschema.validate(rep, schema)
    for key in ("plan", "arms", "effects", "verdict", "line", "excluded"):
        assert key in rep


def test_a_retracted_amendment_no_longer_applies(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _plan(tmp_path, slug="amended", runs_per_arm=1)
    _runs(tmp_path, [_run_with_score(plan, a, 0.7, 50, i) for i, a in enumerate(("f16", "q8"))])
    r = run_cli("amend", "amended", "--set", "runs_per_arm=3", "--reason", "more runs", "--json")
    assert r.code == 0, r.err
    assert _report("amended")["verdict"]["status"] == "incomplete"
    assert run_cli("retract", r.json["digest"], "--reason", "changed our mind", "--category",
                   "other").code == 0
    rep = _report("amended")
    assert rep["arms"][0]["planned_runs"] == 1
    assert rep["verdict"]["status"] != "incomplete"
    assert run_cli("brief", "--json").json["open_plans"] == []


def test_report_shows_the_band_of_each_arms_apparatus(ledger_dir: Path, tmp_path: Path) -> None:
    # issue 7: reports use the latest band measured on the arm's apparatus (whose stamp, the
    # evaluator config hash, is part of that apparatus), and name the runs outside it.
    from test_audit import append, calibrated_band, honest_runs, make_plan

    band = calibrated_band(tmp_path)
    plan = make_plan(tmp_path, runs=3)
    append(tmp_path, honest_runs(plan, treatment=(0.72, 0.74, 0.70)))
    r = run_cli("report", "kv", "--json")
    assert r.code == 0, r.err
    arms = {a["name"]: a for a in r.json["arms"]}
    assert arms["f16"]["band"] is None  # no band was measured on the f16 apparatus
    b = arms["q8"]["band"]
    assert (b["seq"], b["digest"], b["k"]) == (band["seq"], band["digest"], 5)
    assert b["mean"] == pytest.approx(0.71) and b["band"] == pytest.approx(0.02)
    q8_seqs = [row["seq"] for row in arms["q8"]["runs"]]
    assert b["outside"] == [q8_seqs[1]]  # 0.74 lies outside 0.71 ± 0.02; 0.72, 0.70 do not
    text = run_cli("report", "kv").out
    assert f"band of this apparatus: 71.00 ± 2.00 (sd 1.00 over 5 runs, @{b['seq']}); " \
           f"outside it: @{q8_seqs[1]}" in text
