"""This machine's checked copy (logbook.storage.sqlite.read_model) while another check holds it:
a copy that stays busy past the wait is not taken for a damaged one. The command goes on
without it (a full check) and the file, which the other check is writing, is left alone; a
file that is not a database is still made again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from logbook.storage.sqlite import read_model as checked


def test_a_busy_copy_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "copy.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another check, making the copy
    holder.execute("CREATE TABLE being_written (x)")
    monkeypatch.setattr(checked, "BUSY_TIMEOUT", 0.05)
    assert checked.ReadModel.open(path) is None
    assert path.exists()
    holder.execute("COMMIT")
    holder.close()
    copy = checked.ReadModel.open(path)  # once it is free: the same file, kept
    assert copy is not None
    tables = {r[0] for r in copy.conn.execute("SELECT name FROM sqlite_master")}
    assert "being_written" in tables and "entry_index" in tables
    copy.close()


def test_a_file_that_is_not_a_database_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "copy.db"
    path.write_bytes(b"not a database " * 100)
    copy = checked.ReadModel.open(path)
    assert copy is not None and copy.state() is None
    copy.close()
