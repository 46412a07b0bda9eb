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
from itertools import groupby, islice
from operator import itemgetter
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
    found: dict[Any, Finding] = {}  # one finding a plan at most, in the order of its row
    agree: dict[Any, tuple[Any, tuple[str, ...]]] = {}  # plan -> (items_key, the fold's ids)
    for row in store.derived_rows("plan_suites"):
        plan = row[0]
        if plan not in fold.plans:
            found[plan] = _finding(plan, row, digests, "a row for no plan of the ledger")
            continue
        want = fold.state(plan)
        since, first_seq, first_hash, n_known, items_key = row[2:7]
        if (since, first_seq, first_hash, n_known) != want.row():
            found[plan] = _finding(plan, row, digests,
                                   f"its state (since, first run, its hash, items) is "
                                   f"{(since, first_seq, first_hash, n_known)!r}, but the "
                                   f"plan's entries give {want.row()!r}")
            continue
        found[plan] = _finding(plan, row, digests, ITEMS_DIFFER)  # until its set agrees
        agree[plan] = (items_key, want.items)
    # the item set each agreeing row names, read in one pass (its ids sorted here: a store's
    # order may be another collation's), at most one id more than the fold holds
    read: set[Any] = set()
    for (plan, key), rows in groupby(store.derived_rows("plan_items"), itemgetter(0, 1)):
        if plan in read or plan not in agree or agree[plan][0] != key:
            continue
        read.add(plan)
        want_items = agree[plan][1]
        items = list(islice(map(itemgetter(2), rows), len(want_items) + 1))
        try:
            items.sort()  # str order is code point order, as the fold sorts them
        except TypeError:  # an id of another type, from an altered row: not the fold's set
            continue
        if tuple(items) == want_items:
            del found[plan]
    for plan, (_key, want_items) in agree.items():
        if plan not in read and not want_items:  # an empty set stores no rows
            del found[plan]
    return list(found.values())


ITEMS_DIFFER = "its item ids differ from those the plan's standing runs hold"

