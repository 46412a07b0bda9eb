"""The read model: what this machine has checked of one ledger (its "checked copy"), a local
SQLite file in the user's state folder (logbook.config.state_dir), never beside the ledger, or
one in memory for a command that keeps none.

After an analysis check passes (logbook.verify.integrity), the derived rows it compared with
the entries' bytes (the entry index, the Merkle tree, the signing keys) are copied here, with
the size and head digest they cover and the key history at that point. The next check then
checks only the entries appended since (logbook.verify.resume), and the analysis reads its
index and tree from this copy, never from the ledger's own derived tables, whose rows below
that size were not compared again; the entries' bytes it reads still come from the ledger,
each held to the digest recorded here (logbook.verify.checked_reads). docs/auditing.md §7
gives the argument.

A file that cannot be made or read (a read-only home, a damaged copy) is no file: the check is
then made in full, as it is without one. Nothing here is a claim anyone else relies on: it is
this user's own memory of their own checks, like a transparency-log client's last verified
checkpoint.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from logbook.errors import CopyDamaged
from logbook.storage.base import KeyRow, PlanShape, RunCount, RunRow
from logbook.storage.index import INDEX_COLUMNS, IndexRow
from logbook.storage.sqlite.copy_conn import CopyConnection, remove_copy
from logbook.storage.sqlite.schema import DERIVED_SCHEMA
from logbook.storage.sqlite.summaries import IndexQueries

_TABLES = ("entry_index", "tree", "signing_keys", "plan_shapes", "run_facts")
_SCHEMA = [s for s in DERIVED_SCHEMA
           if any(f" {t} " in s or f" {t}(" in s for t in _TABLES[:3])] + [
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS entry_index_digest ON entry_index(digest)",
    # `brief`'s latest session: the last run that names one, found at once at any size
    "CREATE INDEX IF NOT EXISTS entry_index_sessions ON entry_index(kind, seq) WHERE session "
    "IS NOT NULL",
    # and that session's runs, read without a pass over every run that names a session
    "CREATE INDEX IF NOT EXISTS entry_index_session_runs ON entry_index(session, seq) WHERE "
    "session IS NOT NULL",
    # each plan's [runs_per_arm, arms] as JSON text, from the checked bytes (what `brief`
    # reads of every plan: logbook.storage.base.PlanShape)
    "CREATE TABLE IF NOT EXISTS plan_shapes (seq INTEGER PRIMARY KEY, digest TEXT NOT NULL, "
    "shape TEXT)",
    # each run's facts as JSON text (logbook.format.runfacts), worked out from its checked
    # bytes: what the analysis reads of a run instead of parsing it
    # (with the run's index fields, from the same checked bytes: one table read in order)
    "CREATE TABLE IF NOT EXISTS run_facts (seq INTEGER PRIMARY KEY, digest TEXT NOT NULL, "
    "plan TEXT, arm TEXT, status TEXT, session TEXT, facts TEXT)",
]
_BATCH = 500
BUSY_TIMEOUT = 10.0  # seconds a check waits for another one writing the copy
class ReadModel(IndexQueries):
    """The checked copy of one ledger's index, tree and keys, and the state they cover.

    The lookups it shares with the ledger's store (targets, slugs, retractions, keys) are
    IndexQueries' own, over this file's tables; brief's summaries (completed_counts,
    run_counts, latest_session, session_runs, plans_touched) are this class's."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn, self.path = conn, path

    @classmethod
    def open(cls, path: Path) -> ReadModel | None:
        """The file at ``path`` (made when missing); None when it cannot be made or read."""
        for attempt in (0, 1):
            try:
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None,
                                       factory=CopyConnection)
                conn.copy_path = path
                try:
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                    conn.execute("PRAGMA cell_size_check=ON")
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    return cls(conn, path)
                except (sqlite3.DatabaseError, CopyDamaged):
                    conn.close()
                    raise
            except sqlite3.OperationalError:  # busy past the timeout (another check writing
                return None  # it), or unreadable: none this time, and nothing removed
            except (sqlite3.DatabaseError, CopyDamaged):
                if attempt == 0:  # not a database (damaged, truncated): made again once
                    remove_copy(path)
            except (OSError, sqlite3.Error):
                return None
        return None

    @classmethod
    def in_memory(cls) -> ReadModel:
        """A copy that lives as long as one command: where the check's rows are read from
        when no file can be kept (LOGBOOK_STATE_DIR=off, a read-only home, a copy another
        check holds), so every analysis reads through a checked index, whatever the case."""
        conn = sqlite3.connect(":memory:", isolation_level=None)
        for statement in _SCHEMA:
            conn.execute(statement)
        return cls(conn, Path(":memory:"))

    @property
    def lasting(self) -> bool:
        """Whether this copy outlives the command (a file a later check carries on from)."""
        return self.path != Path(":memory:")

    def spare(self) -> ReadModel:
        """Another copy, in memory: for a check whose rows this one cannot take."""
        return ReadModel.in_memory()

    def close(self) -> None:
        self.conn.close()

    def discard(self) -> None:
        """Remove the file (a copy found damaged): the next check makes it again."""
        if self.lasting:
            remove_copy(self.path)

    # -- the state the copy covers -----------------------------------------------------------
    def state(self) -> dict[str, Any] | None:
        """The state the copy covers, as the check wrote it (logbook.verify.integrity: format,
        ledger, size, head, checked_at), or None when there is none."""
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE name = 'state'").fetchone()
            found = orjson.loads(row[0]) if row else None
        except (sqlite3.Error, orjson.JSONDecodeError, CopyDamaged):
            return None
        return found if isinstance(found, dict) else None

    def replace(self, index: Iterable[tuple[Any, ...]], tree: Iterable[tuple[Any, ...]],
                keys: list[KeyRow], shapes: Iterable[PlanShape],
                facts: Iterable[RunRow], state: dict[str, Any], before: int = 0) -> bool:
        """Everything replaced by a full check's rows, in one transaction, if the copy still
        covers the ``before`` entries it covered when that check began (0: none); False when
        another process has carried it on meanwhile (a slower full check must not take back
        what others read through) or the file cannot be written (nothing changes then)."""
        return self._write(None, index, tree, keys, shapes, facts, state, before)

    def extend(self, size: int, index: Iterable[tuple[Any, ...]],
               tree: Iterable[tuple[Any, ...]], keys: list[KeyRow],
               shapes: Iterable[PlanShape], facts: Iterable[RunRow],
               state: dict[str, Any]) -> bool:
        """The rows of the entries checked after ``size`` added (the keys replaced), if the
        copy still covers ``size`` entries (another process may have moved it on)."""
        return self._write(size, index, tree, keys, shapes, facts, state)

    def _write(self, size: int | None, index: Iterable[tuple[Any, ...]],
               tree: Iterable[tuple[Any, ...]], keys: list[KeyRow],
               shapes: Iterable[PlanShape], facts: Iterable[RunRow],
               state: dict[str, Any], before: int = 0) -> bool:
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                now = self.state()
                covered = (now or {}).get("size")
                if size is None and (covered if isinstance(covered, int) else 0) != before:
                    conn.execute("ROLLBACK")
                    return False
                if size is None:
                    # rows of a whole ledger: into bare tables, the indexes built after them
                    # (a sorted build, not a million scattered inserts)
                    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = "
                                                "'index' AND sql IS NOT NULL").fetchall():
                        conn.execute(f"DROP INDEX {name}")
                    for table in (*_TABLES, "meta"):
                        conn.execute(f"DELETE FROM {table}")
                elif now is None or now.get("size") != size:
                    conn.execute("ROLLBACK")
                    return False
                marks = ",".join("?" * len(INDEX_COLUMNS))
                conn.executemany(f"INSERT OR REPLACE INTO entry_index VALUES ({marks})", index)
                conn.executemany("INSERT OR REPLACE INTO tree VALUES (?,?,?)", tree)
                conn.executemany("INSERT OR REPLACE INTO plan_shapes VALUES (?,?,?)", shapes)
                conn.executemany("INSERT OR REPLACE INTO run_facts VALUES (?,?,?,?,?,?,?)", facts)
                if size is None:
                    for statement in _SCHEMA:
                        conn.execute(statement)
                conn.execute("DELETE FROM signing_keys")
                conn.executemany("INSERT INTO signing_keys VALUES (?,?,?,?,?)", keys)
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('state', ?)",
                             (orjson.dumps(state).decode(),))
                conn.execute("COMMIT")
                return True
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except (OSError, sqlite3.Error, CopyDamaged):
            return False

    # -- reads over the checked copy ---------------------------------------------------------
    def digests_at(self, seqs: list[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for i in range(0, len(seqs), _BATCH):
            chunk = seqs[i:i + _BATCH]
            out.update(self.conn.execute(
                f"SELECT seq, digest FROM entry_index WHERE seq IN ({','.join('?' * len(chunk))})",
                chunk).fetchall())
        return out

    def seq_of(self, digest: str) -> int | None:
        row = self.conn.execute("SELECT seq FROM entry_index WHERE digest = ?",
                                (digest,)).fetchone()
        return row[0] if row else None

    def kind_of(self, digest: str) -> tuple[int, str] | None:
        row = self.conn.execute("SELECT seq, kind FROM entry_index WHERE digest = ?",
                                (digest,)).fetchone()
        return (row[0], row[1]) if row else None

    def digests_with_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        upper = prefix + "g"  # every hex digit sorts below "g"
        return [r[0] for r in self.conn.execute(
            "SELECT digest FROM entry_index WHERE digest >= ? AND digest < ? LIMIT ?",
            (prefix, upper, limit))]

    def seqs_where(self, kind: str | None = None, plan: str | None = None,
                   last: int | None = None, after: int = -1,
                   kinds: tuple[str, ...] = (), targets: list[str] | None = None) -> list[int]:
        """Seqs of the entries of ``kind`` (or any of ``kinds``) about ``plan`` (the plan
        itself included), after seq ``after``, in ledger order; the last ``last`` of them.
        With ``targets``: those of ``kind`` whose target is one of them (and nothing else)."""
        if targets is not None:
            return self.seqs_targeting(str(kind), targets)
        clauses: list[str] = ["seq > ?"]
        args: list[Any] = [after]
        if kind:
            clauses.append("kind = ?")
            args.append(kind)
        if kinds:
            clauses.append(f"kind IN ({','.join('?' * len(kinds))})")
            args += list(kinds)
        if plan:
            clauses.append("(plan = ? OR digest = ?)")
            args += [plan, plan]
        sql = f"SELECT seq FROM entry_index WHERE {' AND '.join(clauses)} ORDER BY seq"
        if last is None:
            return [r[0] for r in self.conn.execute(sql, args)]
        rows = self.conn.execute(sql + " DESC LIMIT ?", [*args, last]).fetchall()
        return [r[0] for r in reversed(rows)]

    def plan_shapes(self, below: int) -> list[PlanShape]:
        return list(self.conn.execute("SELECT seq, digest, shape FROM plan_shapes WHERE seq < ? "
                                      "ORDER BY seq", (below,)))

    def run_rows(self, size: int) -> Iterator[RunRow]:
        """Every run below ``size``, in ledger order: its index fields and its facts (None
        when the copy holds none for it), read as they are asked for."""
        (runs,) = self.conn.execute("SELECT count(*) FROM entry_index WHERE kind = 'run' AND "
                                    "seq < ?", (size,)).fetchone()
        (kept,) = self.conn.execute("SELECT count(*) FROM run_facts WHERE seq < ?",
                                    (size,)).fetchone()
        if runs == kept:
            yield from self.conn.execute(
                "SELECT seq, digest, plan, arm, status, session, facts FROM run_facts WHERE "
                "seq < ? ORDER BY seq", (size,))
            return
        # a copy whose facts do not cover every run (damaged): every run from the index,
        # with the facts there are
        yield from self.conn.execute(
            "SELECT i.seq, i.digest, i.plan, i.arm, i.status, i.session, f.facts FROM "
            "entry_index AS i LEFT JOIN run_facts AS f ON f.seq = i.seq AND f.digest = "
            "i.digest WHERE i.kind = 'run' AND i.seq < ? ORDER BY i.seq", (size,))

    # brief's summaries: each of the entries below ``below``, the size the reader checked
    # (another process may carry the shared copy on meanwhile: what lies beyond is not yet
    # this reader's ledger)
    def completed_counts(self, below: int) -> dict[tuple[str, str], int]:
        """Completed runs per (plan, arm), retracted ones included (brief looks again at plans
        with retractions): one pass over the partial run index."""
        return {(p, a): n for p, a, n in self.conn.execute(
            "SELECT plan, arm, count(*) FROM entry_index INDEXED BY entry_index_runs "
            "WHERE kind = 'run' AND plan IS NOT NULL AND status = 'completed' AND seq < ? "
            "GROUP BY plan, arm", (below,))}

    def run_counts(self, plans: list[str], below: int) -> list[RunCount]:
        """(plan, arm, status, count, last seq) of the unretracted runs of these plans."""
        out: list[RunCount] = []
        for i in range(0, len(plans), 500):
            chunk = plans[i:i + 500]
            out += self.conn.execute(
                "SELECT plan, arm, status, count(*), max(seq) FROM entry_index "
                f"INDEXED BY entry_index_runs WHERE kind = 'run' AND plan IN "
                f"({','.join('?' * len(chunk))}) AND seq < ? AND digest NOT IN (SELECT "
                "target FROM entry_index WHERE kind = 'retraction' AND target IS NOT NULL "
                "AND seq < ?) GROUP BY plan, arm, status", [*chunk, below, below])
        return out

    def latest_session(self, below: int) -> str | None:
        row = self.conn.execute("SELECT session FROM entry_index WHERE kind = 'run' AND "
                                "session IS NOT NULL AND seq < ? ORDER BY seq DESC LIMIT 1",
                                (below,)).fetchone()
        return row[0] if row else None

    def session_runs(self, session: str, below: int) -> list[IndexRow]:
        return [IndexRow(*r) for r in self.conn.execute(
            f"SELECT {', '.join(INDEX_COLUMNS)} FROM entry_index WHERE kind = 'run' AND "
            "session = ? AND seq < ? ORDER BY seq", (session, below))]

    def plans_touched(self, retracted: list[str], below: int) -> set[str]:
        """Plans whose run counts a glance at the index may get wrong: amended ones, and the
        plans of these retracted entries (and those entries themselves)."""
        out = {r[0] for r in self.conn.execute(
            "SELECT DISTINCT plan FROM entry_index WHERE kind = 'amendment' AND plan IS NOT "
            "NULL AND seq < ?", (below,))}
        for i in range(0, len(retracted), _BATCH):
            chunk = retracted[i:i + _BATCH]
            out.update(chunk)
            out.update(r[0] for r in self.conn.execute(
                f"SELECT plan FROM entry_index WHERE digest IN ({','.join('?' * len(chunk))}) "
                "AND plan IS NOT NULL", chunk))
        return out

    def tree_node(self, level: int, idx: int) -> bytes | None:
        """A node of the checked tree (level 0: the leaf hash of entry idx), None if absent."""
        if level == 0:
            row = self.conn.execute("SELECT digest FROM entry_index WHERE seq = ?",
                                    (idx,)).fetchone()
            if row is None:
                return None
            from logbook.tlog.merkle import leaf_hash

            return leaf_hash(bytes.fromhex(row[0]))
        row = self.conn.execute("SELECT hash FROM tree WHERE level = ? AND idx = ?",
                                (level, idx)).fetchone()
        return bytes(row[0]) if row else None

