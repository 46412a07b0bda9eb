"""The rows of the entries after a given size, for the check that resumes from what this
machine checked before (logbook.verify.resume; logbook.storage.base.TailReads)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from logbook.storage.base import RawEntry
from logbook.storage.index import INDEX_COLUMNS, OUTCOME_COLUMNS

_ENTRY = "seq, digest, CAST(entry AS BLOB), signature"
MAX_LEVEL = 64  # a tree of 2**63 leaves at most: SQLite integers are 64-bit


class TailRows:
    """Mixed into SQLiteStore, which owns the connection."""

    conn: sqlite3.Connection

    def _since(self, sql: str, args: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        cur = self.conn.execute(sql, args)
        while rows := cur.fetchmany(2000):
            yield from rows

    def raw_entries_since(self, seq: int) -> Iterator[RawEntry]:
        """raw_entries from ``seq`` on (rows stored at a lower seq are not read)."""
        return self._since(f"SELECT {_ENTRY}, typeof(entry) FROM entries WHERE seq >= ? "
                           "ORDER BY seq", (seq,))

    def index_rows_since(self, seq: int) -> Iterator[tuple[Any, ...]]:
        return self._since(f"SELECT {', '.join(INDEX_COLUMNS)} FROM entry_index WHERE seq >= ? "
                           "ORDER BY seq", (seq,))

    def outcome_rows_since(self, seq: int) -> Iterator[tuple[Any, ...]]:
        return self._since(f"SELECT {', '.join(OUTCOME_COLUMNS)} FROM outcomes WHERE seq >= ? "
                           "ORDER BY seq", (seq,))

    def source_rows_since(self, seq: int) -> list[tuple[str, int]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT key, seq FROM run_sources WHERE seq >= ? ORDER BY seq, key", (seq,))]

    def tree_nodes_since(self, size: int) -> Iterator[tuple[int, int, bytes]]:
        """Every stored interior node that covers an entry at ``size`` or after (at each level,
        index ``size >> level`` on), in level and index order."""
        for level in range(1, MAX_LEVEL):
            yield from self._since("SELECT level, idx, hash FROM tree WHERE level = ? AND "
                                   "idx >= ? ORDER BY idx", (level, size >> level))
        # rows at no level a tree has (altered): two ranges of the key, never a whole scan
        yield from self._since("SELECT level, idx, hash FROM tree WHERE level < 1 "
                               "ORDER BY level, idx", ())
        yield from self._since("SELECT level, idx, hash FROM tree WHERE level >= ? "
                               "ORDER BY level, idx", (MAX_LEVEL,))
