"""The embedded SQLite store (logbook.storage.base.EntryLog; DESIGN §5). With its companions
schema.py (the migrations), summaries.py (what ``brief`` reads without parsing every entry),
txn.py (the append transaction's writes), beside.py (checkpoints and audits) and conn.py
(opening), the only code that speaks SQL.

Everything uses the standard ``sqlite3`` module (sqlite-utils would import numpy and pandas
when they are installed). The ``entries`` table holds the canonical bytes and the signature,
the source of truth; every other table is derived from those bytes and can be rebuilt
(``reindex``) and checked (``verify``).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from logbook.errors import EnvironmentProblem, InputError, StorageDamaged
from logbook.files import sync_folder
from logbook.storage.base import (
    StoredEntry,
)
from logbook.storage.sqlite.beside import BesideRows
from logbook.storage.sqlite.blobs import BlobFiles
from logbook.storage.sqlite.conn import (
    companions,
    connect_read,
    connect_write,
    environment_problem,
    is_ledger,
    lock_timeout,
    opening_cause,
    remove_abandoned,
)
from logbook.storage.sqlite.rows import ENTRY_COLUMNS, StoredRows
from logbook.storage.sqlite.schema import MIGRATIONS
from logbook.storage.sqlite.summaries import Summaries, stored_entry
from logbook.storage.sqlite.txn import SQLiteTxn
from logbook.tlog.merkle import leaf_hash

SCHEMA_VERSION = 8

assert len(MIGRATIONS) == SCHEMA_VERSION


class SQLiteStore(Summaries, BlobFiles, StoredRows, BesideRows):
    """One ledger database and its logs (blobs.py). Open for writing (migrates) or read-only."""

    # Called after a transaction's writes, just before its COMMIT. A test seam, installed only
    # by tests (tests/storage/test_durability.py kills the process there): None in production.
    before_commit: ClassVar[Callable[[], None] | None] = None

    def __init__(self, conn: sqlite3.Connection, path: Path, writable: bool) -> None:
        self.conn = conn
        self._path = path
        self.writable = writable

    @property
    def path(self) -> Path:
        return self._path

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path) -> SQLiteStore:
        """A new, empty ledger at ``path``. Its schema is built under a temporary name beside
        it and linked into place whole, so that a creation interrupted at any point (Ctrl-C, a
        kill, a full disk) leaves no ledger or a whole empty one, never a file that is neither
        and that no command could open again (`init` and `clone` can always be run again)."""
        if path.exists():
            raise InputError(f"a ledger already exists at {path}")
        # 0755 or tighter whatever the umask (mkdir's mode is only ever cut by it): a ledger
        # folder others could write would let them replace the ledger
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        remove_abandoned(path)
        tmp = path.with_name(f".{path.name}.creating-{os.getpid()}")
        try:
            cls.open_write(tmp, create=True).close()  # the last close folds its WAL in
            try:
                os.link(tmp, path)  # never replaces: a ledger made meanwhile is kept
            except FileExistsError:
                raise InputError(f"a ledger already exists at {path}") from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV):
                    raise EnvironmentProblem(f"cannot create the ledger {path} "
                                             f"({exc.strerror})") from None
                if path.exists():  # a file system without hard links: checked, then renamed
                    raise InputError(f"a ledger already exists at {path}") from None
                os.rename(tmp, path)
            sync_folder(path.parent)
        finally:
            for leftover in companions(tmp):
                leftover.unlink(missing_ok=True)
        return cls.open_write(path)

    @classmethod
    def open_write(cls, path: Path, create: bool = False) -> SQLiteStore:
        if not create and not path.exists():
            raise EnvironmentProblem(f"no ledger at {path}")
        timeout = lock_timeout()
        if not create and path.is_file() and path.stat().st_size == 0:
            raise EnvironmentProblem(f"{path} is an empty file, not a logbook ledger")
        conn = connect_write(path, timeout)
        try:
            if not create and not is_ledger(conn):
                raise EnvironmentProblem(f"{path} is an SQLite database but not a logbook "
                                         "ledger (it has no entries table); nothing was changed")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            store = cls(conn, path, True)
            store._migrate()
        except sqlite3.OperationalError as exc:
            conn.close()
            raise environment_problem(exc, path) from exc
        except (sqlite3.DatabaseError, StorageDamaged) as exc:
            conn.close()
            raise EnvironmentProblem(f"{path} is not a logbook ledger ({opening_cause(exc)})") \
                from exc
        except BaseException:
            conn.close()
            raise
        return store

    @classmethod
    def open_read(cls, path: Path) -> SQLiteStore:
        if not path.exists():
            raise EnvironmentProblem(f"no ledger at {path}")
        conn = connect_read(path, lock_timeout())
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            known = is_ledger(conn)
        except (sqlite3.DatabaseError, StorageDamaged) as exc:
            conn.close()
            raise EnvironmentProblem(f"{path} is not a logbook ledger ({opening_cause(exc)})") \
                from exc
        if not known:
            conn.close()
            raise EnvironmentProblem(f"{path} is not a logbook ledger (it has no entries table)")
        if version < SCHEMA_VERSION:
            conn.close()
            raise EnvironmentProblem(
                f"{path} has schema version {version}, older than {SCHEMA_VERSION}: open it "
                "once for writing (for example `logbook reindex`) to migrate it")
        if version > SCHEMA_VERSION:
            conn.close()
            raise EnvironmentProblem(f"{path} was written by a newer logbook "
                                     f"(schema {version} > {SCHEMA_VERSION})")
        return cls(conn, path, False)

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise EnvironmentProblem(f"{self.path} was written by a newer logbook "
                                     f"(schema {version} > {SCHEMA_VERSION})")
        for number in range(version, SCHEMA_VERSION):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                # re-read inside the lock: another process may have migrated meanwhile
                current = self.conn.execute("PRAGMA user_version").fetchone()[0]
                if current > number:
                    self.conn.execute("COMMIT")
                    continue
                for statement in MIGRATIONS[number].split(";\n"):
                    if statement.strip():
                        self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {number + 1}")
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self.conn.close()

    # -- the append transaction ------------------------------------------------------------
    @contextmanager
    def transaction(self, plans: Mapping[str, list[str]] | None = None,
                    signers: Sequence[str] = ()) -> Iterator[SQLiteTxn]:
        """One BEGIN IMMEDIATE transaction: appenders serialise here and never fork the chain
        (``plans`` and ``signers`` are not asked ahead: every read here is local)."""
        if not self.writable:  # pragma: no cover - a programming error
            raise RuntimeError("store opened read-only")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise environment_problem(exc, self.path) from exc
        try:
            txn = SQLiteTxn(self.conn, self)
            yield txn
            txn.flush()
            hook = type(self).before_commit  # a plain function, not bound to the store
            if hook is not None:
                hook()
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:  # read-only media, a full disk, a lost lock
            self._rollback()
            raise environment_problem(exc, self.path) from exc
        except BaseException:
            self._rollback()
            raise

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside sees the ledger as it was at the first
        one, whatever is appended meanwhile (a WAL reader never blocks the writers)."""
        if self.conn.in_transaction:  # already inside one (or inside an append)
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    # -- readers -------------------------------------------------------------------------------
    def head(self) -> tuple[int, str | None]:
        """(size, digest of the last entry or None)."""
        row = self.conn.execute(
            "SELECT seq, digest FROM entries ORDER BY seq DESC LIMIT 1").fetchone()
        return (0, None) if row is None else (row[0] + 1, row[1])

    def entry_by_digest(self, digest: str) -> StoredEntry | None:
        row = self.conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entries WHERE digest = ?",
                                (digest,)).fetchone()
        return stored_entry(row, self.conn) if row else None

    def digests_with_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        upper = prefix + "g"  # every hex digit sorts below "g"
        return [r[0] for r in self.conn.execute(
            "SELECT digest FROM entries WHERE digest >= ? AND digest < ? LIMIT ?",
            (prefix, upper, limit))]

    def entries(self, start: int = 0, stop: int | None = None,
                batch: int = 2000) -> Iterator[StoredEntry]:
        """Every stored entry in seq order (raw rows: gaps and all, for verify)."""
        sql = f"SELECT {ENTRY_COLUMNS} FROM entries WHERE seq >= ?"
        args: list[Any] = [start]
        if stop is not None:
            sql += " AND seq < ?"
            args.append(stop)
        cur = self.conn.execute(sql + " ORDER BY seq", args)
        while rows := cur.fetchmany(batch):
            for row in rows:
                yield stored_entry(row, self.conn)

    def entries_where(self, kind: str | None = None, plan: str | None = None,
                      last: int | None = None,
                      targets: list[str] | None = None) -> list[StoredEntry]:
        if targets is not None:  # found in the index, read by seq
            return self.entries_at(self.seqs_targeting(str(kind), targets))
        clauses, args = [], []
        if kind:
            clauses.append("i.kind = ?")
            args.append(kind)
        if plan:
            # two indexed lookups (an OR of the two columns would scan the whole index); with
            # a kind, the (plan, kind) index reads only that kind's rows of a large plan
            same = " AND kind = ?" if kind else ""
            clauses.append(f"i.seq IN (SELECT seq FROM entry_index WHERE plan = ?{same} "
                           "UNION ALL SELECT seq FROM entries WHERE digest = ?)")
            args += [plan, *([kind] if kind else []), plan]
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        # ORDER BY i.seq (the same number): by e.seq SQLite would sort instead of walk an index
        sql = ("SELECT e.seq, e.digest, CAST(e.entry AS BLOB), e.signature FROM entries e "
               f"JOIN entry_index i ON i.seq = e.seq{where} ORDER BY i.seq")
        if last is None:
            return [stored_entry(r, self.conn) for r in self.conn.execute(sql, args)]
        rows = self.conn.execute(sql + " DESC LIMIT ?", [*args, last]).fetchall()
        return [stored_entry(r, self.conn) for r in reversed(rows)]

    def runs_with_source(self, keys: list[str]) -> list[tuple[int, str, bytes]]:
        """(seq, digest, bytes) of the runs recorded under any of the source ``keys``."""
        if not keys:
            return []
        sql = ("SELECT DISTINCT e.seq, e.digest, e.entry FROM run_sources s JOIN entries e "
               f"ON e.seq = s.seq WHERE s.key IN ({','.join('?' * len(keys))}) ORDER BY e.seq")
        return [(r[0], r[1], bytes(r[2])) for r in self.conn.execute(sql, keys)]

    def schema_problems(self) -> list[str]:
        """What the file lacks of the tables and columns its migrations made."""
        from logbook.storage.schema_check import problems
        from logbook.storage.sqlite.schema import expected_columns, table_columns

        return problems(expected_columns(), table_columns(self.conn))

    def kind_of(self, digest: str) -> tuple[int, str] | None:
        # the digest is looked up through entries' own unique index (one index fewer to write)
        row = self.conn.execute("SELECT i.seq, i.kind FROM entries e JOIN entry_index i "
                                "ON i.seq = e.seq WHERE e.digest = ?",
                                (digest,)).fetchone()
        return (row[0], row[1]) if row else None

    def once_digest(self, key: str) -> str | None:
        row = self.conn.execute("SELECT digest FROM once_keys WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def tree_node(self, level: int, idx: int) -> bytes:
        """A complete subtree's hash. Leaves (level 0) are not stored: a leaf hash is
        SHA-256(0x00 || digest of entry idx), computed from the entries table."""
        if level == 0:
            row = self.conn.execute("SELECT digest FROM entries WHERE seq = ?",
                                    (idx,)).fetchone()
            if row is None:
                raise TreeDamaged(f"tree leaf {idx} is missing")
            try:
                return leaf_hash(bytes.fromhex(row[0]))
            except ValueError:
                raise TreeDamaged(f"the stored digest of entry {idx} is not hex") from None
        row = self.conn.execute("SELECT hash FROM tree WHERE level = ? AND idx = ?",
                                (level, idx)).fetchone()
        if row is None:
            raise TreeDamaged(f"tree node ({level}, {idx}) is missing")
        if not isinstance(row[0], bytes) or len(row[0]) != 32:
            raise TreeDamaged(f"tree node ({level}, {idx}) is not a 32-byte hash")
        return bytes(row[0])

class TreeDamaged(StorageDamaged, LookupError):
    """A node of the stored Merkle tree is missing or malformed (exit 1; a LookupError for
    the callers that check a proof against the tree)."""
