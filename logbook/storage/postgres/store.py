"""The PostgreSQL store (logbook.storage.base.EntryLog; DESIGN §10): the team ledger. With its
companions schema.py (the migrations), summaries.py (what ``brief`` reads), txn.py (the append
transaction's writes), beside.py (checkpoints and audits) and conn.py (connecting, and the
one-sentence errors).

An append is one transaction that locks the one-row ``head`` table (``SELECT ... FOR UPDATE``,
waiting at most LOGBOOK_LOCK_TIMEOUT), reads ``seq`` and ``prev`` from the entries, writes the
entries, their derived rows (logbook.storage.index, never this package) and tree nodes, moves
the head and commits: any number of writers on any number of machines keep one chain.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import count
from pathlib import Path
from typing import Any, ClassVar

import psycopg
from psycopg import pq

from logbook.errors import EnvironmentProblem, InputError
from logbook.storage.base import KeyRow, StoredEntry
from logbook.storage.postgres.beside import BesideRows
from logbook.storage.postgres.blobs import BlobRows
from logbook.storage.postgres.conn import connect, display, lock_wait_ms, problem
from logbook.storage.postgres.prefetch import KEYS_SQL, key_rows
from logbook.storage.postgres.rows import StoredRows, stored_entry
from logbook.storage.postgres.schema import MIGRATIONS
from logbook.storage.postgres.txn import PostgresTxn
from logbook.storage.sqlite.store import TreeDamaged
from logbook.tlog.merkle import leaf_hash

SCHEMA_VERSION = len(MIGRATIONS)
_ENTRY = "seq, digest, entry, signature"
_MIGRATION_LOCK = 0x6C6F67626F6F6B  # "logbook": the advisory lock migrations take
_CURSORS = count()  # server-side cursors' names: scans may interleave (verify's do)


class PostgresStore(BlobRows, StoredRows, BesideRows):
    """One ledger in a PostgreSQL database, its logs in it (blobs.py). Open for writing
    (migrates) or read-only (never migrates; every transaction is READ ONLY)."""

    # Called after a transaction's writes are made, just before they are sent with its COMMIT.
    # A test seam, installed only by tests (tests/storage/test_postgres_faults.py kills the
    # process there).
    before_commit: ClassVar[Callable[[], None] | None] = None

    def __init__(self, conn: psycopg.Connection[Any], url: str, writable: bool) -> None:
        self.conn = conn
        self.url = url
        self.where = display(url)
        self.writable = writable
        self._txn: PostgresTxn | None = None  # the append transaction under way, if any

    @property
    def path(self) -> Path:
        """The URL without its password (a Path only because the protocol says so)."""
        return Path(self.where)

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def create(cls, url: str) -> PostgresStore:
        store = cls._open(url, writable=True, create=True)
        return store

    @classmethod
    def open_write(cls, url: str) -> PostgresStore:
        return cls._open(url, writable=True, create=False)

    @classmethod
    def open_read(cls, url: str) -> PostgresStore:
        return cls._open(url, writable=False, create=False)

    @classmethod
    def _open(cls, url: str, writable: bool, create: bool) -> PostgresStore:
        conn = connect(url, writer=writable)
        store = cls(conn, url, writable)
        try:
            version = store._version()
            if create and version and store.rows("SELECT 1 FROM entries LIMIT 1"):
                raise InputError(f"a ledger already exists at {store.where}")
            if not create and version == 0:
                raise EnvironmentProblem(f"no ledger at {store.where} (the database has no "
                                         "logbook tables; create one with `logbook init`)")
            if version > SCHEMA_VERSION:
                raise EnvironmentProblem(f"{store.where} was written by a newer logbook "
                                         f"(schema {version} > {SCHEMA_VERSION})")
            if writable:
                store._migrate()
            elif version < SCHEMA_VERSION:
                raise EnvironmentProblem(
                    f"{store.where} has schema version {version}, older than "
                    f"{SCHEMA_VERSION}: open it once for writing (for example `logbook "
                    "reindex`) to migrate it")
            else:
                store.conn.execute("SET default_transaction_read_only = on")
        except psycopg.Error as exc:
            conn.close()
            raise store._problem(exc) from None
        except BaseException:
            conn.close()
            raise
        return store

    def _problem(self, exc: psycopg.Error) -> BaseException:
        found = problem(exc, self.url)
        return found if found is not None else exc

    def _version(self) -> int:
        if not self.rows("SELECT 1 FROM pg_tables WHERE schemaname = current_schema() "
                         "AND tablename = 'schema_version'"):
            return 0
        found = self.rows("SELECT max(version) FROM schema_version")
        return int(found[0][0] or 0)

    def _migrate(self) -> None:
        if self._version() == SCHEMA_VERSION:  # an agent's role may not create tables
            return
        with self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            self.conn.execute("CREATE TABLE IF NOT EXISTS schema_version "
                              "(version INTEGER PRIMARY KEY, at TIMESTAMPTZ DEFAULT now())")
            current = self._version()  # re-read inside the lock: another writer may have
            for number in range(current, SCHEMA_VERSION):
                self.conn.execute(MIGRATIONS[number].encode())
                self.conn.execute("INSERT INTO schema_version (version) VALUES (%s)",
                                  (number + 1,))

    def close(self) -> None:
        self.conn.close()

    # -- statements ----------------------------------------------------------------------
    def rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of one query (exit 3, one sentence, when the server is gone); inside an
        append transaction, after its writes so far are sent (the query sees them)."""
        if self._txn is not None and self._txn.pending:
            try:
                self._txn.send()
            except psycopg.Error as exc:
                raise self._problem(exc) from None
        return self._unsent_rows(sql, args)

    def _unsent_rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()
                     ) -> list[tuple[Any, ...]]:
        """``rows`` without sending the transaction's writes first: for what they never
        change (the tree's stored nodes and leaves: this transaction's are in its Txn)."""
        try:
            return self.conn.execute(sql.encode(), args).fetchall()
        except psycopg.Error as exc:
            raise self._problem(exc) from None

    def _batches(self, sql: str, size: int = 5000) -> Iterator[tuple[Any, ...]]:
        """The rows of one query fetched ``size`` at a time (a server-side cursor inside the
        snapshot the caller holds, or its own transaction)."""
        try:
            with self.snapshot(), self.conn.cursor(name=f"logbook_scan_{next(_CURSORS)}") as cur:
                cur.execute(sql.encode())
                while batch := cur.fetchmany(size):
                    yield from batch
        except psycopg.Error as exc:
            raise self._problem(exc) from None

    def _insert(self, sql: str, args: tuple[Any, ...]) -> None:
        try:
            with self.conn.transaction():
                self.conn.execute(sql.encode(), args)
        except psycopg.Error as exc:
            raise self._problem(exc) from None

    def _in_transaction(self) -> bool:
        return self.conn.info.transaction_status != pq.TransactionStatus.IDLE

    # -- the append transaction ----------------------------------------------------------
    @contextmanager
    def transaction(self, plans: Mapping[str, list[str]] | None = None,
                    signers: Sequence[str] = ()) -> Iterator[PostgresTxn]:
        """One transaction holding the head's row lock: appenders serialise here.

        Few round trips, since every one is made while the other writers wait: BEGIN, the
        lock, the read of the head and what the drafts will ask of ``plans`` and ``signers``
        (prefetch.py) are one (``head()`` then answers from this transaction's writes); the
        writes are sent together, with the COMMIT (PostgresTxn)."""
        if not self.writable:  # pragma: no cover - a programming error
            raise RuntimeError("store opened read-only")
        txn = PostgresTxn(self.conn, self, self.rows)
        try:
            txn.begin(lock_wait_ms(), plans, signers)
            self._txn = txn
            yield txn
            hook = type(self).before_commit
            if hook is not None:
                hook()
            txn.flush(commit=True)
        except psycopg.Error as exc:
            self._rollback()
            raise self._problem(exc) from None
        except BaseException:
            self._rollback()
            raise
        finally:
            self._txn = None

    def _rollback(self) -> None:
        if self._in_transaction():
            with contextlib.suppress(psycopg.Error):  # a lost connection has nothing to undo
                self.conn.execute("ROLLBACK")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One REPEATABLE READ transaction: every read inside sees the ledger as at the first
        one, whatever is appended meanwhile (readers never block writers)."""
        if self._in_transaction():
            yield
            return
        with self.conn.transaction():
            self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield

    # -- readers -----------------------------------------------------------------------------
    def head(self) -> tuple[int, str | None]:
        """(size, digest of the last entry or None); inside an append transaction, as this
        transaction's own writes leave it (read once, under the lock)."""
        if self._txn is not None:
            return self._txn.head
        return self._stored_head()

    def _stored_head(self) -> tuple[int, str | None]:
        found = self.rows("SELECT seq, digest FROM entries ORDER BY seq DESC LIMIT 1")
        return (0, None) if not found else (int(found[0][0]) + 1, str(found[0][1]))

    def entry_by_digest(self, digest: str) -> StoredEntry | None:
        if self._txn is not None and digest in self._txn.prefetched.entries:
            return self._txn.prefetched.entries[digest]
        found = self.rows(f"SELECT {_ENTRY} FROM entries WHERE digest = %s", (digest,))
        return stored_entry(found[0]) if found else None

    def digests_with_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        upper = prefix + "g"  # every hex digit sorts below "g" (the column collates as "C")
        return [str(r[0]) for r in self.rows(
            "SELECT digest FROM entries WHERE digest >= %s AND digest < %s ORDER BY digest "
            "LIMIT %s", (prefix, upper, limit))]

    def entries(self, start: int = 0, stop: int | None = None) -> Iterator[StoredEntry]:
        """Every stored entry in seq order, fetched a batch at a time."""
        last = stop if stop is not None else 2**62
        while True:
            batch = self.rows(f"SELECT {_ENTRY} FROM entries WHERE seq >= %s AND seq < %s "
                              "ORDER BY seq LIMIT 2000", (start, last))
            yield from (stored_entry(r) for r in batch)
            if len(batch) < 2000:
                return
            start = int(batch[-1][0]) + 1

    def entries_where(self, kind: str | None = None, plan: str | None = None,
                      last: int | None = None,
                      targets: list[str] | None = None) -> list[StoredEntry]:
        if targets is not None:
            return self._targeting(str(kind), targets)
        if (self._txn is not None and kind == "amendment" and last is None
                and plan in self._txn.prefetched.amendments):
            return list(self._txn.prefetched.amendments[plan])
        clauses, args = [], []
        if kind:
            clauses.append("i.kind = %s")
            args.append(kind)
        if plan:  # two indexed lookups; with a kind, the (plan, kind) index
            same = " AND kind = %s" if kind else ""
            clauses.append(f"e.seq IN (SELECT seq FROM entry_index WHERE plan = %s{same} "
                           "UNION ALL SELECT seq FROM entries WHERE digest = %s)")
            args += [plan, *([kind] if kind else []), plan]
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        sql = ("SELECT e.seq, e.digest, e.entry, e.signature FROM entries e "
               f"JOIN entry_index i ON i.seq = e.seq{where} ORDER BY i.seq")
        if last is None:
            return [stored_entry(r) for r in self.rows(sql, args)]
        found = self.rows(sql + " DESC LIMIT %s", [*args, last])
        return [stored_entry(r) for r in reversed(found)]

    def _targeting(self, kind: str, targets: list[str]) -> list[StoredEntry]:
        if not targets:
            return []
        return [stored_entry(r) for r in self.rows(
            "SELECT e.seq, e.digest, e.entry, e.signature FROM entries e JOIN entry_index i "
            "ON i.seq = e.seq WHERE i.target = ANY(%s) AND i.kind = %s ORDER BY i.seq",
            (targets, kind))]

    def runs_with_source(self, keys: list[str]) -> list[tuple[int, str, bytes]]:
        if not keys:
            return []
        return [(int(r[0]), str(r[1]), bytes(r[2])) for r in self.rows(
            "SELECT DISTINCT e.seq, e.digest, e.entry FROM run_sources s JOIN entries e "
            "ON e.seq = s.seq WHERE s.key = ANY(%s) ORDER BY e.seq", (keys,))]

    def schema_problems(self) -> list[str]:
        """What the database lacks of the tables and columns its migrations made."""
        from logbook.storage.postgres.schema import expected_columns
        from logbook.storage.schema_check import problems

        found: dict[str, list[tuple[str, str]]] = {}
        for table, column, kind in self.rows(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"):
            found.setdefault(str(table), []).append((str(column), str(kind)))
        return problems(expected_columns(), found)

    def plan_digest_by_slug(self, slug: str) -> str | None:
        found = self.rows("SELECT digest FROM entry_index WHERE slug = %s", (slug,))
        return str(found[0][0]) if found else None

    def kind_of(self, digest: str) -> tuple[int, str] | None:
        """(seq, kind) of an entry; inside an append transaction, each digest is asked once
        (an entry's place and kind never change: a batch of runs of one plan, each naming it,
        then waits on one round trip, not one a run, while the other writers wait)."""
        txn = self._txn
        if txn is not None and digest in txn.kinds:
            return txn.kinds[digest]
        found = self.rows("SELECT i.seq, i.kind FROM entries e JOIN entry_index i "
                          "ON i.seq = e.seq WHERE e.digest = %s", (digest,))
        out = (int(found[0][0]), str(found[0][1])) if found else None
        if txn is not None and out is not None:
            txn.kinds[digest] = out
        return out

    def retractions_of(self, digests: list[str]) -> dict[str, list[str]]:
        known = None if self._txn is None else self._txn.prefetched.retractions_of(digests)
        if known is not None:
            return known
        out: dict[str, list[str]] = {}
        if digests:
            for target, digest in self.rows(
                    "SELECT target, digest FROM entry_index WHERE kind = 'retraction' "
                    "AND target = ANY(%s) ORDER BY seq", (digests,)):
                out.setdefault(target, []).append(digest)
        return out

    def signing_keys(self) -> list[KeyRow]:
        """The ledger's keys; in an append transaction, read once with its lock (until the
        transaction itself adds or revokes a key)."""
        txn = self._txn
        if txn is not None and txn.keys is not None:
            return list(txn.keys)
        keys = key_rows(self.rows(KEYS_SQL))
        if txn is not None and not txn.pending:
            txn.keys = keys
        return list(keys)

    def once_digest(self, key: str) -> str | None:
        found = self.rows("SELECT digest FROM once_keys WHERE key = %s", (key,))
        return str(found[0][0]) if found else None

    def tree_node(self, level: int, idx: int) -> bytes:
        """A complete subtree's hash; leaves are SHA-256(0x00 || digest of entry idx)."""
        if level == 0:
            found = self._unsent_rows("SELECT digest FROM entries WHERE seq = %s", (idx,))
            if not found:
                raise TreeDamaged(f"tree leaf {idx} is missing")
            try:
                return leaf_hash(bytes.fromhex(found[0][0]))
            except ValueError:
                raise TreeDamaged(f"the stored digest of entry {idx} is not hex") from None
        found = self._unsent_rows("SELECT hash FROM tree WHERE level = %s AND idx = %s",
                                  (level, idx))
        if not found:
            raise TreeDamaged(f"tree node ({level}, {idx}) is missing")
        if len(found[0][0]) != 32:
            raise TreeDamaged(f"tree node ({level}, {idx}) is not a 32-byte hash")
        return bytes(found[0][0])
