"""What the suites' door looks up (logbook.format.suite; SQL lives only in storage/postgres/):
a plan's latest suite state row and which ids its item set holds (a check reads these tables
through ``derived_rows``). Mixed into PostgresStore, whose ``rows`` runs a query (after the
append transaction's writes so far)."""

from __future__ import annotations

from typing import Any

from logbook.storage.base import SuiteRow, suite_row
from logbook.storage.postgres.txn import PostgresTxn


class SuiteRows:
    _txn: PostgresTxn | None

    def rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError  # pragma: no cover - PostgresStore defines it

    def suite_state(self, plan: str) -> SuiteRow | None:
        if self._txn is not None and plan in self._txn.prefetched.suites:
            return self._txn.prefetched.suites[plan]
        found = self.rows("SELECT since, first_seq, first_hash, n_known, items_key FROM "
                          "plan_suites WHERE plan = %s ORDER BY seq DESC LIMIT 1", (plan,))
        return None if not found else suite_row(found[0], plan)

    def known_items(self, plan: str, items_key: int, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        known = None if self._txn is None else \
            self._txn.prefetched.known_items(plan, items_key, ids)
        if known is not None:
            return known
        return {str(r[0]) for r in self.rows(
            "SELECT item FROM plan_items WHERE plan = %s AND items_key = %s AND "
            "item = ANY(%s)", (plan, items_key, ids))}
