"""Issue 33 through `logbook report`, `claim` and `audit` as a user runs them: the verdict's
sentence when the interval excludes zero, the effect over items and runs, a cluster column the
plan does not name, and report lines quoted in claims without an A13 finding."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from builders import draft, plan_body, write_json, write_jsonl
from conftest import run_cli


def _plan(tmp: Path, **kw: Any) -> None:
    r = run_cli("plan", str(write_json(tmp / "plan.json", plan_body(**kw))), "--json")
    assert r.code == 0, r.err


def _append(tmp: Path, drafts: list[dict[str, Any]]) -> None:
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / "runs.jsonl", drafts)), "--json")
    assert r.code == 0, r.err


def _run(arm: str, scores: list[float], seed: int, **outcomes: Any) -> dict[str, Any]:
    return draft("run", {
        "plan": "pp", "arm": arm, "status": "completed", "session": "s1",
        "apparatus": {"model": "m", "kv_cache_precision": arm,
                      "decoding": {"temperature": 0.0, "seed": seed}},
        "outcomes": {"metric": "acc", "id": [f"q{i:03d}" for i in range(len(scores))],
                     "score": scores, **outcomes}})


def _scores(rng: random.Random, p: list[float]) -> list[float]:
    return [float(rng.random() < x) for x in p]


def test_a_detected_difference_that_misses_the_criterion_is_said_so(
        ledger_dir: Path, tmp_path: Path) -> None:
    _plan(tmp_path, slug="pp", runs_per_arm=1, n_items=400,
          success=[{"stat": "effect_low", "op": ">", "value": 0.3}],
          failure=[{"stat": "effect_high", "op": "<", "value": -0.05}])
    rng = random.Random(1)
    _append(tmp_path, [_run("f16", _scores(rng, [0.5] * 400), 0),
                       _run("q8", _scores(rng, [0.7] * 400), 1)])
    rep = run_cli("report", "pp", "--json").json
    eff = rep["effects"][0]
    assert eff["low"] > 0  # the interval excludes zero by far
    wording = rep["verdict"]["wording"]
    assert rep["verdict"]["status"] == "inconclusive"
    assert wording.startswith("inconclusive: a difference of +"), wording
    assert "was detected, but the success criterion effect_low > 30 points does not hold" in \
        wording
    assert "indistinguishable" not in wording
    # one run per arm: the report says the interval is item-level only
    assert "run-to-run noise is unmeasured" in eff["runs_note"]
    assert "run-to-run noise is unmeasured" in run_cli("report", "pp").out


def test_an_interval_including_zero_is_indistinguishable_with_the_paired_detectable_effect(
        ledger_dir: Path, tmp_path: Path) -> None:
    _plan(tmp_path, slug="pp", runs_per_arm=2, n_items=300)
    rng = random.Random(2)
    item = [rng.random() for _ in range(300)]
    drafts = [_run(arm, _scores(rng, item), k) for k in range(2) for arm in ("f16", "q8")]
    _append(tmp_path, drafts)
    rep = run_cli("report", "pp", "--json").json
    eff = rep["effects"][0]
    assert eff["method"] == "paired-runs-t" and eff["low"] < 0 < eff["high"]
    assert eff["df"] > 1 and "se_runs" in eff
    v = rep["verdict"]
    if v["status"] == "inconclusive":
        assert "indistinguishable" in v["wording"]
        # the detectable effect is that of the interval used (paired, runs included)
        half = (eff["high"] - eff["low"]) / 2
        assert abs(v["min_detectable_effect"] - half * (1.959964 + 0.841621) / 1.959964) < 1e-4


def test_an_unnamed_cluster_column_is_warned_and_found(ledger_dir: Path,
                                                       tmp_path: Path) -> None:
    _plan(tmp_path, slug="pp", runs_per_arm=2, n_items=200)
    rng = random.Random(3)
    ease = [rng.random() for _ in range(40)]
    labels = [f"passage-{i // 5}" for i in range(200)]
    drafts = []
    for k in range(2):
        for arm in ("f16", "q8"):
            p = [0.05 + 0.9 * ease[i // 5] for i in range(200)]
            drafts.append(_run(arm, _scores(rng, p), k, cluster=labels))
    _append(tmp_path, drafts)
    text = run_cli("report", "pp").out
    assert "WARNING: q8 − f16: the runs record a cluster column (40 clusters)" in text, text
    audit = run_cli("audit", "--json")
    rules = [f["check"] for f in audit.json["findings"]]
    assert "A26" in rules


def test_report_lines_quoted_in_claims_pass_a13(ledger_dir: Path, tmp_path: Path) -> None:
    _plan(tmp_path, slug="pp", runs_per_arm=3, n_items=200)
    rng = random.Random(4)
    item = [rng.random() for _ in range(200)]
    drafts = [_run(arm, _scores(rng, item), k) for k in range(3) for arm in ("f16", "q8")]
    _append(tmp_path, drafts)
    text = run_cli("report", "pp").out
    effect_line = next(ln.split(": ", 1)[1].split(" (")[0] for ln in text.splitlines()
                       if ln.strip().startswith("q8 − f16:"))
    lines = [ln.strip()[len("line: "):] for ln in text.splitlines()
             if ln.strip().startswith("line:")]
    arm_line = lines[-1]  # the treatment's, the last arm
    r = run_cli("claim", "pp", "--effect", "q8", "--statement",
                f"q8 − f16 in points: {effect_line}")
    assert r.code == 0, r.err
    r = run_cli("claim", "pp", "--arm", "q8", "--statement", f"q8 scores {arm_line}")
    assert r.code == 0, r.err
    audit = run_cli("audit", "--json")
    findings = audit.json["findings"]
    assert not [f for f in findings if f["check"] in ("A13", "A02")], findings


def test_mean_metric_rows_print_the_digits_their_intervals_support(
        ledger_dir: Path, tmp_path: Path) -> None:
    from logbook import stats

    _plan(tmp_path, slug="pp", runs_per_arm=1, n_items=400,
          metric={"name": "acc", "kind": "mean", "higher_is_better": True},
          success=[{"stat": "effect_low", "op": ">", "value": -0.05}],
          failure=[{"stat": "effect_high", "op": "<", "value": -0.05}])
    rng = random.Random(6)
    _append(tmp_path, [_run(arm, [rng.choice([0.5, 0.75, 1.0]) for _ in range(400)], k)
                       for k, arm in enumerate(("f16", "q8"))])
    rep = run_cli("report", "pp", "--json").json
    text = run_cli("report", "pp").out
    for arm in rep["arms"]:
        row = arm["runs"][0]
        iv = row["interval"]
        digits = stats.decimals_supported(iv["low"], iv["high"], 1)
        assert digits >= 2  # ±0.02 on 400 items: 0.75, not 0.8
        shown = f"{row['score']:.{digits}f}"
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(f"@{row['seq']} "))
        assert line.split()[2] == shown, line
