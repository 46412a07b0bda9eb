"""The summaries `brief` reads from the index (logbook.storage.base.EntryLog; SQL lives only
in storage/sqlite/). A finished plan is never parsed, and what rests on a retraction is found by
a byte search before any entry is parsed."""

from __future__ import annotations

import sqlite3

from logbook.errors import StorageDamaged
from logbook.storage.base import KeyRow, PlanShape, RunCount, StoredEntry, sql_type
from logbook.storage.index import INDEX_COLUMNS, IndexRow, mentioning

SCAN_BATCH = 5000  # entries per buffer in entries_mentioning


def stored_entry(row: tuple[object, ...], conn: sqlite3.Connection) -> StoredEntry:
    """The entry a row of (seq, digest, CAST(entry AS BLOB), signature) holds; StorageDamaged
    (exit 1, one sentence) when a column holds the wrong SQLite type, as an altered file can:
    no reader then prints bytes as a digest or crashes writing them as JSON."""
    if (type(row[0]) is int and type(row[1]) is str and type(row[2]) is bytes
            and type(row[3]) is str):  # the common case, without the loop below
        return StoredEntry(*row)  # type: ignore[arg-type]
    for column, value, want in zip(("seq", "digest", "entry", "signature"), row,
                                   (int, str, bytes, str), strict=True):
        if not isinstance(value, want):
            path = getattr(conn, "ledger_path", "ledger.db")
            raise StorageDamaged(
                f"ledger {path} is damaged: the {column} of entry {row[0]} is stored as SQLite "
                f"{sql_type(value)}, not {sql_type(want())} (`logbook verify` lists what is "
                "wrong)")
    return StoredEntry(*row)  # type: ignore[arg-type]


class IndexQueries:
    """Read-only queries on the derived tables alone (the index and the keys): mixed into
    SQLiteStore, which owns the connection, and into this machine's checked copy
    (logbook.storage.sqlite.checked_copy), which holds the same tables but no entries."""

    conn: sqlite3.Connection

    def completed_counts(self) -> dict[tuple[str, str], int]:
        """Completed runs per (plan, arm), retracted ones included (brief looks again at plans
        with retractions): one pass over the partial run index."""
        return {(p, a): n for p, a, n in self.conn.execute(
            "SELECT plan, arm, count(*) FROM entry_index INDEXED BY entry_index_runs "
            "WHERE kind = 'run' AND plan IS NOT NULL AND status = 'completed' "
            "GROUP BY plan, arm")}

    def run_counts(self, plans: list[str]) -> list[RunCount]:
        """(plan, arm, status, count, last seq) of the unretracted runs of these plans."""
        out: list[RunCount] = []
        for i in range(0, len(plans), 500):
            chunk = plans[i:i + 500]
            out += self.conn.execute(
                "SELECT plan, arm, status, count(*), max(seq) FROM entry_index "
                f"INDEXED BY entry_index_runs WHERE kind = 'run' AND plan IN "
                f"({','.join('?' * len(chunk))}) AND digest NOT IN (SELECT target FROM "
                "entry_index WHERE kind = 'retraction' AND target IS NOT NULL) "
                "GROUP BY plan, arm, status", chunk)
        return out

    def latest_session(self) -> str | None:
        row = self.conn.execute("SELECT session FROM entry_index WHERE kind = 'run' AND "
                                "session IS NOT NULL ORDER BY seq DESC LIMIT 1").fetchone()
        return row[0] if row else None

    def session_runs(self, session: str) -> list[IndexRow]:
        return [IndexRow(*r) for r in self.conn.execute(
            f"SELECT {', '.join(INDEX_COLUMNS)} FROM entry_index WHERE kind = 'run' AND "
            "session = ? ORDER BY seq", (session,))]

    def plan_digest_by_slug(self, slug: str) -> str | None:
        row = self.conn.execute("SELECT digest FROM entry_index WHERE slug = ?",
                                (slug,)).fetchone()
        return row[0] if row else None

    def retractions_of(self, digests: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for i in range(0, len(digests), 500):
            chunk = digests[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for target, digest in self.conn.execute(
                    f"SELECT target, digest FROM entry_index WHERE kind = 'retraction' "
                    f"AND target IN ({marks}) ORDER BY seq", chunk):
                out.setdefault(target, []).append(digest)
        return out

    def key_is_valid(self, fingerprint: str) -> bool:
        row = self.conn.execute("SELECT revoked_seq FROM signing_keys WHERE fingerprint = ?",
                                (fingerprint,)).fetchone()
        return row is not None and row[0] is None

    def signing_keys(self) -> list[KeyRow]:
        return list(self.conn.execute(
            "SELECT fingerprint, name, public, added_seq, revoked_seq FROM signing_keys "
            "ORDER BY added_seq"))


class Summaries(IndexQueries):
    """The summaries `brief` reads that need the entries' bytes too; mixed into SQLiteStore."""

    def entries_mentioning(self, kinds: tuple[str, ...], after: int,
                           needles: list[str]) -> list[StoredEntry]:
        """Entries of ``kinds`` after seq ``after`` whose bytes contain any of ``needles``, so
        that callers parse only the candidates. The search runs over batches of entries joined
        into one buffer (bytes.find is a fast substring search; SQLite's instr() is not)."""
        if not needles:
            return []
        wanted = [n.encode() for n in needles]
        cur = self.conn.execute(
            "SELECT e.seq, e.digest, CAST(e.entry AS BLOB), e.signature FROM entries e "
            "JOIN entry_index i "
            f"ON i.seq = e.seq WHERE i.kind IN ({','.join('?' * len(kinds))}) AND i.seq > ? "
            "ORDER BY i.seq", [*kinds, after])
        found: list[StoredEntry] = []
        while rows := cur.fetchmany(SCAN_BATCH):
            found += (stored_entry(rows[i], self.conn)
                      for i in mentioning([bytes(r[2]) for r in rows], wanted))
        return found

    def plan_shapes(self) -> list[PlanShape]:
        """(seq, digest, JSON text of [body.runs_per_arm, body.arms]) of every plan, extracted
        by SQLite's JSON functions so that no finished plan is parsed in Python (an SQLite
        built without them, before 3.38, gets the same from Python)."""
        try:
            return list(self.conn.execute(
                "SELECT i.seq, i.digest, json_extract(CAST(e.entry AS TEXT), "
                "'$.body.runs_per_arm', '$.body.arms') FROM entry_index i JOIN entries e "
                "ON e.seq = i.seq WHERE i.kind = 'plan' ORDER BY i.seq"))
        except sqlite3.OperationalError as exc:
            if "json_extract" not in str(exc):
                raise
            return self.plan_shapes_parsed()

    def plan_shapes_parsed(self) -> list[PlanShape]:
        """plan_shapes by parsing each plan in Python."""
        import orjson

        out = []
        for seq, digest, entry in self.conn.execute(
                "SELECT i.seq, i.digest, CAST(e.entry AS BLOB) FROM entry_index i JOIN entries e "
                "ON e.seq = i.seq WHERE i.kind = 'plan' ORDER BY i.seq"):
            body = orjson.loads(entry).get("body") or {}
            shape = [body.get("runs_per_arm"), body.get("arms")]
            out.append((seq, digest, orjson.dumps(shape).decode()))
        return out

    def plans_touched(self, retracted: list[str]) -> set[str]:
        """Plans whose run counts a glance at the index may get wrong: amended ones, and the
        plans of these retracted entries (and those entries themselves)."""
        out = {r[0] for r in self.conn.execute(
            "SELECT DISTINCT plan FROM entry_index WHERE kind = 'amendment' AND plan IS NOT NULL")}
        for i in range(0, len(retracted), 500):
            chunk = retracted[i:i + 500]
            out.update(chunk)
            out.update(r[0] for r in self.conn.execute(
                "SELECT i.plan FROM entries e JOIN entry_index i ON i.seq = e.seq WHERE "
                f"e.digest IN ({','.join('?' * len(chunk))}) AND i.plan IS NOT NULL", chunk))
        return out

    def entries_at(self, seqs: list[int]) -> list[StoredEntry]:
        out: list[StoredEntry] = []
        for i in range(0, len(seqs), 500):
            chunk = seqs[i:i + 500]
            out += (stored_entry(r, self.conn) for r in self.conn.execute(
                "SELECT seq, digest, CAST(entry AS BLOB), signature FROM entries WHERE seq IN "
                f"({','.join('?' * len(chunk))}) ORDER BY seq", chunk))
        return sorted(out, key=lambda e: e.seq)
