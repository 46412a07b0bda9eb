"""What a SQLite ledger keeps beside its entries, read back: the checkpoints and audits (not
entries, not derived; the append transaction writes them, `Txn`), and the rebuilding and
counting of the derived tables. `SQLiteStore` (logbook.storage.sqlite.store) takes these
methods from `BesideRows`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from logbook.errors import StorageDamaged
from logbook.storage.base import (
    AuditRow,
    CheckpointRow,
    Txn,
    checkpoint_type_problems,
    sql_type,
)
from logbook.storage.sqlite.schema import DERIVED_SCHEMA, DERIVED_TABLES


class BesideRows:
    conn: sqlite3.Connection

    if TYPE_CHECKING:  # the store's own
        def transaction(self, plans: Any = None, signers: Any = None
                        ) -> AbstractContextManager[Any]: ...

    # -- checkpoints and audits (kept beside the ledger, not entries; written by Txn) -----
    def checkpoints(self, checked: bool = True) -> list[CheckpointRow]:
        """The checkpoints kept, oldest first. ``checked``: StorageDamaged (exit 1) when a
        column holds the wrong SQLite type (an altered file); `verify` reads them unchecked
        and reports each such column (``checkpoint_type_problems``)."""
        rows = list(self.conn.execute(
            "SELECT id, size, root, note, created FROM checkpoints ORDER BY id"))
        problems = [p for row in rows for p in checkpoint_type_problems(row)] if checked else []
        if problems:
            path = getattr(self.conn, "ledger_path", "ledger.db")
            raise StorageDamaged(f"ledger {path} is damaged: {problems[0]} (`logbook verify` "
                                 "lists what is wrong)")
        return rows

    def audits(self, last: int | None = None) -> list[AuditRow]:
        """The audit records kept, oldest first (the last ``last``). StorageDamaged (exit 1)
        when a column holds the wrong SQLite type, as an altered file can."""
        sql = "SELECT size, at, findings FROM audits ORDER BY id"
        rows = (list(self.conn.execute(sql)) if last is None else list(reversed(
            self.conn.execute(sql + " DESC LIMIT ?", (last,)).fetchall())))
        for row in rows:
            for column, value, want in zip(("size", "at", "findings"), row, (int, str, str),
                                           strict=True):
                if type(value) is not want:
                    path = getattr(self.conn, "ledger_path", "ledger.db")
                    raise StorageDamaged(
                        f"ledger {path} is damaged: the {column} of a stored audit record is "
                        f"stored as SQLite {sql_type(value)}, not {sql_type(want())} "
                        "(audit records are kept beside the chain, unsigned: `logbook audit` "
                        "records a new one)")
        return rows

    # -- rebuilding the derived tables ------------------------------------------------------
    def rebuild_derived(self, rows: Callable[[Txn], None]) -> dict[str, int]:
        """Drop every derived row and let ``rows`` write them again, in one transaction;
        the rows of each table afterwards."""
        with self.transaction() as txn:
            for statement in DERIVED_SCHEMA:  # a derived table the file lost is made again
                txn.execute(statement)
            for table in DERIVED_TABLES:
                txn.execute(f"DELETE FROM {table}")
            rows(txn)
        return {t: int(self.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
                for t in ("entries", *DERIVED_TABLES)}


