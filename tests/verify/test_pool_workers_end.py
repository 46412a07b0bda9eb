"""A verify killed while its signature workers run leaves no worker behind (found while
interrupting `clone`, issue 34 item 7): each worker holds only its own pipe, so the reader's
death closes it and the worker ends; before, each later worker inherited the earlier ones'
pipe ends and all of them waited for ever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builders import draft, write_jsonl
from conftest import run_cli

from logbook.verify.signatures import PARALLEL_MIN, workers


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(workers() < 2, reason="the signatures are checked in one process here")
def test_killing_verify_leaves_no_signature_worker(ledger_dir: Path, tmp_path: Path) -> None:
    notes = [draft("note", {"text": f"n{i}"}) for i in range(PARALLEL_MIN + 4000)]
    assert run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "n.jsonl", notes))).code == 0
    proc = subprocess.Popen([sys.executable, "-m", "logbook", "verify"], cwd=ledger_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    found: list[int] = []
    while len(found) < 2 and time.monotonic() < deadline and proc.poll() is None:
        found = _children(proc.pid)
        time.sleep(0.01)
    assert len(found) >= 2, "verify finished before its workers could be seen"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 20
    while any(_alive(c) for c in found) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [c for c in found if _alive(c)]
    for c in left:  # never leave them to the machine
        os.kill(c, signal.SIGKILL)
    assert not left, f"signature workers outlived verify: {left}"
