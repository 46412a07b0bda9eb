"""claim, claim check, compare, power and band through the public commands (issue 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import draft, plan_body, write_json, write_jsonl
from conftest import run_cli
from test_report import _run_with_score


def _setup(tmp: Path, runs: int = 3) -> str:
    r = run_cli("plan", str(write_json(tmp / "p.json", plan_body(runs_per_arm=runs,
                                                                   n_items=200))), "--json")
    assert r.code == 0, r.err
    plan = r.json["digest"]
    drafts = []
    for i in range(runs):
        drafts.append(_run_with_score(plan, "f16", 0.70 + 0.01 * i, 200, i))
        drafts.append(_run_with_score(plan, "q8", 0.69 + 0.01 * i, 200, 50 + i))
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / "r.jsonl", drafts)), "--json")
    assert r.code == 0, r.err
    return plan


def test_claim_records_figure_runs_and_root(ledger_dir: Path, tmp_path: Path) -> None:
    _setup(tmp_path)
    size = len(run_cli("log", "--json").json)
    r = run_cli("claim", "kv-q8-vs-f16", "--arm", "f16", "--statement", "f16 scores 71",
                "--json")
    assert r.code == 0, r.err
    body = r.json["entry"]["body"]
    assert body["figure"] == "arm_mean" and body["arm"] == "f16"
    assert body["value"] == __import__("pytest").approx(0.71)
    assert len(body["runs"]) == 3 and body["ledger_size"] == size
    assert len(body["ledger_root"]) == 64
    check = run_cli("claim", "check", r.json["digest"], "--json")
    assert check.code == 0 and check.json["stands"] is True


def test_claim_check_sees_retraction_and_new_runs(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _setup(tmp_path)
    r = run_cli("claim", "kv-q8-vs-f16", "--statement", "q8 costs a point", "--json")
    assert r.code == 0, r.err
    claim = r.json["digest"]
    assert r.json["entry"]["body"]["figure"] == "effect"
    runs = r.json["entry"]["body"]["runs"]
    assert run_cli("retract", runs[0], "--reason", "bad seed", "--category", "other").code == 0
    extra = _run_with_score(plan, "q8", 0.5, 200, 99)
    assert run_cli("append", str(write_json(tmp_path / "x.json", extra))).code == 0
    check = run_cli("claim", "check", claim, "--json")
    assert check.code == 1
    assert check.json["retracted_runs"] == [runs[0]]
    assert len(check.json["new_runs"]) == 1
    assert check.json["stands"] is False
    text = run_cli("claim", "check", claim)
    assert "DOES NOT STAND" in text.out


def test_hand_made_claim_must_match_the_tree(ledger_dir: Path, tmp_path: Path) -> None:
    _setup(tmp_path)
    good = run_cli("claim", "kv-q8-vs-f16", "--statement", "x", "--json").json["entry"]["body"]
    bad = dict(good, ledger_root="ab" * 32)
    r = run_cli("append", str(write_json(tmp_path / "c.json", draft("claim", bad))))
    assert r.code == 2 and "ledger_root" in r.err
    bad = dict(good, ledger_size=10_000)
    r = run_cli("append", str(write_json(tmp_path / "c.json", draft("claim", bad))))
    assert r.code == 2 and "ledger_size" in r.err
    r = run_cli("append", str(write_json(tmp_path / "c.json", draft("claim", good))))
    assert r.code == 0, r.err


def _arm_runs(cli_json: Any, arm: str) -> list[dict[str, Any]]:
    return [r for r in cli_json if r["arm"] == arm]


def test_compare_lists_confounds_left_out_and_historical(ledger_dir: Path,
                                                         tmp_path: Path) -> None:
    plan = _setup(tmp_path)
    # a q8 run from another session on a different engine build
    other = _run_with_score(plan, "q8", 0.69, 200, 77, session="s2")
    other["body"]["apparatus"]["engine_build"] = "b9999"
    assert run_cli("append", str(write_json(tmp_path / "o.json", other))).code == 0
    r = run_cli("compare", "kv-q8-vs-f16:f16", "kv-q8-vs-f16:q8,session:s2",
                "--variable", "kv_cache_precision", "--json")
    assert r.code == 2 and "--variable kv_cache_precision: no selected run" in r.err  # a typo
    r = run_cli("compare", "kv-q8-vs-f16:f16", "kv-q8-vs-f16:q8,session:s2",
                "--variable", "model", "--json")
    assert r.code == 0, r.err
    res = r.json
    assert "engine_build" in res["confounds"]
    assert res["historical_baseline"] is True
    assert len(res["left_out"]) == 3  # the s1 q8 runs: narrowed, never hidden
    r = run_cli("compare", "kv-q8-vs-f16:f16", "kv-q8-vs-f16:q8,session:s1",
                "--variable", "model", "--variable", "engine_build", "--json")
    res = r.json
    assert res["confounds"] == {} and res["historical_baseline"] is False
    assert res["verdict"].startswith("indistinguishable")
    text = run_cli("compare", "kv-q8-vs-f16:f16", "kv-q8-vs-f16:q8,session:s2").out
    assert text.index("CONFOUNDS") < text.index("effect")


def test_compare_bad_selector(ledger_dir: Path, tmp_path: Path) -> None:
    _setup(tmp_path)
    r = run_cli("compare", "kv-q8-vs-f16:bf16", "session:s1")
    assert r.code == 2 and "bf16" in r.err
    r = run_cli("compare", "nonsense", "session:s1")
    assert r.code == 2 and "nonsense" in r.err


def test_power_and_plan_warning(ledger_dir: Path, tmp_path: Path) -> None:
    r = run_cli("power", "--p", "0.7", "--delta", "0.05", "--json")
    assert r.code == 0 and r.json["items_needed"] > 100
    n = r.json["items_needed"]
    r = run_cli("power", "--p", "0.7", "--n", str(n), "--json")
    assert abs(r.json["min_detectable_effect"] - 0.05) < 0.005
    assert run_cli("power", "--p", "0.7").code == 2
    assert run_cli("power", "--p", "1.5", "--n", "100").code == 2
    weak = plan_body(slug="too-small", n_items=50)
    weak["min_effect"] = 0.01
    r = run_cli("plan", str(write_json(tmp_path / "w.json", weak)))
    # on the display scale, as every text output (issue 15): 0.01 is 1 point
    assert r.code == 0 and "warning" in r.err and "min_effect 1 points" in r.err
    tiny = plan_body(slug="tiny", n_items=4)  # too few items to detect anything: warned too
    r = run_cli("plan", str(write_json(tmp_path / "t.json", tiny)))
    assert r.code == 0 and "4 items cannot detect any effect at 80% power" in r.err, r.err
    strong = plan_body(slug="big-enough", n_items=100_000)
    r = run_cli("plan", str(write_json(tmp_path / "s.json", strong)))
    assert r.code == 0 and "warning" not in r.err


def test_band_needs_five_identical_runs(ledger_dir: Path, tmp_path: Path) -> None:
    plan = _setup(tmp_path, runs=5)
    r = run_cli("band", "kv-q8-vs-f16:f16", "--json")
    assert r.code == 0, r.err
    body = r.json["entry"]["body"]
    assert body["k"] == 5 and body["band"] == __import__("pytest").approx(2 * body["sd"])
    r = run_cli("band", "kv-q8-vs-f16:q8,session:nope")
    assert r.code == 2 and "matches no run" in r.err
    r = run_cli("band", "kv-q8-vs-f16:q8,decoding.seed=50")  # one run: too few for a band
    assert r.code == 2 and "at least 5" in r.err, r.err
    drifted = _run_with_score(plan, "f16", 0.7, 200, 9)
    drifted["body"]["apparatus"]["engine_build"] = "other"
    assert run_cli("append", str(write_json(tmp_path / "d.json", drifted))).code == 0
    r = run_cli("band", "kv-q8-vs-f16:f16")
    assert r.code == 2 and "engine_build" in r.err


def test_band_prints_its_figures_and_warns_below_eight(ledger_dir: Path,
                                                       tmp_path: Path) -> None:
    _setup(tmp_path, runs=5)
    r = run_cli("band", "kv-q8-vs-f16:f16")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].endswith(" band")
    assert lines[1].startswith("k=5 runs, mean ") and "sd " in lines[1]
    assert "(itself uncertain by about ±35%)" in lines[1]  # 1 / sqrt(2 (k - 1))
    assert "band ±" in lines[1] and " points (2 sd), range " in lines[1]
    assert lines[2].startswith("stamped with evaluator config hash")
    assert "a band from 5 runs is rough" in r.err and "measure at least 8" in r.err
