"""Four `logbook append --spool` at once over one spool of 30 runs (issue 34, item 7): each
spooled run is appended exactly once, every drain exits 0 (or 2, saying the spool holds no
runs, when the others emptied it before it looked), none exits 70 or 1, the spool ends empty
and the ledger verifies.

The 30 runs are spooled as a harness integration spools them when there is no ledger yet:
`logbook.integrations.lm_eval.record()` of simple_evaluate's results (rebuilt from the real
lm-evaluation-harness outputs in tests/fixtures/lm_eval), each with its own date so that each
is a distinct output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import run_cli
from test_lm_eval_record import FIXTURES, simple_evaluate_results

from logbook.errors import EnvironmentProblem
from logbook.integrations.lm_eval import record

RUNS = ("run-seed1", "run-seed2", "run-seed3", "run-gen-seed1", "run-2tasks-seed6")
DRAINS = 4


def test_concurrent_spool_drains_append_each_run_once(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    folder.mkdir()
    expected = 0
    for i in range(30):
        results = simple_evaluate_results(FIXTURES / RUNS[i % len(RUNS)])
        results["date"] = 1_780_000_000.0 + i
        expected += len(results["configs"])
        with pytest.raises(EnvironmentProblem, match="no ledger"):
            record(results, ledger=folder)
    spool = folder / ".logbook" / "spool"
    assert len(list(spool.glob("*.json"))) == 30
    assert run_cli("init", str(folder), "--name", "team").code == 0
    env = {**os.environ, "LOGBOOK_DIR": str(folder), "LOGBOOK_LOCK_TIMEOUT": "60"}
    drains = [subprocess.Popen([sys.executable, "-m", "logbook", "append", "--spool"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(DRAINS)]
    errs = [p.communicate(timeout=300)[1].decode() for p in drains]
    outcomes = [(p.returncode, err) for p, err in zip(drains, errs, strict=True)]
    for code, err in outcomes:  # a drain that finds the spool already emptied says so
        assert code == 0 or (code == 2 and err.strip().endswith("holds no runs")), err
    assert any(code == 0 for code, _ in outcomes)
    assert not list(spool.glob("*.json"))
    r = run_cli("--ledger", str(folder), "export")
    assert r.code == 0, r.err
    bodies = [e["entry"]["body"] for e in map(orjson.loads, r.out.splitlines())
              if e["entry"]["kind"] == "run"]
    assert len(bodies) == expected
    # each spooled output once: no two runs of one output and task
    seen = [(b["source"]["sha256"], b["source"]["part"]) for b in bodies]
    assert len(set(seen)) == len(seen)
    # each run said appended once, by the drain that wrote it; a drain that lost the race
    # for a file says so
    appended = sum(err.count("logbook: appended run @") for _, err in outcomes)
    assert appended == expected
    assert run_cli("--ledger", str(folder), "verify").code == 0
