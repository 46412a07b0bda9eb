"""Every rule calibrated (issue 14 item 3): on honest ledgers of many shapes no rule raises a
warning or an error in more than 1% of them, and each fires on at least 95% of its own
violations. benchmarks/audit_calibration.py measures the same at a larger size.

The simulation is the one `calibrate(80, 8, seed=14)` runs, cut into parts that share nothing
(the honest ledgers by number; the rules' violations, whose shapes depend only on the seed) and
run on two processes (`calibrated`): the same ledgers and counts, in about half the time."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from audit_calibration import FALSE_ALARM_MAX, POWER_MIN, calibrate, calibrated, merged

from logbook.analysis.audit.registry import rule_ids

N_HONEST, N_VIOLATIONS, SEED = 80, 8, 14


@pytest.mark.slow
def test_every_rule_is_calibrated_at_fixed_seeds() -> None:
    result = calibrated(N_HONEST, N_VIOLATIONS, SEED, workers=2)
    rules = result["rules"]
    assert list(rules) == rule_ids()
    assert all(x["honest"] == N_HONEST for x in rules.values())
    bad = {r: x for r, x in rules.items()
           if x["false_alarms"] / x["honest"] > FALSE_ALARM_MAX
           or x["violations"] == 0 or x["fired"] / x["violations"] < POWER_MIN}
    assert not bad, (bad, result["examples"])


def test_the_parts_add_up_to_the_serial_run() -> None:
    # honest ledgers only (the violations' parts are whole rules): the counts as one process
    # finds them (six honest ledgers raise no warning, so the examples are the next test's)
    serial = calibrate(6, 0, SEED)
    parts = calibrated(6, 0, SEED, workers=2)
    assert parts["rules"] == serial["rules"]
    assert parts["first"] == serial["first"] and parts["examples"] == serial["examples"]


def test_each_rules_example_comes_from_its_first_ledger_whichever_part_met_it() -> None:
    # A's first ledger is in the later part, B's in the earlier one: neither "first part wins"
    # nor "last part wins" gives both
    def part(alarms: dict[str, tuple[int, str]]) -> dict[str, Any]:
        return {"rules": {r: {"false_alarms": int(r in alarms), "honest": 3} for r in "AB"},
                "first": {r: i for r, (i, _) in alarms.items()},
                "examples": {r: m for r, (_, m) in alarms.items()}}

    parts = [part({"A": (4, "A at 4"), "B": (0, "B at 0")}),
             part({"A": (1, "A at 1"), "B": (2, "B at 2")})]
    result = merged(parts, {r: {"fired": 2, "violations": 2} for r in "AB"}, ["A", "B"])
    assert result["rules"]["A"] == {"false_alarms": 2, "honest": 6, "fired": 2, "violations": 2}
    assert result["rules"]["B"]["false_alarms"] == 2
    assert result["first"] == {"A": 1, "B": 0}
    assert result["examples"] == {"A": "A at 1", "B": "B at 0"}
