"""The summaries `brief` reads from the index (logbook.storage.base.EntryLog) on PostgreSQL:
the same answers as logbook.storage.sqlite.summaries, in PostgreSQL's SQL."""

from __future__ import annotations

from typing import Any

import orjson

from logbook.storage.base import PlanShape, RunCount, StoredEntry
from logbook.storage.index import INDEX_COLUMNS, IndexRow, mentioning

SCAN_BATCH = 5000  # entries per buffer in entries_mentioning


def stored_entry(row: tuple[Any, ...]) -> StoredEntry:
    """The entry a row of (seq, digest, entry, signature) holds (PostgreSQL's column types
    are fixed: an altered row still has them)."""
    return StoredEntry(int(row[0]), str(row[1]), bytes(row[2]), str(row[3]))


class Summaries:
    """Read-only queries for `brief`; mixed into PostgresStore, which owns the connection."""

    def rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError  # pragma: no cover - PostgresStore defines it

    def entries_mentioning(self, kinds: tuple[str, ...], after: int,
                           needles: list[str]) -> list[StoredEntry]:
        """Entries of ``kinds`` after seq ``after`` whose bytes contain any of ``needles``."""
        if not needles:
            return []
        wanted = [n.encode() for n in needles]
        found: list[StoredEntry] = []
        start = after
        while True:
            rows = self.rows(
                "SELECT e.seq, e.digest, e.entry, e.signature FROM entries e JOIN entry_index i "
                "ON i.seq = e.seq WHERE i.kind = ANY(%s) AND i.seq > %s ORDER BY i.seq LIMIT %s",
                (list(kinds), start, SCAN_BATCH))
            if not rows:
                return found
            found += (stored_entry(rows[i])
                      for i in mentioning([bytes(r[2]) for r in rows], wanted))
            start = int(rows[-1][0])

    def completed_counts(self) -> dict[tuple[str, str], int]:
        return {(p, a): int(n) for p, a, n in self.rows(
            "SELECT plan, arm, count(*) FROM entry_index WHERE kind = 'run' AND plan IS NOT NULL "
            "AND status = 'completed' GROUP BY plan, arm "
            'ORDER BY plan COLLATE "C", arm COLLATE "C"')}

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

    def plans_touched(self, retracted: list[str]) -> set[str]:
        out = {str(r[0]) for r in self.rows(
            "SELECT DISTINCT plan FROM entry_index WHERE kind = 'amendment' AND plan IS NOT NULL")}
        out.update(retracted)
        if retracted:
            out.update(str(r[0]) for r in self.rows(
                "SELECT i.plan FROM entries e JOIN entry_index i ON i.seq = e.seq WHERE "
                "e.digest = ANY(%s) AND i.plan IS NOT NULL", (retracted,)))
        return out

    def entries_at(self, seqs: list[int]) -> list[StoredEntry]:
        if not seqs:
            return []
        return [stored_entry(r) for r in self.rows(
            "SELECT seq, digest, entry, signature FROM entries WHERE seq = ANY(%s) ORDER BY seq",
            (seqs,))]

    def run_counts(self, plans: list[str]) -> list[RunCount]:
        """(plan, arm, status, count, last seq) of the unretracted runs of these plans."""
        if not plans:
            return []
        return [(r[0], r[1], r[2], int(r[3]), int(r[4])) for r in self.rows(
            "SELECT plan, arm, status, count(*), max(seq) FROM entry_index WHERE kind = 'run' "
            "AND plan = ANY(%s) AND digest NOT IN (SELECT target FROM entry_index WHERE "
            "kind = 'retraction' AND target IS NOT NULL) GROUP BY plan, arm, status "
            'ORDER BY plan COLLATE "C", arm COLLATE "C", status COLLATE "C"',
            (plans,))]

    def latest_session(self) -> str | None:
        found = self.rows("SELECT session FROM entry_index WHERE kind = 'run' AND "
                          "session IS NOT NULL ORDER BY seq DESC LIMIT 1")
        return str(found[0][0]) if found else None

    def session_runs(self, session: str) -> list[IndexRow]:
        return [IndexRow(*r) for r in self.rows(
            f"SELECT {', '.join(INDEX_COLUMNS)} FROM entry_index WHERE kind = 'run' AND "
            "session = %s ORDER BY seq", (session,))]
