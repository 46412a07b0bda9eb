"""The command line behaves like the tools people know (issue 21): -h, --version, completion,
a bare `logbook`, placeholders named after the option, and a log that says what happened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

from conftest import run_cli


def test_h_is_help_everywhere() -> None:
    for args in (["-h"], ["log", "-h"], ["keys", "-h"], ["keys", "list", "-h"]):
        r = run_cli(*args)
        assert r.code == 0 and r.out.startswith("Usage: logbook"), (args, r.err)


def test_version() -> None:
    r = run_cli("--version")
    assert (r.code, r.out) == (0, f"logbook {version('logbook')}\n")


def test_bare_logbook_prints_its_help_and_succeeds() -> None:
    r = subprocess.run([sys.executable, "-m", "logbook"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("Usage: logbook"), r.stderr
    assert "logbook:" not in r.stdout.splitlines()[0]


def test_completion_is_offered() -> None:
    r = run_cli("--show-completion", "bash")
    assert r.code == 0, r.err
    assert "_LOGBOOK_COMPLETE" in r.out and "complete " in r.out
    r = run_cli("--show-completion", "tcsh")
    assert r.code == 2 and "'tcsh' is not a shell" in r.err and "bash" in r.err
    r = run_cli("--help")
    assert "--install-completion" in r.out


def _detached(tmp_path: Path, *args: str) -> tuple[int, str]:
    """`logbook ARGS` started in the background by `sh -c`, which exits at once: above logbook
    is only the subshell waiting for it (a plain sh, which typer does not complete), then
    init, as under an agent, cron or nohup. HOME is ``tmp_path`` (an install writes there)."""
    code = "import sys; from logbook.cli.main import run; sys.exit(run(sys.argv[1:]))"
    out, done = tmp_path / "out.txt", tmp_path / "done"
    done.unlink(missing_ok=True)
    script = 'c=$1 o=$2 d=$3; shift 3; ( "$0" -c "$c" "$@" > "$o" 2>&1; echo $? > "$d" ) &'
    subprocess.run(["sh", "-c", script, sys.executable, code, str(out), str(done), *args],
                   check=True, env={**os.environ, "HOME": str(tmp_path)})
    deadline = time.monotonic() + 30
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(done.read_text()), out.read_text()


def test_completion_for_a_shell_named_needs_no_shell_to_detect(tmp_path: Path) -> None:
    code, out = _detached(tmp_path, "--show-completion", "zsh")
    assert code == 0 and out.startswith("#compdef logbook"), out


def test_completion_installs_for_the_shell_named_with_no_shell_to_detect(
        tmp_path: Path) -> None:
    # typer refused here with "Shell sh is not supported." and exit 1
    code, out = _detached(tmp_path, "--install-completion", "bash")
    script = tmp_path / ".bash_completions" / "logbook.sh"
    assert code == 0 and f"bash completion installed in {script}" in out, out
    assert "_LOGBOOK_COMPLETE" in script.read_text()
    assert f"source '{script}'" in (tmp_path / ".bashrc").read_text()
    code, out = _detached(tmp_path, "--install-completion", "tcsh")
    assert code == 2 and "--install-completion: 'tcsh' is not a shell" in out, out


def test_a_completion_that_cannot_be_written_is_exit_3(tmp_path: Path) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("a file where the home folder should be")
    r = subprocess.run([sys.executable, "-c", "import sys; from logbook.cli.main import run; "
                        "sys.exit(run(sys.argv[1:]))", "--install-completion", "bash"],
                       capture_output=True, text=True, env={**os.environ, "HOME": str(home)})
    assert r.returncode == 3, r.stderr
    assert r.stderr.startswith("logbook: --install-completion: cannot write the bash "
                               f"completion under {home}"), r.stderr
    assert "Traceback" not in r.stderr and home.read_text().startswith("a file")


def test_placeholders_are_named_after_their_option() -> None:
    out = run_cli("log", "--help").out
    assert "--plan PLAN" in out and "-n N" in out and "<str>" not in out and "<int>" not in out


def test_log_says_exploratory_and_failed_runs_plainly(ledger_dir: Path) -> None:
    failed = {"kind": "run", "body": {
        "plan": None, "arm": None, "status": "failed", "reason": "CUDA OOM at item 57",
        "apparatus": {"model": "m"},
        "outcomes": {"metric": "acc", "id": ["a", "b"], "score": [1.0, None],
                     "error": [None, "oom"]}}}
    (ledger_dir / "failed.json").write_text(json.dumps(failed))
    assert run_cli("append", "failed.json").code == 0
    line = run_cli("log", "-n", "1").out.strip()
    assert "arm=None" not in line and "acc=" not in line, line
    assert "failed plan=exploratory: CUDA OOM at item 57" in line, line
