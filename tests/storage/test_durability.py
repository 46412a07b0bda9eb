"""Concurrency and crash safety of the append path (issue 2, DESIGN §5)."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli


def _appender(ledger: str, env: dict[str, str], barrier, worker: int, n: int, out) -> None:
    os.environ.clear()
    os.environ.update(env)
    os.environ["LOGBOOK_DIR"] = ledger
    from logbook.cli.main import run

    barrier.wait()
    codes = [run(["note", f"worker {worker} note {i}"]) for i in range(n)]
    out.put((worker, codes))


def test_four_processes_keep_one_linear_chain(ledger_dir: Path) -> None:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(4)
    out = ctx.Queue()
    env = dict(os.environ)
    procs = [ctx.Process(target=_appender, args=(str(ledger_dir), env, barrier, w, 50, out))
             for w in range(4)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(code == 0 for _, codes in results for code in codes)
    r = run_cli("log", "--json")
    entries = r.json
    assert len(entries) == 201
    assert [e["seq"] for e in entries] == list(range(201))
    for prev, cur in itertools.pairwise(entries):
        assert cur["entry"]["prev"] == prev["digest"]
    texts = {e["entry"]["body"]["text"] for e in entries[1:]}
    assert len(texts) == 200
    assert run_cli("verify").code == 0


# the CLI with the store's test seam installed: SIGKILL after the inserts, before COMMIT
KILLED_BEFORE_COMMIT = """
import os, signal, sys
from logbook.storage.sqlite.store import SQLiteStore
from logbook.cli.main import run
SQLiteStore.before_commit = lambda: os.kill(os.getpid(), signal.SIGKILL)
sys.exit(run(sys.argv[1:]))
"""


@pytest.mark.slow
def test_sigkill_between_insert_and_commit(ledger_dir: Path) -> None:
    """The fault point kills the appender after its inserts and before COMMIT, 20 times."""
    for i in range(20):
        r = subprocess.run([sys.executable, "-c", KILLED_BEFORE_COMMIT, "note", f"doomed {i}"],
                           capture_output=True, cwd=ledger_dir, timeout=60)
        assert r.returncode == -signal.SIGKILL, r.stderr
        # the next writer (a fresh connection, in this process) finds the lock free and the
        # killed transaction rolled back
        ok = run_cli("note", f"kept {i}")
        assert ok.code == 0, ok.err
    r = run_cli("log", "--json")
    texts = [e["entry"]["body"].get("text") for e in r.json[1:]]
    assert texts == [f"kept {i}" for i in range(20)]
    assert run_cli("verify").code == 0


LOOP = """
import sys
from logbook.cli.main import run
i = 0
while True:
    code = run(["note", f"loop {i}"])
    if code != 0:
        sys.exit(code)
    i += 1
"""


@pytest.mark.slow
def test_random_sigkills_lose_no_acknowledged_append(ledger_dir: Path) -> None:
    rng = random.Random(7)
    acknowledged: list[str] = []
    for _ in range(8):
        p = subprocess.Popen([sys.executable, "-c", LOOP], cwd=ledger_dir,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.6 + rng.random() * 0.8)
        p.send_signal(signal.SIGKILL)
        out, _ = p.communicate()
        for line in out.decode().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2] == "note":
                acknowledged.append(parts[1])
    assert len(acknowledged) > 8  # the loop really appended before each kill
    r = run_cli("log", "--json")
    present = {e["digest"] for e in r.json}
    missing = [d for d in acknowledged if d not in present]
    assert not missing
    v = run_cli("verify", "--json")
    assert v.code == 0, v.out
