"""Ctrl-C during a real `inspect eval`: the cancelled task is recorded as an aborted run.

Inspect writes a cancelled task's log (status ``cancelled``) but hands it to no hook, so the
hook finds it in the run's log folder at the run's end (logbook.integrations.inspect_cancelled);
under `logbook run`, logbook run itself records it. The tiny task's ``stall=s3`` makes s3 hang
once s0-s2 are done (one sample at a time), and writes the file ``stalled``: then SIGINT goes
to the whole process group, as a terminal's Ctrl-C sends it. A script's `inspect_ai.eval(
log_dir=...)` names a folder the hook cannot learn: it says so, and INSPECT_LOG_DIR is the fix.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from test_inspect_hook import DATA, INSPECT, as_appended, runs, same_run

pytestmark = pytest.mark.skipif(INSPECT is None, reason="needs inspect_ai: pip install -e "
                                "'.[inspect]'")

EVAL = ["eval", "tiny_task.py", "--model", "echo/x", "--max-samples", "1", "--display",
        "plain", "-T", "stall=s3"]
# a terminal's Ctrl-C reaches a command whose SIGINT is at its default; a suite started in the
# background (a shell's `cmd &` ignores SIGINT in what it starts, and an ignored signal stays
# ignored across exec) would hand it an ignored one, and Inspect would never see the Ctrl-C:
# the command is exec'd from a trampoline that puts SIGINT back to its default first
DEFAULT_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                  "os.execvp(sys.argv[1], sys.argv[1:])")


def ctrl_c(work: Path, command: list[str], env: dict[str, str],
           group: bool = True) -> tuple[int, str]:
    """Run ``command`` in ``work`` in a session of its own; once the task stalls, SIGINT to
    its process group (or, ``group=False``, to the command's process only, as `kill -INT`
    sends it). (exit code, stderr)."""
    shutil.copy(DATA / "tiny_task.py", work / "tiny_task.py")
    environ = {**os.environ, "PYTHONPATH": str(DATA / "site"), **env}
    err = work.parent / f"{work.name}-stderr.txt"
    with err.open("wb") as sink:
        child = subprocess.Popen([sys.executable, "-c", DEFAULT_SIGINT, *command], cwd=work,
                                 env=environ, stdout=subprocess.DEVNULL, stderr=sink,
                                 start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while not (work / "stalled").exists():
                assert child.poll() is None, err.read_text()
                assert time.monotonic() < deadline, "the task never stalled"
                time.sleep(0.05)
            if group:
                os.killpg(child.pid, signal.SIGINT)
            else:
                child.send_signal(signal.SIGINT)
            code = child.wait(timeout=120)
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
    return code, err.read_text()


def check_cancelled(run: dict[str, Any]) -> None:
    """s0-s2 scored as the echo model answers them, s3 cancelled in flight, s4-s5 not run."""
    o = run["outcomes"]
    assert run["status"] == "aborted" and run["reason"] == "evaluation cancelled"
    assert o["id"] == [f"s{i}" for i in range(6)]
    assert o["score"] == [0.0, 1.0, 0.0, None, None, None]
    assert "CancelledError" in o["error"][3]  # in flight when Ctrl-C came
    assert o["error"][4] == o["error"][5] == "not run (evaluation ended early)"
    assert run["reported"]["status"] == "cancelled"


def test_ctrl_c_under_the_hook_appends_an_aborted_run(tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert run_cli("init", str(work), "--name", "evals").code == 0
    assert INSPECT is not None
    code, err = ctrl_c(work, [INSPECT, *EVAL, "--log-dir", "out"],
                       {"LOGBOOK_RECORD": "1", "INSPECT_REQUIRED_HOOKS": "logbook/record"})
    assert code == 0, err  # Inspect ends a cancelled run with 0
    (log,) = (work / "out").glob("*.eval")
    (run,) = runs(work)
    assert f"(aborted) from {log.name}" in err
    check_cancelled(run)
    same_run(run, as_appended(log, tmp_path))
    assert run_cli("--ledger", str(work), "verify").code == 0


def test_ctrl_c_under_the_hook_finds_the_log_in_inspect_log_dir(tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert run_cli("init", str(work), "--name", "evals").code == 0
    assert INSPECT is not None
    code, err = ctrl_c(work, [INSPECT, *EVAL],
                       {"LOGBOOK_RECORD": "1", "INSPECT_LOG_DIR": str(tmp_path / "elsewhere")})
    assert code == 0, err
    (log,) = (tmp_path / "elsewhere").glob("*.eval")
    (run,) = runs(work)
    check_cancelled(run)
    assert run["source"]["file"] == log.name


def test_ctrl_c_under_logbook_run_appends_one_aborted_run(tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert run_cli("init", str(work), "--name", "evals").code == 0
    assert INSPECT is not None
    # the hook is switched on too: under logbook run it leaves the run to logbook run
    # SIGINT to logbook run alone, which passes it on: a terminal's Ctrl-C reaches inspect
    # twice, from the terminal and again from logbook run, which can leave Inspect hanging
    code, err = ctrl_c(work, [sys.executable, "-m", "logbook", "run", "--", INSPECT, *EVAL],
                       {"LOGBOOK_RECORD": "1"}, group=False)
    (log,) = (work / "logs").glob("*.eval")
    (run,) = runs(work)
    assert "(aborted)" in err and code == 128 + signal.SIGINT, err
    assert run["status"] == "aborted" and run["source"]["file"] == log.name
    assert "interrupted by Ctrl-C (SIGINT)" in run["reason"]
    assert "evaluation cancelled" in run["reason"], run["reason"]  # the log's status, read
    assert run["outcomes"]["score"] == [0.0, 1.0, 0.0, None, None, None]
    assert "CancelledError" in run["outcomes"]["error"][3]
    assert run["logs"]  # what logbook run adds: the command's output, kept


PY_EVAL = ("from inspect_ai import eval; eval('tiny_task.py', model='echo/x', log_dir='custom', "
           "max_samples=1, display='plain', task_args={'stall': 's3'})")


def test_python_eval_with_its_own_log_dir_is_found_only_through_inspect_log_dir(
        tmp_path: Path) -> None:
    """`inspect_ai.eval(log_dir=...)` in a script: the hook cannot learn that folder, so it
    says where it looked and how to append the log; INSPECT_LOG_DIR naming it is the fix."""
    work = tmp_path / "work"
    assert run_cli("init", str(work), "--name", "evals").code == 0
    code, err = ctrl_c(work, [sys.executable, "-c", PY_EVAL], {"LOGBOOK_RECORD": "1"})
    assert code == 0, err  # eval() returns its cancelled log; the script ends normally
    (log,) = (work / "custom").glob("*.eval")
    assert runs(work) == []
    assert "none naming it was found in logs" in err
    assert "`logbook append --from inspect LOG`" in err
    r = run_cli("--ledger", str(work), "append", "--from", "inspect", str(log))  # the workaround
    assert r.code == 0, r.err
    check_cancelled(runs(work)[0])
    (work / "stalled").unlink()
    code, err = ctrl_c(work, [sys.executable, "-c", PY_EVAL],
                       {"LOGBOOK_RECORD": "1", "INSPECT_LOG_DIR": "custom"})
    assert code == 0 and "(aborted) from" in err, err
    first, second = runs(work)
    check_cancelled(second)
    assert second["source"]["file"] != first["source"]["file"]
