"""The store's reads of plans' shapes and of entries by seq on PostgreSQL: the same answers as
logbook.storage.sqlite.summaries, in PostgreSQL's SQL."""

from __future__ import annotations

from typing import Any

import orjson

from logbook.storage.base import PlanShape, StoredEntry


def stored_entry(row: tuple[Any, ...]) -> StoredEntry:
    """The entry a row of (seq, digest, entry, signature) holds (PostgreSQL's column types
    are fixed: an altered row still has them)."""
    return StoredEntry(int(row[0]), str(row[1]), bytes(row[2]), str(row[3]))


class Summaries:
    """Mixed into PostgresStore, which owns the connection."""

    def rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError  # pragma: no cover - PostgresStore defines it

    def plan_shapes(self) -> list[PlanShape]:
        """(seq, digest, JSON text of [body.runs_per_arm, body.arms]) of every plan, parsed in
        Python (jsonb would reorder keys and round numbers the bytes do not)."""
        out = []
        for seq, digest, entry in self.rows(
                "SELECT i.seq, i.digest, e.entry FROM entry_index i JOIN entries e "
                "ON e.seq = i.seq WHERE i.kind = 'plan' ORDER BY i.seq"):
            body = orjson.loads(bytes(entry)).get("body") or {}
            shape = [body.get("runs_per_arm"), body.get("arms")]
            out.append((int(seq), str(digest), orjson.dumps(shape).decode()))
        return out

    def entries_at(self, seqs: list[int]) -> list[StoredEntry]:
        if not seqs:
            return []
        return [stored_entry(r) for r in self.rows(
            "SELECT seq, digest, entry, signature FROM entries WHERE seq = ANY(%s) ORDER BY seq",
            (seqs,))]
