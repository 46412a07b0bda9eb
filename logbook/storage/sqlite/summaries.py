"""The lookups on the index and keys that the store and this machine's checked copy share
(IndexQueries), and the store's read of entries by seq (SQL lives only in storage/sqlite/)."""

from __future__ import annotations

import sqlite3

from logbook.errors import StorageDamaged
from logbook.storage.base import KeyRow, StoredEntry, sql_type


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
    (logbook.storage.sqlite.read_model), which holds the same tables but no entries."""

    conn: sqlite3.Connection

    def seqs_targeting(self, kind: str, targets: list[str]) -> list[int]:
        """Seqs of the entries of ``kind`` whose indexed target is one of ``targets``, in
        ledger order (a refused run's plan, an admission's run, a retraction's target)."""
        found: list[int] = []
        for i in range(0, len(targets), 500):
            chunk = targets[i:i + 500]
            found += (r[0] for r in self.conn.execute(
                f"SELECT seq FROM entry_index WHERE target IN ({','.join('?' * len(chunk))}) "
                "AND kind = ?", [*chunk, kind]))
        return sorted(found)

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

    def signing_keys(self) -> list[KeyRow]:
        return list(self.conn.execute(
            "SELECT fingerprint, name, public, added_seq, revoked_seq FROM signing_keys "
            "ORDER BY added_seq"))


class Summaries(IndexQueries):
    """The read that needs the entries' bytes too; mixed into SQLiteStore."""

    def entries_at(self, seqs: list[int]) -> list[StoredEntry]:
        out: list[StoredEntry] = []
        for i in range(0, len(seqs), 500):
            chunk = seqs[i:i + 500]
            out += (stored_entry(r, self.conn) for r in self.conn.execute(
                "SELECT seq, digest, CAST(entry AS BLOB), signature FROM entries WHERE seq IN "
                f"({','.join('?' * len(chunk))}) ORDER BY seq", chunk))
        return sorted(out, key=lambda e: e.seq)
