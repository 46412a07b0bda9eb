"""The append transaction's writes (part of the store: with store.py, store_schema.py and
store_summaries.py, the only modules that speak SQL)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from logbook.errors import InputError
from logbook.storage.index import INDEX_COLUMNS, OUTCOME_COLUMNS, IndexRow, OutcomeRow
from logbook.storage.sqlite.summaries import StoredEntry

if TYPE_CHECKING:
    from logbook.storage.sqlite.store import Store


class Txn:
    """Writes allowed inside one append transaction."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn = store.conn
        self._nodes: dict[tuple[int, int], bytes] = {}
        self._pending: list[tuple[int, int, bytes]] = []

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, args)

    def insert_entry(self, stored: StoredEntry) -> None:
        self.conn.execute("INSERT INTO entries (seq, digest, entry, signature) VALUES (?,?,?,?)",
                          (stored.seq, stored.digest, stored.entry, stored.signature))

    def insert_index(self, row: IndexRow) -> None:
        try:
            self.conn.execute(f"INSERT INTO entry_index ({', '.join(INDEX_COLUMNS)}) "
                              f"VALUES ({','.join('?' * len(INDEX_COLUMNS))})", row.as_tuple())
        except sqlite3.IntegrityError as exc:
            if row.slug and "slug" in str(exc):
                raise InputError(f"body.slug: a plan with slug {row.slug!r} already exists") \
                    from None
            raise

    def insert_outcome(self, row: OutcomeRow) -> None:
        self.conn.execute(f"INSERT INTO outcomes ({', '.join(OUTCOME_COLUMNS)}) "
                          f"VALUES ({','.join('?' * len(OUTCOME_COLUMNS))})", row.as_tuple())

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
        return h if h is not None else self.store.tree_node(level, idx)

    def insert_sources(self, seq: int, keys: list[str]) -> None:
        self.conn.executemany("INSERT INTO run_sources (key, seq) VALUES (?,?)",
                              [(k, seq) for k in keys])

    def remember_once(self, key: str, digest: str) -> None:
        self.conn.execute("INSERT INTO once_keys (key, digest) VALUES (?,?)", (key, digest))
