"""Each plan's suite state kept in derived rows as entries are appended (logbook.format.suite
defines it), so that the door (logbook.ledger.intake.check_suite) costs the same at any plan
size: a state row and the run's own item ids are looked up, the plan's runs are not read.

``advance`` runs inside the append transaction after each entry's index rows: a plan starts
with an empty state; a run counted in it, or admitted into it, adds its new item ids (and
becomes the first completed run when it is); an amendment that changes the suite starts a new
set; a retraction of a run, admission or suite amendment folds that plan's entries again
(``fold_plan``; retractions are rare, and a retraction cannot be withdrawn). A plan without
rows (a ledger made before them) is folded once, the first time the door asks. `reindex`
writes every plan's state from one fold of the chain (``rebuild``), and `verify` compares each
plan's latest row and item set with its own fold (logbook.verify.suites).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from logbook.format.suite import Member, SuiteFold, SuiteState, run_facts
from logbook.storage.base import EntryLog, StoredEntry, SuiteRow, Txn


class View:
    """What the door needs of a plan's suite state: its row, and which of a run's ids the
    plan's standing runs already hold."""

    __slots__ = ("first_hash", "first_seq", "known", "n_known", "since")

    def __init__(self, row: SuiteRow | tuple[Any, ...], known: Callable[[list[str]], set[str]]
                 ) -> None:
        self.since, self.first_seq, self.first_hash, self.n_known = row[:4]
        self.known = known


class Suites:
    """One append transaction's view of the plans' suite states: each plan's row is read once
    and then moved by the transaction's own writes, and the item ids found in a plan's set are
    remembered (``_held``), so that a batch of runs of one suite asks the store once. A plan
    without rows (a ledger made before them) is folded once, here, and written whole with the
    transaction's first entry that moves it."""

    def __init__(self, store: EntryLog, txn: Txn) -> None:
        self.store = store  # the plan's entries, for a plan without rows
        self.txn = txn  # its rows, as this transaction's writes leave them
        self._rows: dict[str, SuiteRow] = {}
        self._held: dict[str, set[str]] = {}
        self._folded: dict[str, SuiteState] = {}  # plans without rows, as folded here

    def row(self, plan: str) -> SuiteRow | None:
        if plan not in self._rows and plan not in self._folded:
            row = self.txn.suite_state(plan)
            if row is None:
                self._folded[plan] = st = fold_plan(self.store, plan)
                self._held[plan] = set(st.items)
                return None
            self._rows[plan], self._held[plan] = row, set()
        return self._rows.get(plan)

    def view(self, plan: str) -> View:
        row = self.row(plan)
        if row is None:
            return View(self._folded[plan].row(), lambda ids: self._held[plan].intersection(ids))
        return View(row, lambda ids: self.known(plan, ids))

    def known(self, plan: str, ids: list[str]) -> set[str]:
        """Those of ``ids`` the plan's current item set holds."""
        row, held = self.row(plan), self._held[plan]
        asked = [i for i in ids if i not in held]
        if asked and row is not None:
            held.update(self.txn.known_items(plan, row[4], asked))
        return held.intersection(ids)

    def put(self, txn: Txn, plan: str, seq: int, row: SuiteRow, new: list[str],
            fresh: bool = False) -> None:
        """Write the plan's state as entry ``seq`` leaves it: ``row``, and ``new`` item ids
        added to its set (the whole set when ``fresh``)."""
        txn.insert_suite(plan, seq, row)
        txn.insert_suite_items(plan, row[4], new)
        self._folded.pop(plan, None)
        self._rows[plan] = row
        self._held[plan] = set(new) if fresh else self._held.get(plan, set()) | set(new)

    def put_state(self, txn: Txn, plan: str, seq: int, st: SuiteState) -> None:
        """The whole state ``st`` as a new set keyed by ``seq``."""
        self.put(txn, plan, seq, (*st.row(), seq), list(st.items), fresh=True)


def _body(stored: StoredEntry) -> dict[str, Any]:
    body = orjson.loads(stored.entry).get("body")
    return body if isinstance(body, dict) else {}


def fold_plan(store: EntryLog, plan: str) -> SuiteState:
    """The plan's state from its own entries (its runs, admissions, amendments, the runs it
    admitted and every retraction of any of them), folded in ledger order."""
    own = [e for kind in ("run", "admission", "amendment")
           for e in store.entries_where(kind, plan)]
    admitted = [store.entry_by_digest(str(_body(a).get("run")))
                for a in own if orjson.loads(a.entry).get("kind") == "admission"]
    entries = {e.seq: e for e in [*own, *(a for a in admitted if a is not None)]}
    for r in store.entries_where("retraction", targets=[e.digest for e in entries.values()]):
        entries[r.seq] = r
    fold = SuiteFold()
    for seq in sorted(entries):
        e = entries[seq]
        fold.add(e.seq, e.digest, orjson.loads(e.entry))
    return fold.state(plan)


def _join(txn: Txn, suites: Suites, plan: str, seq: int, m: Member) -> None:
    row = suites.row(plan)
    if row is None:  # a plan from before the rows: its fold, with this run
        suites.put_state(txn, plan, seq, fold_plan(suites.store, plan))
        return
    since, first_seq, first_hash, n_known, key = row
    ids = list(dict.fromkeys(m.ids))
    held = suites.known(plan, ids) if ids else set()
    new = sorted(i for i in ids if i not in held)
    first = (first_seq, first_hash)
    if m.completed and (first_seq is None or m.seq < first_seq):
        first = (m.seq, m.dataset_hash)
    if new or first != (first_seq, first_hash):
        suites.put(txn, plan, seq, (since, *first, n_known + len(new), key), new)


def _retracted_plans(store: EntryLog, target: str) -> list[str]:
    """The plans whose suite state a retraction of ``target`` may change."""
    stored = store.entry_by_digest(target)
    if stored is None:
        return []
    env = orjson.loads(stored.entry)
    body = env.get("body") if isinstance(env.get("body"), dict) else {}
    kind, plan = env.get("kind"), body.get("plan")
    if kind == "run":
        plans = [plan] if isinstance(plan, str) else []
        return plans + [str(_body(a).get("plan"))
                        for a in store.entries_where("admission", targets=[target])]
    if kind == "admission" and isinstance(plan, str):
        return [plan]
    changes = body.get("changes")
    if kind == "amendment" and isinstance(plan, str) and isinstance(changes, dict) \
            and "suite" in changes:
        return [plan]
    return []


def advance(txn: Txn, suites: Suites, seq: int, digest: str, env: dict[str, Any]) -> None:
    """The suite state rows entry ``seq`` (just written, its index rows too) changes."""
    kind, body = env.get("kind"), env.get("body")
    if not isinstance(body, dict):
        return
    plan, store = body.get("plan"), suites.store
    if kind == "plan":
        suites.put_state(txn, digest, seq, SuiteState())
    elif kind == "run" and isinstance(plan, str):
        _join(txn, suites, plan, seq, run_facts(seq, seq, body))
    elif kind == "admission" and isinstance(plan, str):
        run = store.entry_by_digest(str(body.get("run")))
        if run is not None:
            _join(txn, suites, plan, seq, run_facts(run.seq, seq, _body(run)))
    elif kind == "amendment" and isinstance(plan, str):
        changes = body.get("changes")
        if isinstance(changes, dict) and "suite" in changes:
            suites.put_state(txn, plan, seq, SuiteState(since=seq))
    elif kind == "retraction" and isinstance(body.get("target"), str):
        for p in dict.fromkeys(_retracted_plans(store, body["target"])):
            suites.put_state(txn, p, seq, fold_plan(store, p))


def rebuild(txn: Txn, fold: SuiteFold, last: int) -> None:
    """Every plan's state from one fold of the whole chain, as of entry ``last``: what
    `reindex` writes."""
    for plan, st in fold.states().items():
        txn.insert_suite(plan, last, (*st.row(), last))
        txn.insert_suite_items(plan, last, st.items)
