"""The append transaction's writes (logbook.storage.base.Txn) on a PostgreSQL connection.

The writes are kept and sent together (``send``): the rows for one table are one
``executemany``, and all of them go in one pipeline, so a batch of drafts costs one round
trip for its writes instead of several a draft (benchmarks/team.py). The store sends them
before any read of the transaction's own connection (PostgresStore.rows), so every read
inside the transaction still sees its writes; reading the tree (``tree_node``) does not need
to, since this transaction's nodes are kept here until its last send.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import psycopg
from psycopg import errors

from logbook.errors import InputError
from logbook.storage.base import EntryLog, KeyRow, StoredEntry, SuiteRow
from logbook.storage.index import INDEX_COLUMNS, OUTCOME_COLUMNS
from logbook.storage.postgres.prefetch import Prefetched, absorb, statements
from logbook.storage.postgres.suites import SuiteRows
from logbook.tlog.merkle import leaf_hash

_ENTRY_SQL = "INSERT INTO entries (seq, digest, entry, signature) VALUES (%s,%s,%s,%s)"
_INDEX_SQL = (f"INSERT INTO entry_index ({', '.join(INDEX_COLUMNS)}) "
              f"VALUES ({','.join(['%s'] * len(INDEX_COLUMNS))})")
_OUTCOME_SQL = (f"INSERT INTO outcomes ({', '.join(OUTCOME_COLUMNS)}) "
                f"VALUES ({','.join(['%s'] * len(OUTCOME_COLUMNS))})")
_KEY_SQL = ("INSERT INTO signing_keys (fingerprint, name, public, added_seq) "
            "VALUES (%s,%s,%s,%s) ON CONFLICT (fingerprint) DO NOTHING")
_REVOKE_SQL = ("UPDATE signing_keys SET revoked_seq = %s WHERE fingerprint = %s "
               "AND revoked_seq IS NULL")
_SOURCE_SQL = "INSERT INTO run_sources (key, seq) VALUES (%s,%s)"
_ONCE_SQL = "INSERT INTO once_keys (key, digest) VALUES (%s,%s)"
_SUITE_SQL = ("INSERT INTO plan_suites (plan, seq, since, first_seq, first_hash, n_known, "
              "items_key) VALUES (%s,%s,%s,%s,%s,%s,%s)")
_ITEM_SQL = "INSERT INTO plan_items (plan, items_key, item) VALUES (%s,%s,%s)"
_TREE_SQL = "INSERT INTO tree (level, idx, hash) VALUES (%s,%s,%s)"
_CHECKPOINT_SQL = "INSERT INTO checkpoints (size, root, note, created) VALUES (%s,%s,%s,%s)"
_AUDIT_SQL = "INSERT INTO audits (size, at, findings) VALUES (%s,%s,%s)"
_HEAD_SQL = "UPDATE head SET size = %s, digest = %s WHERE id = 1"
_LAST_ENTRY = "SELECT seq, digest FROM entries ORDER BY seq DESC LIMIT 1"
# the left siblings the next appends need: for each level L whose bit is set in the size n,
# the complete subtree (L, n >> L minus 1) (leaves are the entries' digests: the last one is
# read by _LAST_ENTRY)
_FRONTIER = ("SELECT t.level, t.idx, t.hash FROM (SELECT coalesce(max(seq) + 1, 0) AS n "
             "FROM entries) s CROSS JOIN generate_series(1, 62) AS l(level) JOIN tree t ON "
             "t.level = l.level AND t.idx = (s.n >> l.level) - 1 WHERE (s.n >> l.level) & 1 = 1")
_KIND, _PLAN = INDEX_COLUMNS.index("kind"), INDEX_COLUMNS.index("plan")
_TAKEN = re.compile(r"Key \(slug\)=\((.*)\) already exists", re.S)


def slug_taken(exc: errors.UniqueViolation) -> str | None:
    """The plan slug a refused entry_index row had, or None for another unique violation."""
    if exc.diag.constraint_name != "entry_index_slug":
        return None
    found = _TAKEN.search(exc.diag.message_detail or "")
    return found.group(1) if found else "?"


_VALUES = re.compile(r"VALUES (\(%s(?:, ?%s)*\))")
_MAX_PARAMS = 65535  # the protocol's limit on one statement's parameters


def _multi_row(sql: str, rows: list[tuple[Any, ...]]) -> Iterator[tuple[bytes, list[Any]]]:
    """One INSERT of many rows (``VALUES (...), (...)``) for each slice of ``rows`` that fits
    the protocol's parameter limit: a batch's 150 outcome rows are one statement, not 150
    executions (whose client-side cost, paid while the head's lock is held, was most of a
    batch's)."""
    found = _VALUES.search(sql)
    assert found is not None, sql
    one = found.group(1)
    per = max(1, _MAX_PARAMS // one.count("%s"))
    for lo in range(0, len(rows), per):
        part = rows[lo:lo + per]
        values = "VALUES " + ",".join([one] * len(part))
        query = sql[:found.start()] + values + sql[found.end():]
        yield query.encode(), [v for row in part for v in row]


class PostgresTxn(SuiteRows):
    """Writes allowed inside one append transaction, and the suite rows its door reads
    (SuiteRows); tree nodes it has not made itself are read from the store's tree
    (``stored``), on the same connection and transaction. ``rows``: the store's query, which
    sends this transaction's writes so far first."""

    def __init__(self, conn: psycopg.Connection[Any], stored: EntryLog,
                 rows: Callable[[str, tuple[Any, ...] | list[Any]], list[tuple[Any, ...]]]
                 ) -> None:
        self.conn = conn
        self._stored = stored
        self._rows = rows
        self._nodes: dict[tuple[int, int], bytes] = {}
        self._tree: list[tuple[int, int, bytes]] = []
        self._writes: list[tuple[str, tuple[Any, ...]]] = []  # in the order they were made
        self.head: tuple[int, str | None] = (0, None)  # (size, digest) as written so far
        self._moved = False
        self.keys: list[KeyRow] | None = None  # the ledger's keys, as read in this txn
        self.kinds: dict[str, tuple[int, str]] = {}  # digest -> (seq, kind), as read in it
        self.prefetched = Prefetched()  # what the drafts will ask, asked at once (prefetch.py)

    def rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        return self._rows(sql, args)

    def begin(self, lock_ms: int, plans: Mapping[str, list[str]] | None = None,
              signers: Sequence[str] = ()) -> None:
        """BEGIN, take the head's row lock (waiting at most ``lock_ms``), and read the head
        and the tree's frontier, and what the drafts will ask of ``plans`` and ``signers``
        (prefetch.py): one simple query, whose statements run in turn, each with a snapshot
        of its own (READ COMMITTED), so all are read after the lock is held."""
        plans, signers = plans or {}, list(signers)
        ask = statements(self.conn, plans, signers) if plans or signers else ""
        cur = self.conn.execute(
            f"BEGIN; SET LOCAL lock_timeout = {lock_ms}; SELECT size FROM head WHERE id = 1 "
            f"FOR UPDATE; {_LAST_ENTRY}; {_FRONTIER}{'; ' + ask if ask else ''}".encode())
        for _ in range(3):
            cur.nextset()
        last = cur.fetchone()
        self.head = (0, None) if last is None else (int(last[0]) + 1, str(last[1]))
        cur.nextset()
        self._know_frontier(self.head, cur.fetchall())
        if ask:
            results = []
            while cur.nextset():
                results.append(cur.fetchall())
            self.keys = absorb(results, self.prefetched, self.kinds, plans, signers)

    def _know_frontier(self, head: tuple[int, str | None],
                       nodes: list[tuple[Any, ...]]) -> None:
        """Keep the stored nodes the next appends need (read with the lock): the last leaf and
        the interior frontier, so that appending does not read them one by one. A malformed
        one is not kept: reading it from the store then says what is wrong with it."""
        size, digest = head
        if digest is not None and size & 1:
            with contextlib.suppress(ValueError):
                self._nodes[(0, size - 1)] = leaf_hash(bytes.fromhex(digest))
        for level, idx, h in nodes:
            if len(h) == 32:
                self._nodes[(int(level), int(idx))] = bytes(h)

    @property
    def pending(self) -> bool:
        return bool(self._writes)

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        self.send()
        self.conn.execute(sql.encode(), args)

    def insert_entry(self, stored: StoredEntry) -> None:
        self._writes.append((_ENTRY_SQL, (stored.seq, stored.digest, stored.entry,
                                          stored.signature)))
        self.head = (stored.seq + 1, stored.digest)
        self._moved = True

    def insert_index(self, row: tuple[Any, ...]) -> None:
        """One entry_index row, in INDEX_COLUMNS order (a slug taken: see ``send``)."""
        self._writes.append((_INDEX_SQL, row))
        self.prefetched.wrote(row[_KIND], row[_PLAN])

    def insert_outcome(self, row: tuple[Any, ...]) -> None:
        self._writes.append((_OUTCOME_SQL, row))

    def add_key(self, fingerprint: str, name: str, public: str, seq: int) -> None:
        self._writes.append((_KEY_SQL, (fingerprint, name, public, seq)))
        self.keys = None

    def revoke_key(self, fingerprint: str, seq: int) -> None:
        self._writes.append((_REVOKE_SQL, (seq, fingerprint)))
        self.keys = None

    def insert_tree_nodes(self, nodes: list[tuple[int, int, bytes]]) -> None:
        """Keep tree nodes; interior ones are written with the last send (leaves are derived
        from the entries themselves)."""
        for level, idx, h in nodes:
            self._nodes[(level, idx)] = h
            if level:
                self._tree.append((level, idx, h))

    def insert_sources(self, seq: int, keys: list[str]) -> None:
        self._writes.extend((_SOURCE_SQL, (k, seq)) for k in keys)

    def insert_suite(self, plan: str, seq: int, row: SuiteRow) -> None:
        self._writes.append((_SUITE_SQL, (plan, seq, *row)))
        self.prefetched.wrote_suite(plan)

    def insert_suite_items(self, plan: str, items_key: int, items: Iterable[str]) -> None:
        self._writes.extend((_ITEM_SQL, (plan, items_key, i)) for i in items)

    def remember_once(self, key: str, digest: str) -> None:
        self._writes.append((_ONCE_SQL, (key, digest)))

    def add_checkpoint(self, size: int, root: str, note: str, created: str) -> None:
        self._writes.append((_CHECKPOINT_SQL, (size, root, note, created)))

    def record_audit(self, size: int, at: str, findings: str) -> None:
        self._writes.append((_AUDIT_SQL, (size, at, findings)))

    def send(self, commit: bool = False) -> None:
        """Write what is kept: one executemany a table (each table's rows in the order they
        were made; a revocation after everything made before it), all in one pipeline, one
        round trip, with the COMMIT when ``commit``. A plan slug already taken is bad input
        (exit 2)."""
        if not self._writes and not commit:
            return
        writes, self._writes = self._writes, []
        runs: list[tuple[str, list[tuple[Any, ...]]]] = []
        group: dict[str, list[tuple[Any, ...]]] = {}  # rows by statement since the last UPDATE
        for sql, args in writes:
            if sql == _REVOKE_SQL:  # it may revoke a key added above: in order, alone
                runs += group.items()
                runs.append((sql, [args]))
                group = {}
            else:
                group.setdefault(sql, []).append(args)
        runs += group.items()
        try:
            with self.conn.pipeline(), self.conn.cursor() as cur:
                for sql, rows in runs:
                    if len(rows) > 1 and sql.startswith("INSERT"):
                        for query, params in _multi_row(sql, rows):
                            cur.execute(query, params)
                    else:
                        cur.executemany(sql.encode(), rows)
                if commit:
                    cur.execute(b"COMMIT")
        except errors.UniqueViolation as exc:
            slug = slug_taken(exc)
            if slug is None:
                raise
            raise InputError(f"body.slug: a plan with slug {slug!r} already exists") from None

    def flush(self, commit: bool = False) -> None:
        """The last writes of the transaction: what is kept, the tree's interior nodes and the
        head moved; with ``commit``, its COMMIT in the same round trip."""
        if self._tree:
            self._writes.extend((_TREE_SQL, node) for node in self._tree)
            self._tree = []
        if self._moved:
            self._writes.append((_HEAD_SQL, self.head))
        self.send(commit)

    def tree_node(self, level: int, idx: int) -> bytes:
        h = self._nodes.get((level, idx))
        return h if h is not None else self._stored.tree_node(level, idx)
