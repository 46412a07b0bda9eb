"""The append transaction's writes (logbook.storage.base.Txn) on a PostgreSQL connection."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import errors

from logbook.errors import InputError
from logbook.storage.base import StoredEntry, TreeReads
from logbook.storage.index import INDEX_COLUMNS, OUTCOME_COLUMNS

_SLUG = INDEX_COLUMNS.index("slug")
_INDEX_SQL = (f"INSERT INTO entry_index ({', '.join(INDEX_COLUMNS)}) "
              f"VALUES ({','.join(['%s'] * len(INDEX_COLUMNS))})")
_OUTCOME_SQL = (f"INSERT INTO outcomes ({', '.join(OUTCOME_COLUMNS)}) "
                f"VALUES ({','.join(['%s'] * len(OUTCOME_COLUMNS))})")


class PostgresTxn:
    """Writes allowed inside one append transaction; tree nodes it has not made itself are
    read from the store's tree (``stored``), on the same connection and transaction."""

    def __init__(self, conn: psycopg.Connection[Any], stored: TreeReads) -> None:
        self.conn = conn
        self._stored = stored
        self._nodes: dict[tuple[int, int], bytes] = {}
        self._pending: list[tuple[int, int, bytes]] = []
        self.head: tuple[int, str] | None = None  # (size, digest) after this transaction

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        self.conn.execute(sql, args)

    def insert_entry(self, stored: StoredEntry) -> None:
        self.conn.execute("INSERT INTO entries (seq, digest, entry, signature) "
                          "VALUES (%s,%s,%s,%s)",
                          (stored.seq, stored.digest, stored.entry, stored.signature))
        self.head = (stored.seq + 1, stored.digest)

    def insert_index(self, row: tuple[Any, ...]) -> None:
        """One entry_index row, in INDEX_COLUMNS order."""
        try:
            self.conn.execute(_INDEX_SQL, row)
        except errors.UniqueViolation as exc:
            slug = row[_SLUG]
            if slug and exc.diag.constraint_name == "entry_index_slug":
                raise InputError(f"body.slug: a plan with slug {slug!r} already exists") \
                    from None
            raise

    def insert_outcome(self, row: tuple[Any, ...]) -> None:
        self.conn.execute(_OUTCOME_SQL, row)

    def add_key(self, fingerprint: str, name: str, public: str, seq: int) -> None:
        self.conn.execute("INSERT INTO signing_keys (fingerprint, name, public, added_seq) "
                          "VALUES (%s,%s,%s,%s) ON CONFLICT (fingerprint) DO NOTHING",
                          (fingerprint, name, public, seq))

    def revoke_key(self, fingerprint: str, seq: int) -> None:
        self.conn.execute("UPDATE signing_keys SET revoked_seq = %s WHERE fingerprint = %s "
                          "AND revoked_seq IS NULL", (seq, fingerprint))

    def insert_tree_nodes(self, nodes: list[tuple[int, int, bytes]]) -> None:
        """Queue tree nodes; interior ones are written together before the commit (leaves
        are derived from the entries themselves)."""
        for level, idx, h in nodes:
            self._nodes[(level, idx)] = h
            if level:
                self._pending.append((level, idx, h))

    def flush(self) -> None:
        if self._pending:
            with self.conn.cursor() as cur:
                cur.executemany("INSERT INTO tree (level, idx, hash) VALUES (%s,%s,%s)",
                                self._pending)
            self._pending = []
        if self.head is not None:
            self.conn.execute("UPDATE head SET size = %s, digest = %s WHERE id = 1", self.head)

    def tree_node(self, level: int, idx: int) -> bytes:
        h = self._nodes.get((level, idx))
        return h if h is not None else self._stored.tree_node(level, idx)

    def insert_sources(self, seq: int, keys: list[str]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany("INSERT INTO run_sources (key, seq) VALUES (%s,%s)",
                            [(k, seq) for k in keys])

    def remember_once(self, key: str, digest: str) -> None:
        self.conn.execute("INSERT INTO once_keys (key, digest) VALUES (%s,%s)", (key, digest))
