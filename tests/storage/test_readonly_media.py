"""Reading a ledger on read-only media (issue 16, finding 5): a `chmod 555` folder and a real
read-only bind mount. Every reading command works there and prints what it prints on the
writable original; nothing is written.

Root ignores file modes, so for the `chmod 555` case a root test runs the commands in a child
that has dropped the two capabilities that let root ignore them (CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH, from its bounding set, so they stay dropped across exec). The bind mount
needs root; without root that test is skipped (with a reason), never under CI, which runs as
root.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import CliResult, run_cli

SLUG = "ro-plan"
IS_ROOT = os.geteuid() == 0
READERS = [["verify", "--json"], ["log", "--json"], ["report", SLUG, "--json"], ["export"],
           ["show", "@3", "--json"], ["brief", "--json"], ["audit", "--json"],
           ["compare", f"{SLUG}:f16", f"{SLUG}:q8", "--json"]]


@pytest.fixture(autouse=True)
def _in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ledger checked in full, here and in the children: when this machine checked a
    ledger before, which brief says, is not what is compared."""
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")


def ok(*args: str) -> CliResult:
    r = run_cli(*args)
    assert r.code == 0, (args, r.code, r.out, r.err)
    return r


def build(work: Path, mp: pytest.MonkeyPatch) -> None:
    work.mkdir()
    mp.chdir(work)
    ok("init", str(work), "--name", "read-only")
    ok("plan", str(write_json(work.parent / "plan.json",
                              plan_body(SLUG, runs_per_arm=2, n_items=30))))
    runs = [draft("run", run_body(SLUG, ("f16", "q8")[i % 2], n_items=30, seed=i))
            for i in range(4)]
    ok("append", str(write_jsonl(work.parent / "runs.jsonl", runs)), "--jsonl")
    ok("note", "all four runs in")


def expected_outputs(work: Path, mp: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """What each reader prints on the writable original (brief and audit as first run)."""
    mp.chdir(work)
    out = []
    for args in READERS:
        r = ok(*args)
        out.append((args[0], r.out))
    return out


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def _drop_file_mode_override() -> None:  # pragma: no cover - runs in the child
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_bound_by_modes(folder: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """`logbook ARGS` in ``folder`` by a process that file modes bind (root drops the
    capabilities that bypass them)."""
    return subprocess.run([sys.executable, "-m", "logbook", *args], cwd=folder,
                          env={**os.environ, "LOGBOOK_DEBUG": "0"}, capture_output=True,
                          text=True, timeout=120,
                          preexec_fn=_drop_file_mode_override if IS_ROOT else None)


def test_chmod_555_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "ledger"
    build(work, monkeypatch)
    copy = tmp_path / "auditor"
    shutil.copytree(work, copy)
    expected = expected_outputs(work, monkeypatch)
    ledger_folder = copy / ".logbook"
    before = files(ledger_folder)
    ledger_folder.chmod(0o555)
    try:
        # the folder really is closed to this process: it cannot create a file there
        denied = subprocess.run([sys.executable, "-c", "open('.logbook/x', 'w')"], cwd=copy,
                                capture_output=True, text=True, timeout=60,
                                preexec_fn=_drop_file_mode_override if IS_ROOT else None)
        assert denied.returncode != 0 and "Permission denied" in denied.stderr
        for (name, out), args in zip(expected, READERS, strict=True):
            r = run_bound_by_modes(copy, args)
            assert r.returncode == 0, (args, r.returncode, r.stderr)
            assert r.stdout == out, name
        assert files(ledger_folder) == before  # nothing written, no -shm left behind
    finally:
        ledger_folder.chmod(0o755)


@contextmanager
def read_only_mount(source: Path, target: Path) -> Iterator[Path]:
    """``source`` bound read-only at ``target`` (unmounted whatever happens)."""
    target.mkdir()
    subprocess.run(["mount", "--bind", str(source), str(target)], check=True,
                   capture_output=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], check=True,
                       capture_output=True)
        yield target
    finally:
        if Path.cwd().is_relative_to(target):
            os.chdir(target.parent)  # a mount the process stands in is busy
        subprocess.run(["umount", str(target)], check=True, capture_output=True)


@pytest.mark.skipif(not IS_ROOT, reason="a bind mount needs root (CI runs as root)")
def test_read_only_bind_mount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "ledger"
    build(work, monkeypatch)
    copy = tmp_path / "copy"
    shutil.copytree(work, copy)
    expected = expected_outputs(work, monkeypatch)
    before = files(copy / ".logbook")
    with read_only_mount(copy, tmp_path / "mnt") as mnt:
        monkeypatch.chdir(mnt)
        with pytest.raises(OSError):
            (mnt / ".logbook" / "probe").write_bytes(b"")  # really read-only, even for root
        for (name, out), args in zip(expected, READERS, strict=True):
            r = run_cli(*args)
            assert r.code == 0, (args, r.code, r.err)
            assert r.out == out, name
        r = run_cli("note", "cannot be written here")
        assert r.code == 3 and "read-only" in r.err, r.err
    assert files(copy / ".logbook") == before


@pytest.mark.skipif(not IS_ROOT, reason="a bind mount needs root (CI runs as root)")
@pytest.mark.parametrize("with_shm", [True, False])
def test_read_only_copy_with_a_write_ahead_log(with_shm: bool, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy taken while another connection held the ledger open keeps committed entries
    in its -wal file: on read-only media they are read, not silently ignored."""
    work = tmp_path / "ledger"
    build(work, monkeypatch)
    db = work / ".logbook" / "ledger.db"
    holder = sqlite3.connect(db)  # keeps the WAL from being folded in when logbook closes
    holder.execute("SELECT count(*) FROM entries").fetchone()
    try:
        monkeypatch.chdir(work)
        for i in range(3):
            ok("note", f"in the write-ahead log {i}")
        size = len(ok("log", "--json").json)
        copy = tmp_path / "copy"
        shutil.copytree(work, copy)
    finally:
        holder.close()
    wal = copy / ".logbook" / "ledger.db-wal"
    assert wal.stat().st_size > 0
    if not with_shm:
        (copy / ".logbook" / "ledger.db-shm").unlink()
    with read_only_mount(copy, tmp_path / "mnt") as mnt:
        monkeypatch.chdir(mnt)
        r = ok("verify", "--json")
        assert r.json["entries"] == size
        assert "in the write-ahead log 2" in ok("log", "-n", "1").out
