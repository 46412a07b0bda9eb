"""The stored rows a check reads, whole or from a seq on (logbook.verify.stored for the full
check, logbook.verify.resume for the one that carries an earlier check on): the entries with
the storage class their bytes were kept as, and each derived table (``DERIVED_TABLES``).
``since`` is the first seq covered; for the tree, every interior node that covers an entry at
``since`` or after."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from logbook.storage.base import RawEntry
from logbook.storage.index import INDEX_COLUMNS, OUTCOME_COLUMNS

# the stored bytes whatever SQLite type they were stored as (TEXT in an altered file)
ENTRY_COLUMNS = "seq, digest, CAST(entry AS BLOB), signature"
READ_BATCH = 2000  # rows fetched at a time (`_rows`)
MAX_LEVEL = 64  # a tree of 2**63 leaves at most: SQLite integers are 64-bit
DERIVED_TABLES = ("entry_index", "outcomes", "run_sources", "tree", "plan_suites",
                  "plan_items")
_SEQ_ORDERED = {"entry_index": f"SELECT {', '.join(INDEX_COLUMNS)} FROM entry_index",
                "outcomes": f"SELECT {', '.join(OUTCOME_COLUMNS)} FROM outcomes"}
# each plan's latest suite state row, by plan: the one the door reads (earlier rows are the
# history of appends, read by nothing)
LATEST_SUITES = ("SELECT plan, seq, since, first_seq, first_hash, n_known, items_key FROM "
                 "plan_suites s WHERE seq = (SELECT max(seq) FROM plan_suites WHERE plan = "
                 "s.plan) AND seq >= ? ORDER BY plan")


class StoredRows:
    """Mixed into SQLiteStore, which owns the connection."""

    conn: sqlite3.Connection

    def raw_entries(self, since: int = 0) -> Iterator[RawEntry]:
        """(seq, digest, stored bytes, signature, SQLite type of the stored entry) of every
        stored entry from ``since`` on, in seq order (the type is "blob" unless the file was
        altered; rows at a lower seq are not read)."""
        return self._rows(f"SELECT {ENTRY_COLUMNS}, typeof(entry) FROM entries WHERE seq >= ? "
                          "ORDER BY seq", (since,))

    def derived_rows(self, table: str, since: int = 0) -> Iterator[tuple[Any, ...]]:
        """The rows of one derived table from ``since`` on, in the order the check compares
        them: the index and outcomes by seq, the sources as (key, seq) by seq and key, the tree
        as (level, idx, hash) by level and index (with ``since``: each level from the node
        covering ``since``, then rows at no level a tree has); each plan's latest suite state
        as (plan, seq, since, first_seq, first_hash, n_known, items_key) by plan, those left by
        an entry from ``since`` on; the item sets as (plan, items_key, item) by plan and key,
        those begun from ``since`` on (a set's ids in no set order: the check sorts them)."""
        if table in _SEQ_ORDERED:
            return self._rows(f"{_SEQ_ORDERED[table]} WHERE seq >= ? ORDER BY seq", (since,))
        if table == "run_sources":
            return self._rows("SELECT key, seq FROM run_sources WHERE seq >= ? ORDER BY seq, key",
                              (since,))
        if table == "tree":
            return self._tree(since)
        if table == "plan_suites":
            return self._rows(LATEST_SUITES, (since,))
        if table == "plan_items":
            return self._rows("SELECT plan, items_key, item FROM plan_items WHERE items_key >= ? "
                              "ORDER BY plan, items_key", (since,))
        raise ValueError(f"no derived table {table!r}")

    def _tree(self, since: int) -> Iterator[tuple[Any, ...]]:
        if since == 0:
            yield from self._rows("SELECT level, idx, hash FROM tree ORDER BY level, idx")
            return
        for level in range(1, MAX_LEVEL):
            yield from self._rows("SELECT level, idx, hash FROM tree WHERE level = ? AND "
                                  "idx >= ? ORDER BY idx", (level, since >> level))
        # rows at no level a tree has (altered): two ranges of the key, never a whole scan
        yield from self._rows("SELECT level, idx, hash FROM tree WHERE level < 1 "
                              "ORDER BY level, idx")
        yield from self._rows("SELECT level, idx, hash FROM tree WHERE level >= ? "
                              "ORDER BY level, idx", (MAX_LEVEL,))

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> Iterator[Any]:
        """The rows of ``sql``, a batch at a time, their text decoded by SQLite's own UTF-8
        decoder (the connection's, which replaces what is not UTF-8, is a Python call per
        value: a fifth of verify's reads). Text that is not UTF-8 (an altered file) makes that
        decoder refuse its batch: the query is then read again from that batch on, by the
        connection's decoder, so the rows are the same either way."""
        conn, done, batch = self.conn, 0, READ_BATCH
        replacing = conn.text_factory
        cur = conn.execute(sql, args)
        while True:
            conn.text_factory = str  # only for this fetch: other reads interleave with ours
            try:
                rows = cur.fetchmany(batch)
            except sqlite3.OperationalError as exc:
                if "decode" not in str(exc):
                    raise
                break
            finally:
                conn.text_factory = replacing
            if not rows:
                return
            done += len(rows)
            yield from rows
        cur = conn.execute(f"{sql} LIMIT -1 OFFSET ?", (*args, done))
        while rows := cur.fetchmany(batch):
            yield from rows
