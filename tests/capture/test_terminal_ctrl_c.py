"""A Ctrl-C typed at a terminal reaches `logbook run` and its command together (the terminal
signals its whole foreground process group): logbook must not pass it on a second time, or a
harness that finishes its log on the first Ctrl-C (Inspect) is stopped by the second. Tested on
a real pseudo-terminal that is the controlling terminal of a new session, with ^C typed into
it; a SIGINT sent to logbook alone (no terminal) is still passed on."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
from conftest import run_cli

LAUNCH = "import sys\nfrom logbook.cli.main import run\nsys.exit(run())\n"
# counts the SIGINTs it gets, for a second after the first one
CHILD = """\
import pathlib, signal, sys, time
count = 0
def got(signum, frame):
    global count
    count += 1
signal.signal(signal.SIGINT, got)
pathlib.Path("ready").write_text("1")
end = time.time() + 30
while count == 0 and time.time() < end:
    time.sleep(0.02)
time.sleep(1.0)
pathlib.Path("count").write_text(str(count))
"""


def _wait_for(path: Path, seconds: float = 30) -> None:
    end = time.time() + seconds
    while not path.exists():
        assert time.time() < end, f"{path} never appeared"
        time.sleep(0.05)


def _runs() -> list[dict[str, object]]:
    return [e for e in run_cli("log", "--json").json if e["kind"] == "run"]


def test_a_terminal_ctrl_c_reaches_the_command_once(ledger_dir: Path) -> None:
    args = [sys.executable, "-c", LAUNCH, "run", "--outcomes", "none.jsonl", "--",
            sys.executable, "-c", CHILD]
    pid, master = pty.fork()  # the child: a new session, the pty its controlling terminal
    if pid == 0:  # pragma: no cover - the forked child
        os.chdir(ledger_dir)
        os.execve(sys.executable, args, {**os.environ, "LOGBOOK_DIR": str(ledger_dir)})
    seen = bytearray()
    try:
        _wait_for(ledger_dir / "ready")
        os.write(master, b"\x03")  # ^C: the terminal sends SIGINT to its foreground group
        end = time.time() + 60
        while time.time() < end:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the session's end of the terminal is closed
                    break
                if not chunk:
                    break
                seen += chunk
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(master)
    assert os.waitstatus_to_exitcode(status) == 130, seen.decode("utf-8", "replace")
    assert (ledger_dir / "count").read_text() == "1", seen.decode("utf-8", "replace")
    (run,) = _runs()
    body = orjson.loads(orjson.dumps(run["entry"]))["body"]
    assert body["status"] == "aborted" and "SIGINT" in body["reason"]
    assert seen.count(b"appended run") == 1


def test_a_sigint_to_logbook_alone_is_passed_on(ledger_dir: Path) -> None:
    """No terminal: a SIGINT sent to logbook's process only (a supervisor, `kill -INT PID`)
    reaches the command through logbook, once."""
    err_file = ledger_dir.parent / "logbook.err"
    with err_file.open("wb") as err_sink:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCH, "run", "--outcomes",
                                 "none.jsonl", "--", sys.executable, "-c", CHILD],
                                cwd=ledger_dir, env={**os.environ, "LOGBOOK_DIR": str(ledger_dir)},
                                stdin=subprocess.PIPE, stdout=err_sink, stderr=err_sink,
                                start_new_session=True)
    assert proc.stdin is not None
    proc.stdin.close()
    _wait_for(ledger_dir / "ready")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130, err_file.read_text()
    assert (ledger_dir / "count").read_text() == "1"
    (run,) = _runs()
    assert run["entry"]["body"]["status"] == "aborted"  # type: ignore[index]
