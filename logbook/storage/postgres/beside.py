"""What a team ledger keeps beside its entries, read back: the checkpoints and audits (not
entries, not derived; the append transaction writes them, `Txn`), and the rebuilding and
counting of the derived tables. `PostgresStore` (logbook.storage.postgres.store) takes these
methods from `BesideRows`."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import psycopg

from logbook.storage.base import AuditRow, CheckpointRow, Txn
from logbook.storage.postgres.schema import DERIVED_TABLES


class BesideRows:
    conn: psycopg.Connection[Any]

    if TYPE_CHECKING:  # the store's own
        def transaction(self, plans: Any = None, signers: Any = None
                        ) -> AbstractContextManager[Any]: ...

        def rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()
                 ) -> list[tuple[Any, ...]]: ...

    # -- checkpoints and audits (kept beside the ledger, not entries; written by Txn) -----
    def checkpoints(self, checked: bool = True) -> list[CheckpointRow]:
        """The checkpoints kept, oldest first (the column types are fixed: ``checked`` has
        nothing to find)."""
        return [(int(r[0]), int(r[1]), r[2], r[3], r[4]) for r in self.rows(
            "SELECT id, size, root, note, created FROM checkpoints ORDER BY id")]

    def audits(self, last: int | None = None) -> list[AuditRow]:
        sql = "SELECT size, at, findings FROM audits ORDER BY id"
        rows = (self.rows(sql) if last is None
                else list(reversed(self.rows(sql + " DESC LIMIT %s", (last,)))))
        return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    # -- rebuilding the derived tables ------------------------------------------------------
    def rebuild_derived(self, rows: Callable[[Txn], None]) -> dict[str, int]:
        """Empty every derived table and let ``rows`` write them again, in one transaction;
        the rows of each table afterwards."""
        with self.transaction() as txn:
            txn.execute(f"TRUNCATE {', '.join(DERIVED_TABLES)}")
            rows(txn)
        return {t: int(self.rows(f"SELECT count(*) FROM {t}")[0][0])
                for t in ("entries", *DERIVED_TABLES)}
