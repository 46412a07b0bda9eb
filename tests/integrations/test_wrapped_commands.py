"""`logbook run -- inspect eval ...` and `logbook run -- lm_eval ...` without --from: the
command line says where the harness writes, and only what this command wrote is read.

Inspect runs for real (the tiny task and the offline `echo` model of test_inspect_hook); here
lm_eval's command lines are tested for what is refused before anything runs (real lm_eval runs
under `logbook run`: test_lm_eval_harness.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_cli
from test_inspect_hook import DATA, INSPECT, inspect_eval

needs_inspect = pytest.mark.skipif(INSPECT is None, reason="needs inspect_ai: pip install -e "
                                   "'.[inspect]'")


def logbook_run(work: Path, *args: str, env: dict[str, str] | None = None,
                ) -> subprocess.CompletedProcess[str]:
    """`logbook run ARGS` as a shell runs it (it spawns the command and handles signals)."""
    environ = {**os.environ, "PYTHONPATH": str(DATA / "site"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "logbook", "run", *args], cwd=work,
                          env=environ, capture_output=True, text=True, timeout=300,
                          check=False)


def runs() -> list[dict[str, Any]]:
    r = run_cli("export")
    assert r.code == 0, r.err
    return [e["entry"]["body"] for e in map(orjson.loads, r.out.splitlines())
            if e["entry"]["kind"] == "run"]


def tiny(*extra: str) -> list[str]:
    assert INSPECT is not None
    return ["--", INSPECT, "eval", "tiny_task.py", "--model", "echo/x", "--display", "plain",
            *extra]


@needs_inspect
def test_inspect_eval_log_dir_from_its_command_line(ledger_dir: Path) -> None:
    shutil.copy(DATA / "tiny_task.py", ledger_dir)
    # the hook is switched on as well: inside `logbook run` it leaves the run to logbook run
    done = logbook_run(ledger_dir, *tiny("--log-dir", "out"), env={"LOGBOOK_RECORD": "1"})
    assert done.returncode == 0, done.stderr
    assert "reading the inspect output the command writes to out" in done.stderr
    (log,) = (ledger_dir / "out").glob("*.eval")
    (run,) = runs()
    assert run["status"] == "completed" and run["source"]["file"] == log.name
    assert run["outcomes"]["score"] == [0.0, 1.0] * 3 and run["logs"]
    assert run["apparatus"]["captured"]["command"][1] == "eval"


@needs_inspect
def test_inspect_log_dir_variable_then_the_default_logs(ledger_dir: Path) -> None:
    shutil.copy(DATA / "tiny_task.py", ledger_dir)
    done = logbook_run(ledger_dir, *tiny(), env={"INSPECT_LOG_DIR": "elsewhere"})
    assert done.returncode == 0, done.stderr
    assert len(list((ledger_dir / "elsewhere").glob("*.eval"))) == 1
    inspect_eval(ledger_dir, log_dir="logs")  # a log already in ./logs, not this command's
    done = logbook_run(ledger_dir, *tiny("-T", "bad=s1"))  # no INSPECT_LOG_DIR: ./logs
    assert done.returncode == 0, done.stderr
    assert len(list((ledger_dir / "logs").glob("*.eval"))) == 2
    first, second = runs()
    assert first["source"]["file"] != second["source"]["file"]
    assert second["outcomes"]["score"][1] is None  # s1 failed in this command's run only


@pytest.mark.parametrize(("command", "says"), [
    (["lm_eval", "--model", "dummy", "--tasks", "synth_mc", "--log_samples"],
     "give lm_eval --output_path P"),
    ([sys.executable, "-m", "lm_eval", "--model", "dummy", "--tasks", "synth_mc",
      "--output_path", "out"], "give lm_eval --log_samples"),
    (["python3", "-c", "print(1)"], "say where the outcomes will be"),
])
def test_what_a_command_line_cannot_be_read_from_is_refused_before_it_runs(
        ledger_dir: Path, command: list[str], says: str) -> None:
    done = logbook_run(ledger_dir, "--", *command)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and done.stderr.count("\n") == 1
    assert runs() == [] and not (ledger_dir / "out").exists()
