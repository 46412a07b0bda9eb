"""The rows of the entries after a given size, on PostgreSQL (logbook.storage.base.TailReads;
the SQLite twin is logbook.storage.sqlite.tail)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from logbook.storage.base import RawEntry
from logbook.storage.index import INDEX_COLUMNS, OUTCOME_COLUMNS
from logbook.storage.sqlite.tail import MAX_LEVEL


class TailRows:
    """Mixed into PostgresStore, which owns the connection and its batched reads."""

    # PostgresStore's own batched and whole-query reads
    _batches: Callable[..., Iterator[tuple[Any, ...]]]
    rows: Callable[..., list[tuple[Any, ...]]]

    def raw_entries_since(self, seq: int) -> Iterator[RawEntry]:
        for s, digest, raw, signature in self._batches(
                f"SELECT seq, digest, entry, signature FROM entries WHERE seq >= {int(seq)} "
                "ORDER BY seq"):
            yield (s, digest, bytes(raw), signature, "blob")

    def index_rows_since(self, seq: int) -> Iterator[tuple[Any, ...]]:
        return self._batches(f"SELECT {', '.join(INDEX_COLUMNS)} FROM entry_index "
                             f"WHERE seq >= {int(seq)} ORDER BY seq")

    def outcome_rows_since(self, seq: int) -> Iterator[tuple[Any, ...]]:
        for row in self._batches(f"SELECT {', '.join(OUTCOME_COLUMNS)} FROM outcomes "
                                 f"WHERE seq >= {int(seq)} ORDER BY seq"):
            yield (*row[:5], bytes(row[5]))

    def source_rows_since(self, seq: int) -> list[tuple[str, int]]:
        return [(str(r[0]), int(r[1])) for r in self.rows(
            'SELECT key, seq FROM run_sources WHERE seq >= %s ORDER BY seq, key COLLATE "C"',
            (seq,))]

    def tree_nodes_since(self, size: int) -> Iterator[tuple[int, int, bytes]]:
        for level in range(1, MAX_LEVEL):
            for lv, idx, h in self.rows("SELECT level, idx, hash FROM tree WHERE level = %s "
                                        "AND idx >= %s ORDER BY idx", (level, size >> level)):
                yield (int(lv), int(idx), bytes(h))
        # rows at no level a tree has (altered): two ranges of the key, never a whole scan
        for where, bound in (("level < %s", 1), ("level >= %s", MAX_LEVEL)):
            for lv, idx, h in self.rows(f"SELECT level, idx, hash FROM tree WHERE {where} "
                                        "ORDER BY level, idx", (bound,)):
                yield (int(lv), int(idx), bytes(h))
