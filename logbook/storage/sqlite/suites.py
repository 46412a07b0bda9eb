"""What the suites' door looks up (logbook.format.suite; SQL lives only in storage/sqlite/): a
plan's latest suite state row and which ids its item set holds (a check reads these tables
through ``derived_rows``). Mixed into SQLiteTxn: the door reads them inside the append
transaction, on its connection."""

from __future__ import annotations

import sqlite3

from logbook.storage.base import SuiteRow, suite_row

CHUNK = 500  # ids a query asks about at a time (SQLite's bound on host parameters is higher)


class SuiteRows:
    conn: sqlite3.Connection

    def suite_state(self, plan: str) -> SuiteRow | None:
        row = self.conn.execute(
            "SELECT since, first_seq, first_hash, n_known, items_key FROM plan_suites "
            "WHERE plan = ? ORDER BY seq DESC LIMIT 1", (plan,)).fetchone()
        return None if row is None else suite_row(row, plan)

    def known_items(self, plan: str, items_key: int, ids: list[str]) -> set[str]:
        out: set[str] = set()
        for i in range(0, len(ids), CHUNK):
            chunk = ids[i:i + CHUNK]
            out.update(r[0] for r in self.conn.execute(
                "SELECT item FROM plan_items WHERE plan = ? AND items_key = ? AND item IN "
                f"({','.join('?' * len(chunk))})", (plan, items_key, *chunk)))
        return out
