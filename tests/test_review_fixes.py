"""Defects a reviewer reproduced, each through the CLI: outputs that would destroy the ledger
or a key, damaged storage, decompression bombs, redaction, `demo --dir`, `verify` of a pipe,
and the key folder's permissions."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest
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


def _damage(db: Path, sql: str) -> None:
    conn = sqlite3.connect(db)
    conn.executescript("DROP TRIGGER IF EXISTS entries_no_update; "
                       "DROP TRIGGER IF EXISTS entries_no_delete; " + sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(("sql", "column", "commands"), [
    ("UPDATE entries SET digest = CAST(digest AS BLOB) WHERE seq = 4", "digest of entry 4",
     [("export", "--out", "x.jsonl"), ("export",), ("show", "@4", "--json"), ("show", "@4"),
      ("log", "--json"), ("log",)]),
    ("UPDATE entries SET signature = CAST(signature AS BLOB) WHERE seq = 5",
     "signature of entry 5", [("export",), ("show", "@5", "--json"), ("log", "--json")]),
    ("UPDATE checkpoints SET note = CAST(note AS BLOB)", "note of stored checkpoint 1",
     [("log", "--checkpoints", "--json"), ("log", "--checkpoints")]),
])
def test_2_a_column_stored_with_the_wrong_type_is_a_finding_never_a_crash(
        ledger_dir: Path, sql: str, column: str, commands: list[tuple[str, ...]]) -> None:
    while len(run_cli("log", "--json").json) < 7:
        assert run_cli("note", "a note").code == 0
    assert run_cli("checkpoint").code == 0
    db = ledger_dir / ".logbook" / "ledger.db"
    _damage(db, sql)
    r = run_cli("verify", "--json")
    assert r.code == 1, (r.code, r.err)
    texts = [f["message"] for f in r.json["findings"]]
    what = column.split(" of ")[0]
    assert any(what in t and "stored as SQLite blob" in t for t in texts), texts
    r = run_cli("verify")
    assert r.code == 1 and "stored as SQLite blob" in r.out + r.err
    for args in commands:
        r = run_cli(*args)
        assert r.code == 1, (args, r.code, r.err)
        assert f"the {column} is stored as SQLite blob" in r.err, (args, r.err)
        assert len(r.err.strip().splitlines()) == 1, r.err
    assert not (ledger_dir / "x.jsonl").exists()
    for args in (("audit",), ("brief",), ("checkpoint",)):
        assert run_cli(*args).code == 1, args


def test_3_an_eval_member_larger_than_the_input_limit_is_refused_before_inflating(
        ledger_dir: Path, tmp_path: Path) -> None:
    """A 400 MiB header.json in a small .eval: under the old 1 GiB member limit it was
    inflated whole (MemoryError); LOGBOOK_MAX_INPUT_BYTES bounds each member too."""
    import zlib

    from builders import write_eval
    from test_hostile_env import limited
    from test_ingest_hostile import eval_members

    r = run_cli("plan", str(write_json(tmp_path / "arith.json",
                                       plan_body("arith", arms=("a", "b")))))
    assert r.code == 0, r.err
    import zstandard

    # valid JSON of 400 MiB ({"eval": "xxx…"}), compressed without holding it
    size, head, tail = 400 << 20, b'{"eval": "', b'"}'
    filler, c, crc, parts = b"x" * (1 << 24), zstandard.ZstdCompressor(level=1).compressobj(), 0, []
    pieces = [head] + [filler] * ((size - len(head) - len(tail)) // len(filler))
    pieces.append(b"x" * (size - len(head) - len(tail) - len(filler) * (len(pieces) - 1)))
    for piece in [*pieces, tail]:
        parts.append(c.compress(piece))
        crc = zlib.crc32(piece, crc)
    packed = b"".join([*parts, c.flush()])
    members = eval_members()
    bomb = write_eval(tmp_path / "bomb.eval", members | {"header.json": b"{}"},
                      packed={"header.json": packed}, declared={"header.json": (crc, size)})
    assert bomb.stat().st_size < 1 << 20
    before = run_cli("log", "--json").json
    # through the CLI (inspect_ai's reader, after logbook's pre-check), under a 1 GiB address
    # space: a reader that inflated the member would fail, not refuse
    r = limited("append", "--from", "inspect", str(bomb), "--plan", "arith", "--arm", "a",
                cwd=ledger_dir)
    assert r.code == 2, (r.code, r.err[-2000:])
    assert str(bomb) in r.err and "member header.json" in r.err, r.err
    assert "LOGBOOK_MAX_INPUT_BYTES" in r.err and len(r.err.strip().splitlines()) == 1
    assert run_cli("log", "--json").json == before
    # logbook's own reader (used when inspect_ai is not installed) refuses it the same way
    from logbook.errors import InputError
    from logbook.ingest.inspect import read_log

    with pytest.raises(InputError, match=r"member header\.json.*LOGBOOK_MAX_INPUT_BYTES"):
        read_log(bomb, reader="zstd")
