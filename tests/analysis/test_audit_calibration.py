"""Every rule calibrated (issue 14 item 3): on honest ledgers of many shapes no rule raises a
warning or an error in more than 1% of them, and each fires on at least 95% of its own
violations. benchmarks/audit_calibration.py measures the same at a larger size.

The simulation is the one `calibrate(80, 8, seed=14)` runs, cut into parts that share nothing
(the honest ledgers; each rule's violations, whose shapes depend only on the seed) and run on
two processes: the same ledgers and counts, in about half the time on the suite's two cores."""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from audit_calibration import FALSE_ALARM_MAX, POWER_MIN, calibrate

from logbook.analysis.audit.registry import rule_ids

N_HONEST, N_VIOLATIONS, SEED = 80, 8, 14


def calibrated_in_parts(workers: int = 2) -> dict[str, Any]:
    """What ``calibrate(N_HONEST, N_VIOLATIONS, SEED)`` returns, computed in parts."""
    rules = rule_ids()
    chunks = [rules[i::4] for i in range(4)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        honest = pool.submit(calibrate, N_HONEST, 0, SEED)
        violations = [pool.submit(calibrate, 0, N_VIOLATIONS, SEED, chunk) for chunk in chunks]
        h = honest.result()
        v = {r: x for part in violations for r, x in part.result()["rules"].items()}
    assert sorted(v) == sorted(rules)
    out = {r: {"false_alarms": h["rules"][r]["false_alarms"], "honest": h["rules"][r]["honest"],
               "fired": v[r]["fired"], "violations": v[r]["violations"]} for r in rules}
    return {"rules": out, "examples": h["examples"]}


@pytest.mark.slow
def test_every_rule_is_calibrated_at_fixed_seeds() -> None:
    result = calibrated_in_parts()
    rules = result["rules"]
    assert list(rules) == rule_ids()
    assert all(x["honest"] == N_HONEST for x in rules.values())
    bad = {r: x for r, x in rules.items()
           if x["false_alarms"] / x["honest"] > FALSE_ALARM_MAX
           or x["violations"] == 0 or x["fired"] / x["violations"] < POWER_MIN}
    assert not bad, (bad, result["examples"])

