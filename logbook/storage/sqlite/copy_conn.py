"""The connection to this machine's checked copy (logbook.storage.sqlite.read_model): a file
SQLite finds damaged while a command reads it is the copy's fault, never a crash. The error is
CopyDamaged (exit 3, one sentence naming the copy), and the file is removed, so that the next
check makes the copy again in full."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from logbook.errors import CopyDamaged

# what SQLite says of a file it cannot read as the copy it made: a page it cannot read
# (SQLITE_CORRUPT), not a database (SQLITE_NOTADB), a table or column gone
_DAMAGE_CODES = (11, 26)


def _damage(conn: Any, exc: sqlite3.DatabaseError) -> Exception:
    """Damage met reading the copy is the copy's (CopyDamaged, the file removed so that the
    next check makes it again), never a crash of the command; any other error is itself."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code not in _DAMAGE_CODES and "no such" not in str(exc):
        return exc  # busy, locked, full: not damage
    path = getattr(conn, "copy_path", None)
    if isinstance(path, Path):
        remove_copy(path)
    return CopyDamaged(f"this machine's checked copy of the ledger ({path}) is damaged ({exc}): "
                       "it is removed, and the next command checks the ledger in full")


class _Cursor(sqlite3.Cursor):
    """Every read of the copy, with `_damage` on an error (a try costs nothing when nothing
    is raised: the reads of a large copy stay as fast)."""

    def execute(self, sql: str, parameters: Any = ()) -> _Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.DatabaseError as exc:
            raise _damage(self.connection, exc) from None

    def executemany(self, sql: str, parameters: Any) -> _Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.DatabaseError as exc:
            raise _damage(self.connection, exc) from None

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as exc:
            raise _damage(self.connection, exc) from None

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as exc:
            raise _damage(self.connection, exc) from None

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.DatabaseError as exc:
            raise _damage(self.connection, exc) from None


class CopyConnection(sqlite3.Connection):
    """The copy's connection: every read and write through a `_Cursor`."""

    copy_path: Path | None = None

    def execute(self, sql: str, parameters: Any = ()) -> _Cursor:
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any) -> _Cursor:
        return self.cursor(_Cursor).executemany(sql, parameters)


def remove_copy(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
