"""Every rule calibrated (issue 14 item 3): on honest ledgers of many shapes no rule raises a
warning or an error in more than 1% of them, and each fires on at least 95% of its own
violations. benchmarks/audit_calibration.py measures the same at a larger size."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from audit_calibration import FALSE_ALARM_MAX, POWER_MIN, calibrate

from logbook.analysis.audit.registry import rule_ids


@pytest.mark.slow
def test_every_rule_is_calibrated_at_fixed_seeds() -> None:
    result = calibrate(n_honest=80, n_violations=8, seed=14)
    rules = result["rules"]
    assert list(rules) == rule_ids()
    bad = {r: x for r, x in rules.items()
           if x["false_alarms"] / x["honest"] > FALSE_ALARM_MAX
           or x["violations"] == 0 or x["fired"] / x["violations"] < POWER_MIN}
    assert not bad, (bad, result["examples"])
