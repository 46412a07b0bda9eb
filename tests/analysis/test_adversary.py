"""The audit against an adversary (issue 33, item 4): strategies that adapt to the rules are
flagged, and their honest twins are not (tests/adversary.py; the same measured at a
larger size by benchmarks/audit_calibration.py). Each strategy's ledger is written through
the public Python API on data of persistent item difficulty, run noise and missingness that
varies by run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from adversary import ADVERSARY, HONEST, Sim, World, worlds

from logbook.calibration.book import Book

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from audit_calibration import FALSE_ALARM_MAX, POWER_MIN, adversarial_parts

# the rule each strategy is meant to meet (others may fire too)
MEETS = {
    "retract-worst": "A22", "retract-control-best": "A22", "retract-as-they-land": "A22",
    "retract-midway": "A22", "stop-early": "A27", "drop-hard-items": "A08",
    "null-hard-items": "A08", "peek-partial": "A03", "deny-failure": "A10",
    "quote-best-bare": "A02", "rerun-until": "A22", "change-judge": "A28",
}
WORLD = World(n=400, k=4, p=0.7, effect=0.1, run_sd=0.15, spread=1.0, missing=0.005, seed=3)


def played(tmp_path: Path, name: str, world: World = WORLD) -> list[Any]:
    play = ADVERSARY.get(name) or HONEST[name]
    with Book(tmp_path / name) as book:
        play(Sim(book, world))
        return [f for f in book.audit() if f.severity in ("warning", "error")]


def test_every_strategy_names_the_rule_it_meets() -> None:
    assert set(MEETS) == set(ADVERSARY)


@pytest.mark.parametrize("name", sorted(ADVERSARY))
def test_each_strategy_is_flagged(tmp_path: Path, name: str) -> None:
    found = played(tmp_path, name)
    assert MEETS[name] in {f.check for f in found}, [(f.check, f.message) for f in found]


@pytest.mark.parametrize("name", sorted(HONEST))
def test_each_honest_twin_is_quiet(tmp_path: Path, name: str) -> None:
    for j, world in enumerate(worlds(3, 11)):
        found = played(tmp_path / str(j), name, world)
        assert not found, (name, j, [(f.check, f.message) for f in found])


def test_the_retractions_are_judged_whatever_the_plan_state(tmp_path: Path) -> None:
    """Half a plan, its treatment's worst run withdrawn, no claim: A22 (it used to wait for a
    verdict)."""
    found = [f for f in played(tmp_path, "retract-midway") if f.check == "A22"]
    assert found and "with the same apparatus still count" in found[0].message


def test_stopping_early_is_claimed_before_the_plan_was_done(tmp_path: Path) -> None:
    found = [f for f in played(tmp_path, "stop-early") if f.check == "A27"]
    assert found and "of 8 planned runs done" in found[0].message
    assert found[0].severity == "error"


def test_a_judge_changed_mid_plan(tmp_path: Path) -> None:
    found = [f for f in played(tmp_path, "change-judge") if f.check == "A28"]
    assert found and "evaluator." in found[0].message
    assert not [f for f in played(tmp_path / "twin", "one-judge") if f.check == "A28"]


def test_the_same_items_left_out_are_found_within_the_limit(tmp_path: Path) -> None:
    found = [f for f in played(tmp_path, "null-hard-items") if f.check == "A08"]
    assert any("are missing from every run of q8 and from no run" in f.message for f in found)
    assert not any("more than the plan's limit" in f.message for f in found)  # within it


def test_a_denial_in_other_words_is_no_mention(tmp_path: Path) -> None:
    from logbook.analysis.audit.rules.claims import counts_failures

    for said in ("no run failed", "all runs completed cleanly", "every run finished",
                 "without a single failure", "zero failures", "not a single run failed"):
        assert not counts_failures(f"q8 is within 2 points; {said}"), said
    for said in ("1 q8 run failed (CUDA OOM) and was re-run", "a 4th failed (CUDA OOM)",
                 "two aborted runs were dropped", "failures: 2", "the failed run @7"):
        assert counts_failures(f"q8 is within 2 points; {said}"), said


@pytest.mark.slow
def test_the_bounds_hold_at_fixed_seeds() -> None:
    """Every strategy flagged on >= 95% of 20 ledgers; every rule warns or errs on <= 1% of
    the 7 x 30 honest twins."""
    result = adversarial_parts(30, 20, 17, workers=2)
    weak = {k: v[:2] for k, v in result["strategies"].items() if v[0] / v[1] < POWER_MIN}
    assert not weak, weak
    assert result["honest"] == 30 * len(HONEST)
    noisy = {r: n for r, n in result["false_alarms"].items()
             if n / result["honest"] > FALSE_ALARM_MAX}
    assert not noisy, (noisy, result["examples"])
