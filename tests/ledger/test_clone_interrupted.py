"""An interrupted `logbook clone` can always be run again (issue 34, item 7): a clone killed
(SIGKILL, or Ctrl-C's SIGINT) at any point, into a new SQLite file or a PostgreSQL database,
leaves a destination that the same command then completes, and the copy verifies and has SRC's
head. The destination's store is created whole or not at all (`SQLiteStore.create` builds it
under a temporary name and links it into place), and the entries are copied in one
transaction; what follows them (checkpoints, audit records, logs) is copied again when
missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pg_cluster as cluster_fixtures
import pytest
from builders import draft, write_jsonl
from conftest import run_cli

pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url
pytestmark = pytest.mark.long  # a minute or more: scheduled first (conftest.py)


def _source(tmp_path: Path) -> tuple[Path, str]:
    """A ledger of 4,001 entries, audited and checkpointed; its head digest."""
    src = tmp_path / "src"
    src.mkdir()
    assert run_cli("init", str(src), "--name", "src").code == 0
    drafts = [draft("note", {"text": f"note {i}", "refs": []}) for i in range(4000)]
    r = run_cli("--ledger", str(src), "append", "--jsonl", str(write_jsonl(tmp_path / "n.jsonl",
                                                                           drafts)))
    assert r.code == 0, r.err
    assert run_cli("--ledger", str(src), "checkpoint").code == 0
    assert run_cli("--ledger", str(src), "audit").code == 0
    head = run_cli("--ledger", str(src), "verify", "--json").json["head"]
    return src, head


def _clone(src: Path, dest: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "logbook", "clone", str(src), dest],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "CI": ""})


def _interrupt_then_finish(src: Path, head: str, dest: str, after: float,
                           sig: signal.Signals) -> None:
    p = _clone(src, dest)
    time.sleep(after)
    p.send_signal(sig)
    p.communicate(timeout=120)
    again = _clone(src, dest)
    _out, err = again.communicate(timeout=120)
    assert again.returncode == 0, (after, sig, err.decode())
    r = run_cli("--ledger", dest, "verify", "--json")
    assert r.code == 0 and r.json["head"] == head and r.json["entries"] == 4001, r.err


def test_a_clone_killed_anywhere_into_a_new_file_is_run_again(tmp_path: Path) -> None:
    src, head = _source(tmp_path)
    started = time.monotonic()
    whole = _clone(src, str(tmp_path / "timed"))
    assert whole.wait(timeout=120) == 0
    took = time.monotonic() - started
    for k in range(1, 12):  # from before the store exists to after the entries are in
        after = took * k / 10
        sig = signal.SIGKILL if k % 2 else signal.SIGINT
        _interrupt_then_finish(src, head, str(tmp_path / f"dest{k}"), after, sig)
        assert not list((tmp_path / f"dest{k}" / ".logbook").glob(".ledger.db.creating-*"))


def test_what_a_killed_creation_left_is_removed(tmp_path: Path) -> None:
    """A ``.ledger.db.creating-PID`` file of a process that is gone (a creation killed before
    it linked the store into place) is removed by the next creation there."""
    src, head = _source(tmp_path)
    folder = tmp_path / "dest" / ".logbook"
    folder.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = folder / f".ledger.db.creating-{dead.pid}"
    left.write_bytes(b"")
    assert run_cli("clone", str(src), str(tmp_path / "dest")).code == 0
    assert not left.exists()
    assert run_cli("--ledger", str(tmp_path / "dest"), "verify", "--json").json["head"] == head


KILLED_CREATING = """
import os, signal, sys
from logbook.storage.sqlite.store import SQLiteStore
def killed(self):  # the store's file exists; its schema is not written yet
    os.kill(os.getpid(), signal.SIGKILL)
SQLiteStore._migrate = killed
from logbook.cli.main import run
sys.exit(run(sys.argv[1:]))
"""


def test_a_clone_killed_while_its_store_is_made_is_run_again(tmp_path: Path) -> None:
    """The fault point kills the clone after SQLite made the destination's file and before
    its schema is in it: what is left is no ledger, and the same clone then completes (before
    issue 34 the empty file stood at the ledger's place, and every later clone refused it)."""
    src, head = _source(tmp_path)
    dest = tmp_path / "dest"
    r = subprocess.run([sys.executable, "-c", KILLED_CREATING, "clone", str(src), str(dest)],
                       capture_output=True, timeout=120)
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert not (dest / ".logbook" / "ledger.db").exists()
    assert run_cli("clone", str(src), str(dest)).code == 0
    assert run_cli("--ledger", str(dest), "verify", "--json").json["head"] == head
    assert [p.name for p in (dest / ".logbook").iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_a_clone_killed_into_postgres_is_run_again(pg_cluster: cluster_fixtures.Cluster,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   sig: signal.Signals) -> None:
    monkeypatch.setenv("PGPASSWORD", cluster_fixtures.PASSWORD)
    src, head = _source(tmp_path)
    for after in (0.4, 1.0, 1.6):
        _interrupt_then_finish(src, head, pg_cluster.create_database("clone"), after, sig)
