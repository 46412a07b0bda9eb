"""Defects a reviewer reproduced, each through the CLI: outputs that would destroy the ledger
or a key, damaged storage, decompression bombs, redaction, `demo --dir`, `verify` of a pipe,
and the key folder's permissions."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

from builders import plan_body, write_json
from conftest import run_cli


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _folder_listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_1_out_and_html_never_overwrite_the_ledger_a_database_or_a_key(
        ledger_dir: Path, tmp_path: Path) -> None:
    assert run_cli("plan", str(write_json(tmp_path / "plan.json", plan_body("p1")))).code == 0
    db = ledger_dir / ".logbook" / "ledger.db"
    key = Path(os.environ["XDG_CONFIG_HOME"]) / "logbook" / "keys" / "default.key"
    other_db = tmp_path / "other.sqlite"
    sqlite3.connect(other_db).execute("create table t(x)").connection.close()
    key_copy = tmp_path / "backup.key"
    key_copy.write_bytes(key.read_bytes())
    # the ledger's -wal / -shm, present or not
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    for p in (wal, shm):
        if not p.exists():
            p.write_bytes(b"")
    targets = [db, wal, shm, other_db, key, key_copy]
    kept = [db, other_db, key, key_copy]  # (SQLite itself writes the -shm as it reads)
    before = {p: _digest(p) for p in kept}
    listing = (_folder_listing(db.parent), _folder_listing(key.parent),
               _folder_listing(tmp_path))
    n_entries = len(run_cli("log", "--json").json)
    commands = []
    for t in targets:
        commands += [("export", "--out", str(t)), ("report", "p1", "--html", str(t)),
                     ("checkpoint", "--out", str(t)), ("keys", "export", "--out", str(t))]
    for args in commands:
        r = run_cli(*args)
        assert r.code == 2, (args, r.code, r.err)
        assert args[-1] in r.err and "never overwritten" in r.err, r.err
        assert len(r.err.strip().splitlines()) == 1, r.err
    assert {p: _digest(p) for p in kept} == before
    assert (_folder_listing(db.parent), _folder_listing(key.parent),
            _folder_listing(tmp_path)) == listing
    assert len(run_cli("log", "--json").json) == n_entries  # no checkpoint kept
    assert run_cli("verify").code == 0
    # a symlink to the ledger is judged by what it points to
    link = tmp_path / "link.db"
    link.symlink_to(db)
    r = run_cli("export", "--out", str(link))
    assert r.code == 2 and "SQLite database" in r.err
    assert _digest(db) == before[db]
    # an ordinary file is still replaced
    plain = tmp_path / "plain.jsonl"
    plain.write_text("old\n")
    assert run_cli("export", "--out", str(plain)).code == 0
    assert plain.read_text() != "old\n"
