"""A plan's suite as its standing runs have fixed it: a pure fold over entries in ledger order.

The door (logbook.ledger.intake.check_suite) asks two things of a plan's standing runs (those
appended to it or admitted into it, neither the run nor its admission retracted) since the
plan's suite last changed (its latest standing amendment whose changes hold ``suite``):

- the suite's identity: the ``apparatus.dataset_hash`` of the first completed run, by run seq
  (``first_seq``, ``first_hash``), when the plan declares none;
- the item ids those runs hold between them (``items``), which may not outgrow ``n_items``.

The append keeps the answer in derived rows (one state row and one row an item id, per plan),
so a run's admission looks up a few rows instead of reading the plan's runs; `verify` folds the
whole chain with `SuiteFold` and compares. This module is that fold: the one definition of the
state, fed whole entries (envelopes as parsed from their stored bytes) in seq order. A
retraction cannot be withdrawn (the door refuses it), so a retracted entry stays retracted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class SuiteState:
    """One plan's derived row: ``since`` is the seq of the standing suite amendment in force
    (-1 when none); ``first_seq``/``first_hash`` the first completed run since then (its hash
    may be None); ``items`` the sorted item ids its standing runs hold."""

    since: int = -1
    first_seq: int | None = None
    first_hash: str | None = None
    items: tuple[str, ...] = ()

    def row(self) -> tuple[int, int | None, str | None, int]:
        """(since, first_seq, first_hash, n_known): the state row as the stores keep it."""
        return (self.since, self.first_seq, self.first_hash, len(self.items))


@dataclass(frozen=True)
class Member:
    """A run standing in a plan: its own seq, the seq from which it counts there (its own, or
    its admission's), whether it completed, its dataset hash and its item ids."""

    seq: int
    joined: int
    completed: bool
    dataset_hash: str | None
    ids: tuple[str, ...]


class SharedIds:
    """Runs of one suite list the same ids: equal lists become one tuple, so a fold of the
    whole chain holds a few bytes a run. A list equal to the one before (runs of a suite
    come one after another) is known by comparing the two, without hashing its ids again."""

    def __init__(self) -> None:
        self._equal: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._last: tuple[list[Any], tuple[str, ...]] | None = None

    def __call__(self, ids: list[Any]) -> tuple[str, ...]:
        last = self._last
        if last is not None and (last[0] is ids or last[0] == ids):
            return last[1]
        kept = _str_ids(ids)
        kept = self._equal.setdefault(kept, kept)
        self._last = (ids, kept)
        return kept


def _str_ids(ids: list[Any]) -> tuple[str, ...]:
    kept = tuple(ids)
    if not set(map(type, kept)) <= {str}:  # parsed JSON: a string is a str, nothing else
        kept = tuple(i for i in kept if isinstance(i, str))
    return kept


def run_facts(seq: int, joined: int, body: Any, shared: SharedIds | None = None) -> Member:
    """What the suite state needs of a run body (tolerant of odd shapes: a tampered entry
    reaches the fold too, and `verify` reports it elsewhere); with ``shared``, the ids of
    equal lists are one tuple."""
    body = body if isinstance(body, dict) else {}
    app = body.get("apparatus")
    dh = app.get("dataset_hash") if isinstance(app, dict) else None
    oc = body.get("outcomes")
    ids = oc.get("id") if isinstance(oc, dict) else None
    if not isinstance(ids, list):
        kept: tuple[str, ...] = ()
    else:
        kept = _str_ids(ids) if shared is None else shared(ids)
    return Member(seq, joined, body.get("status") == "completed",
                  dh if isinstance(dh, str) else None, kept)


def state_of(members: list[Member], since: int) -> SuiteState:
    """The state a plan's standing runs give, counting those that joined after ``since``."""
    live = [m for m in members if m.joined > since]
    done = [m for m in live if m.completed]
    first = min(done, key=lambda m: m.seq) if done else None
    items: set[str] = set()
    for ids in {id(m.ids): m.ids for m in live}.values():  # runs of one list share its tuple
        items.update(ids)
    return SuiteState(since, first.seq if first else None, first.dataset_hash if first else None,
                      tuple(sorted(items)))


@dataclass
class _Plan:
    members: dict[str, Member] = field(default_factory=dict)  # run digest -> member
    amendments: dict[str, int] = field(default_factory=dict)  # standing suite amendments


class SuiteFold:
    """Every plan's suite state, folded over entries given in seq order (``add``)."""

    def __init__(self) -> None:
        self.plans: dict[str, _Plan] = {}
        self._loose: dict[str, Member] = {}  # runs counted in no plan (admittable), by digest
        self._ids = SharedIds()
        self._admissions: dict[str, tuple[str, str]] = {}  # digest -> (plan, run)
        self._amendments: dict[str, str] = {}  # suite amendment digest -> plan
        self._counted: dict[str, list[str]] = {}  # run digest -> plans it stands in

    def add(self, seq: int, digest: str, env: dict[str, Any]) -> None:
        kind, body = env.get("kind"), env.get("body")
        if not isinstance(body, dict):
            return
        plan = body.get("plan")
        if kind == "plan":
            self.plans.setdefault(digest, _Plan())
        elif kind == "run":
            facts = run_facts(seq, seq, body, self._ids)
            if isinstance(plan, str):
                self._join(plan, digest, facts)
            else:
                self._loose[digest] = facts
        elif kind == "admission" and isinstance(plan, str):
            run = body.get("run")
            loose = self._loose.get(run) if isinstance(run, str) else None
            if loose is not None:
                self._admissions[digest] = (plan, str(run))
                self._join(plan, str(run), replace(loose, joined=seq))
        elif kind == "amendment" and isinstance(plan, str):
            changes = body.get("changes")
            if isinstance(changes, dict) and "suite" in changes:
                self.plans.setdefault(plan, _Plan()).amendments[digest] = seq
                self._amendments[digest] = plan
        elif kind == "retraction" and isinstance(body.get("target"), str):
            self._retract(str(body["target"]))

    def _join(self, plan: str, run: str, member: Member) -> None:
        self.plans.setdefault(plan, _Plan()).members[run] = member
        self._counted.setdefault(run, []).append(plan)

    def _retract(self, target: str) -> None:
        for plan in self._counted.pop(target, []):
            self.plans[plan].members.pop(target, None)
        self._loose.pop(target, None)
        if target in self._admissions:
            plan, run = self._admissions.pop(target)
            self.plans[plan].members.pop(run, None)
            if plan in self._counted.get(run, []):
                self._counted[run].remove(plan)
        if target in self._amendments:
            self.plans[self._amendments.pop(target)].amendments.pop(target, None)

    def state(self, plan: str) -> SuiteState:
        p = self.plans.get(plan)
        if p is None:
            return SuiteState()
        return state_of(list(p.members.values()), max(p.amendments.values(), default=-1))

    def states(self) -> dict[str, SuiteState]:
        return {plan: self.state(plan) for plan in self.plans}
