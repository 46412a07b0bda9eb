"""The stored rows a check reads, whole or from a seq on, on PostgreSQL (the SQLite twin,
logbook.storage.sqlite.rows, says what each read returns and in which order)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from logbook.storage.base import RawEntry, StoredEntry
from logbook.storage.index import INDEX_COLUMNS, OUTCOME_COLUMNS
from logbook.storage.sqlite.rows import MAX_LEVEL


def stored_entry(row: tuple[Any, ...]) -> StoredEntry:
    """The entry a row of (seq, digest, entry, signature) holds (PostgreSQL's column types
    are fixed: an altered row still has them)."""
    return StoredEntry(int(row[0]), str(row[1]), bytes(row[2]), str(row[3]))


class StoredRows:
    """Mixed into PostgresStore, which owns the connection and its batched reads: the rows a
    check reads, and entries by seq."""

    # PostgresStore's own batched and whole-query reads
    _batches: Callable[..., Iterator[tuple[Any, ...]]]
    rows: Callable[..., list[tuple[Any, ...]]]

    def raw_entries(self, since: int = 0) -> Iterator[RawEntry]:
        """PostgreSQL's column types are fixed: the bytes are always a blob."""
        for seq, digest, raw, signature in self._batches(
                f"SELECT seq, digest, entry, signature FROM entries WHERE seq >= {int(since)} "
                "ORDER BY seq"):
            yield (seq, digest, bytes(raw), signature, "blob")

    def derived_rows(self, table: str, since: int = 0) -> Iterator[tuple[Any, ...]]:
        where = f"WHERE seq >= {int(since)} ORDER BY seq"
        if table == "entry_index":
            return self._batches(f"SELECT {', '.join(INDEX_COLUMNS)} FROM entry_index {where}")
        if table == "outcomes":
            return ((*row[:5], bytes(row[5])) for row in self._batches(
                f"SELECT {', '.join(OUTCOME_COLUMNS)} FROM outcomes {where}"))
        if table == "run_sources":
            return iter([(str(r[0]), int(r[1])) for r in self.rows(
                'SELECT key, seq FROM run_sources WHERE seq >= %s ORDER BY seq, key COLLATE "C"',
                (since,))])
        if table == "tree":
            return self._tree(since)
        if table == "plan_suites":
            return self._batches(
                "SELECT * FROM (SELECT DISTINCT ON (plan) plan, seq, since, first_seq, "
                "first_hash, n_known, items_key FROM plan_suites ORDER BY plan, seq DESC) s "
                f"WHERE seq >= {int(since)}")
        if table == "plan_items":
            return self._batches(f"SELECT plan, items_key, item FROM plan_items WHERE items_key "
                                 f">= {int(since)} ORDER BY plan, items_key")
        raise ValueError(f"no derived table {table!r}")

    def _tree(self, since: int) -> Iterator[tuple[int, int, bytes]]:
        if since == 0:
            for level, idx, h in self._batches("SELECT level, idx, hash FROM tree "
                                               "ORDER BY level, idx"):
                yield (int(level), int(idx), bytes(h))
            return
        for level in range(1, MAX_LEVEL):
            for lv, idx, h in self.rows("SELECT level, idx, hash FROM tree WHERE level = %s "
                                        "AND idx >= %s ORDER BY idx", (level, since >> level)):
                yield (int(lv), int(idx), bytes(h))
        # rows at no level a tree has (altered): two ranges of the key, never a whole scan
        for where, bound in (("level < %s", 1), ("level >= %s", MAX_LEVEL)):
            for lv, idx, h in self.rows(f"SELECT level, idx, hash FROM tree WHERE {where} "
                                        "ORDER BY level, idx", (bound,)):
                yield (int(lv), int(idx), bytes(h))

    def entries_at(self, seqs: list[int]) -> list[StoredEntry]:
        if not seqs:
            return []
        return [stored_entry(r) for r in self.rows(
            "SELECT seq, digest, entry, signature FROM entries WHERE seq = ANY(%s) ORDER BY seq",
            (seqs,))]
