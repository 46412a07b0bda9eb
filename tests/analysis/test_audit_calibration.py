"""Every rule calibrated (issue 14 item 3): on honest ledgers of many shapes no rule raises a
warning or an error in more than 1% of them, and each fires on at least 95% of its own
violations. benchmarks/audit_calibration.py measures the same at a larger size.

The simulation is the one `calibrate(80, 8, seed=14)` runs, cut into parts that share nothing
(the honest ledgers by number; the rules' violations, whose shapes depend only on the seed) and
run on two processes (`calibrated`): the same ledgers and counts, in about half the time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from audit_calibration import FALSE_ALARM_MAX, POWER_MIN, calibrate, calibrated

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
    # honest ledgers only (the violations' parts are whole rules): the counts, each rule's
    # example and the ledger it came from, as one process finds them
    serial = calibrate(6, 0, SEED)
    parts = calibrated(6, 0, SEED, workers=2)
    assert parts["rules"] == serial["rules"]
    assert parts["first"] == serial["first"] and parts["examples"] == serial["examples"]
