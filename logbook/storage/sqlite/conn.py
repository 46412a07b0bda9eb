"""Opening the ledger database (part of the SQLite store: storage/sqlite/ is the only code
that speaks SQL).

Two things every connection does, whatever reads it:

* text that is not UTF-8 (a damaged or hostile file) decodes with U+FFFD in place of the bad
  bytes instead of raising: it then differs from what the entry bytes say and `verify` reports
  it, while every other command prints it harmlessly;
* a missing table, or a file SQLite cannot read as a database, raises ``StorageDamaged``
  (exit 1, one sentence) instead of an SQL error.

Read-only media. A WAL database opened read-only still needs its ``-shm`` file, which it
cannot create in a folder it cannot write (a read-only mount, a `chmod 555` folder, another
user's copy). There a ``-shm`` and ``-wal`` pair already present is read as it is (SQLite
can); otherwise, when no ``-wal`` file exists (so no writer has the database open in WAL
mode), the database is opened with SQLite's ``immutable=1``: no ``-shm``, no locks. A lone
non-empty ``-wal`` (a copy taken while a writer was active) holds committed entries that
``immutable`` would silently ignore, so the database and its ``-wal`` are copied into a
private temporary folder and read from there instead.

Here too: the lock wait (LOGBOOK_LOCK_TIMEOUT) and the one-sentence EnvironmentProblem for a
database that cannot be opened or written.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from logbook import config
from logbook.errors import EnvironmentProblem, StorageDamaged

_DAMAGE = ("no such table", "no such column", "malformed", "file is not a database")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class Connection(sqlite3.Connection):
    """An sqlite3 connection whose statements turn storage damage into ``StorageDamaged``."""

    ledger_path: Path = Path("ledger.db")
    scratch: Path | None = None  # a temporary copy read instead of read-only media

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.DatabaseError as exc:
            problem = damaged(exc, self.ledger_path)
            if problem is None:
                raise
            raise problem from exc

    def close(self) -> None:
        super().close()
        if self.scratch is not None:
            import shutil

            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


def damaged(exc: sqlite3.DatabaseError, path: Path) -> StorageDamaged | None:
    """The one-sentence error for storage damage, or None when ``exc`` is something else."""
    text = str(exc)
    if isinstance(exc, sqlite3.IntegrityError) or not any(d in text for d in _DAMAGE):
        return None
    what = (f"its table {text.split(':', 1)[1].strip()} is missing"
            if text.startswith("no such table:") else text)
    return StorageDamaged(f"ledger {path} is damaged: {what} (`logbook verify` lists what is "
                          "wrong; `logbook reindex` rebuilds the derived tables)")


def _connect(target: str, path: Path, timeout: float, uri: bool) -> Connection:
    conn = sqlite3.connect(target, uri=uri, timeout=timeout, isolation_level=None,
                           factory=Connection)
    assert isinstance(conn, Connection)
    conn.ledger_path = path
    conn.text_factory = _text
    return conn


def connect_write(path: Path, timeout: float) -> Connection:
    return _connect(str(path), path, timeout, uri=False)


def _uri(path: Path, query: str) -> str:
    # not resolved: a relative path still opens from a folder whose parents we cannot search
    quoted = str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{quoted}?{query}"


def cannot_make_shm(path: Path) -> bool:
    """Whether SQLite could not open this WAL database read-only the usual way: its folder
    cannot be written (so no ``-shm`` can be made) and there is no ``-shm`` and ``-wal`` pair
    it could read as they are."""
    folder = path.parent
    try:
        read_only_fs = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        read_only_fs = False
    if not read_only_fs and os.access(folder, os.W_OK):
        return False
    shm, wal = Path(f"{path}-shm"), Path(f"{path}-wal")
    return not (shm.exists() and wal.exists() and os.access(shm, os.R_OK))


def connect_read(path: Path, timeout: float) -> Connection:
    """A read-only connection; on read-only media, one that needs no ``-shm`` (see above)."""
    if not cannot_make_shm(path):
        return _connect(_uri(path, "mode=ro"), path, timeout, uri=True)
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        # imported here: shutil and tempfile pull in bz2 and lzma, which an append never needs
        import shutil
        import tempfile

        scratch = Path(tempfile.mkdtemp(prefix="logbook-readonly-"))
        try:
            copy = scratch / path.name
            shutil.copyfile(path, copy)
            shutil.copyfile(wal, Path(f"{copy}-wal"))
        except OSError:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        conn = _connect(_uri(copy, "mode=ro"), path, timeout, uri=True)
        conn.scratch = scratch
        return conn
    return _connect(_uri(path, "mode=ro&immutable=1"), path, timeout, uri=True)


def lock_timeout() -> float:
    """LOGBOOK_LOCK_TIMEOUT, through logbook.config."""
    return config.lock_timeout()


def opening_cause(exc: BaseException) -> BaseException:
    """The SQLite error behind a StorageDamaged raised while opening."""
    return exc.__cause__ if isinstance(exc, StorageDamaged) and exc.__cause__ else exc


def is_ledger(conn: sqlite3.Connection) -> bool:
    """Whether the database holds logbook's tables (any schema version; migrations follow)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                        "name = 'entries'").fetchone() is not None


def environment_problem(exc: sqlite3.OperationalError, path: Path) -> EnvironmentProblem:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return EnvironmentProblem(f"ledger {path} is locked by another process past the "
                                  "timeout (LOGBOOK_LOCK_TIMEOUT)")
    if "readonly" in text or "read-only" in text or cannot_make_shm(path):
        return EnvironmentProblem(f"ledger {path} cannot be written: it is read-only, or in a "
                                  f"folder this user cannot write ({text}); reading commands "
                                  "still work")
    return EnvironmentProblem(f"ledger {path} cannot be opened: {text}")


def companions(db: Path) -> list[Path]:
    """A database file and the journal files SQLite may keep beside it."""
    return [db, *(db.with_name(db.name + tail) for tail in ("-wal", "-shm", "-journal"))]


def remove_abandoned(path: Path) -> None:
    """Remove what a creation of ``path`` killed before it finished left beside it (a
    ``.NAME.creating-PID`` file whose process is gone): never the ledger, never a file a
    running creation is building."""
    prefix = f".{path.name}.creating-"
    try:
        names = [p for p in path.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return
    for leftover in names:
        pid = leftover.name.removeprefix(prefix).split("-")[0]
        if not pid.isdigit() or alive(int(pid)):
            continue
        leftover.unlink(missing_ok=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True
