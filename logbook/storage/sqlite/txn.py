"""The append transaction's writes (logbook.storage.base.Txn), on the store's connection; SQL
lives only in storage/sqlite/."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from logbook.errors import InputError
from logbook.storage.base import EntryLog, StoredEntry, SuiteRow
from logbook.storage.index import INDEX_COLUMNS, OUTCOME_COLUMNS
from logbook.storage.sqlite.suites import SuiteRows

_SLUG = INDEX_COLUMNS.index("slug")


class SQLiteTxn(SuiteRows):
    """Writes allowed inside one append transaction, and the suite rows its door reads
    (SuiteRows, on the same connection: they see this transaction's writes); tree nodes it has
    not made itself are read from the store's tree (``stored``)."""

    def __init__(self, conn: sqlite3.Connection, stored: EntryLog) -> None:
        self.conn = conn
        self._stored = stored
        self._nodes: dict[tuple[int, int], bytes] = {}
        self._pending: list[tuple[int, int, bytes]] = []

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, args)

    def insert_entry(self, stored: StoredEntry) -> None:
        self.conn.execute("INSERT INTO entries (seq, digest, entry, signature) VALUES (?,?,?,?)",
                          (stored.seq, stored.digest, stored.entry, stored.signature))

    def insert_index(self, row: tuple[Any, ...]) -> None:
        """One entry_index row, in INDEX_COLUMNS order."""
        try:
            self.conn.execute(f"INSERT INTO entry_index ({', '.join(INDEX_COLUMNS)}) "
                              f"VALUES ({','.join('?' * len(INDEX_COLUMNS))})", row)
        except sqlite3.IntegrityError as exc:
            slug = row[_SLUG]
            if slug and "slug" in str(exc):
                raise InputError(f"body.slug: a plan with slug {slug!r} already exists") \
                    from None
            raise

    def insert_outcome(self, row: tuple[Any, ...]) -> None:
        """One outcomes row, in OUTCOME_COLUMNS order."""
        self.conn.execute(f"INSERT INTO outcomes ({', '.join(OUTCOME_COLUMNS)}) "
                          f"VALUES ({','.join('?' * len(OUTCOME_COLUMNS))})", row)

    def add_key(self, fingerprint: str, name: str, public: str, seq: int) -> None:
        self.conn.execute("INSERT OR IGNORE INTO signing_keys (fingerprint, name, public, "
                          "added_seq) VALUES (?,?,?,?)", (fingerprint, name, public, seq))

    def revoke_key(self, fingerprint: str, seq: int) -> None:
        self.conn.execute("UPDATE signing_keys SET revoked_seq = ? WHERE fingerprint = ? "
                          "AND revoked_seq IS NULL", (seq, fingerprint))

    def insert_tree_nodes(self, nodes: list[tuple[int, int, bytes]]) -> None:
        """Queue tree nodes; interior ones are written in one statement before the commit
        (leaves are derived from the entries themselves)."""
        for level, idx, h in nodes:
            self._nodes[(level, idx)] = h
            if level:
                self._pending.append((level, idx, h))

    def flush(self) -> None:
        if self._pending:
            self.conn.executemany("INSERT INTO tree (level, idx, hash) VALUES (?,?,?)",
                                  self._pending)
            self._pending = []

    def tree_node(self, level: int, idx: int) -> bytes:
        """A tree node, from this transaction's own writes when it made it (a batch of appends
        then reads its siblings from memory, not from the table)."""
        h = self._nodes.get((level, idx))
        return h if h is not None else self._stored.tree_node(level, idx)

    def insert_sources(self, seq: int, keys: list[str]) -> None:
        self.conn.executemany("INSERT INTO run_sources (key, seq) VALUES (?,?)",
                              [(k, seq) for k in keys])

    def insert_suite(self, plan: str, seq: int, row: SuiteRow) -> None:
        self.conn.execute("INSERT INTO plan_suites (plan, seq, since, first_seq, first_hash, "
                          "n_known, items_key) VALUES (?,?,?,?,?,?,?)", (plan, seq, *row))

    def insert_suite_items(self, plan: str, items_key: int, items: Iterable[str]) -> None:
        self.conn.executemany("INSERT INTO plan_items (plan, items_key, item) VALUES (?,?,?)",
                              [(plan, items_key, i) for i in items])

    def remember_once(self, key: str, digest: str) -> None:
        self.conn.execute("INSERT INTO once_keys (key, digest) VALUES (?,?)", (key, digest))

    def add_checkpoint(self, size: int, root: str, note: str, created: str) -> None:
        self.conn.execute("INSERT INTO checkpoints (size, root, note, created) VALUES (?,?,?,?)",
                          (size, root, note, created))

    def record_audit(self, size: int, at: str, findings: str) -> None:
        self.conn.execute("INSERT INTO audits (size, at, findings) VALUES (?,?,?)",
                          (size, at, findings))
