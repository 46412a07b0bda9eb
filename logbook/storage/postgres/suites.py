"""What the suites' door looks up (logbook.format.suite; SQL lives only in storage/postgres/):
a plan's latest suite state row and which ids its item set holds (a check reads these tables
through ``derived_rows``). Mixed into PostgresTxn: the door reads them inside the append
transaction, from what the lock's round trip fetched (prefetch.py) or, for what it did not,
with a query sent after the transaction's writes so far (its ``rows``)."""

from __future__ import annotations

from typing import Any

from logbook.storage.base import SuiteRow, suite_row
from logbook.storage.postgres.prefetch import Prefetched


class SuiteRows:
    prefetched: Prefetched

    def rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError  # pragma: no cover - PostgresTxn defines it

    def suite_state(self, plan: str) -> SuiteRow | None:
        if plan in self.prefetched.suites:
            return self.prefetched.suites[plan]
        found = self.rows("SELECT since, first_seq, first_hash, n_known, items_key FROM "
                          "plan_suites WHERE plan = %s ORDER BY seq DESC LIMIT 1", (plan,))
        return None if not found else suite_row(found[0], plan)

    def known_items(self, plan: str, items_key: int, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        known = self.prefetched.known_items(plan, items_key, ids)
        if known is not None:
            return known
        return {str(r[0]) for r in self.rows(
            "SELECT item FROM plan_items WHERE plan = %s AND items_key = %s AND "
            "item = ANY(%s)", (plan, items_key, ids))}
