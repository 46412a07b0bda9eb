"""Each plan's suite state rows compared with a fold of the chain (logbook.format.suite).

The door reads a plan's latest state row and its item set (logbook.ledger.suites); both are
derived, so anyone with the file could edit them to let a run of another suite in, or to
refuse an honest one. `verify` folds every entry as the chain is read (``SuiteFold.add``) and
compares, plan by plan, the latest stored row and its item set with the fold's: a row for no
plan, a row that differs, an item set that differs are findings. Earlier rows are the history
of appends and are read by nothing. A plan with no row is not a finding: the door folds such a
plan's entries itself (a ledger made before the rows). Imports nothing that signs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from logbook.findings import Finding
from logbook.format.suite import SuiteFold
from logbook.storage.base import EntryLog


def _finding(plan: Any, row: tuple[Any, ...], digests: Sequence[bytes], why: str) -> Finding:
    seq = row[1] if len(row) > 1 and type(row[1]) is int else None
    entries = [digests[seq].hex()] if seq is not None and 0 <= seq < len(digests) else []
    return Finding("derived", "error",
                   f"derived table plan_suites, plan {str(plan)[:12]}: {why}", seq, entries)


def check_suites(store: EntryLog, fold: SuiteFold, digests: Sequence[bytes]
                 ) -> list[Finding]:
    found: list[Finding] = []
    for row in store.latest_suites():
        plan = row[0]
        if plan not in fold.plans:
            found.append(_finding(plan, row, digests, "a row for no plan of the ledger"))
            continue
        want = fold.state(plan)
        since, first_seq, first_hash, n_known, items_key = row[2:7]
        if (since, first_seq, first_hash, n_known) != want.row():
            found.append(_finding(plan, row, digests,
                                  f"its state (since, first run, its hash, items) is "
                                  f"{(since, first_seq, first_hash, n_known)!r}, but the "
                                  f"plan's entries give {want.row()!r}"))
            continue
        items = store.suite_items(plan, items_key, len(want.items) + 1)
        if tuple(items) != want.items:
            found.append(_finding(plan, row, digests,
                                  "its item ids differ from those the plan's standing runs "
                                  "hold"))
    return found
