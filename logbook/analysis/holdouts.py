"""Held-out splits and the looks taken at them (docs/recording.md, "Suites and held-out
splits"). A suite entry (logbook.model.suites) names its splits; a split it holds out allows
``holdout.looks`` looks (a `test` split one). A look is one sight of the split's figures:

- a plan's runs on the split are one look between them (the pre-registered measurement), at
  the plan's registration: its runs are made after it, as it says;
- every other run on the split is a look of its own, at its seq (an exploratory run, or a
  run admitted into a plan written after it);
- a retracted run was still seen; a run with no scored item showed nothing, and is no look;
- a reproduction of a run of a look (`reproduces`) repeats that measurement: it joins it.

A run is on the split when it names it (its apparatus's ``split``, or its plan's
``suite.split``), of the suite it names (``suite``, or its plan's suite) or whose dataset hash
is the entry's; and, when the split lists its ids, when a run of the suite that names no split
or another one holds any of its items (the door refuses such a run only where the named split
lists its ids).

A plan on a held-out split written after its looks were spent was written by someone who may
have seen the figures: the audit's A37 says so, as it says each look past the allowance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logbook.analysis.run_view import RunView
from logbook.analysis.view import LedgerView, PlanView
from logbook.format.splits import allowed_looks


@dataclass
class Look:
    """One look: a plan's runs (``plan`` its slug, ``at`` its seq) or one run (``at`` its
    seq); ``runs`` the seqs of the runs that saw the split, ``retracted`` those withdrawn."""

    at: int
    runs: list[int]
    plan: str | None = None
    plan_digest: str | None = None
    retracted: list[int] = field(default_factory=list)

    def said(self) -> str:
        if self.plan is not None:
            return f"plan {self.plan} @{self.at} ({len(self.runs)} run(s))"
        return f"run @{self.at}" + (" (retracted)" if self.retracted else "")

    def as_json(self) -> dict[str, Any]:
        return {"at": self.at, "plan": self.plan, "runs": self.runs, "retracted": self.retracted}


@dataclass
class HeldOut:
    """A held-out split of a suite entry and the looks taken at it, in ledger order;
    ``plans`` every standing plan on the split (slug, seq, digest)."""

    suite: str
    version: str
    entry: int  # the suite entry's seq
    split: str
    allowed: int
    looks: list[Look] = field(default_factory=list)
    plans: list[tuple[str, int, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.split} split of suite {self.suite}" + (
            f" (version {self.version})" if self.version else "")

    def line(self) -> str:
        """The report's line: "test split of suite S looked at N time(s) (...)"."""
        n = len(self.looks)
        seen = ", ".join(look.said() for look in self.looks[:4]) + (", ..." if n > 4 else "")
        return (f"{self.label} looked at {n} time(s) (its holdout allows {self.allowed})"
                + (f": {seen}" if n else ""))

    def as_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "version": self.version, "entry": self.entry,
                "split": self.split, "allowed": self.allowed, "looked": len(self.looks),
                "looks": [look.as_json() for look in self.looks]}


def held_out(view: LedgerView) -> list[HeldOut]:
    """Every held-out split of every standing suite entry, with its looks."""
    out = []
    for e in view.entries_of("suite"):
        if view.retracted_by(e.digest):
            continue
        for name, split in sorted((e.body.get("splits") or {}).items()):
            allowed = allowed_looks(name, split) if isinstance(split, dict) else None
            if allowed is not None:
                out.append(_looks(view, e.seq, e.body, name, split, allowed))
    return out


def of_plan(view: LedgerView, plan: PlanView, every: list[HeldOut] | None = None) \
        -> HeldOut | None:
    """The held-out split the plan measures, with its looks; None when it measures none."""
    for h in held_out(view) if every is None else every:
        if any(d == plan.digest for _s, _q, d in h.plans):
            return h
    return None


def _names(view: LedgerView, run: RunView) -> tuple[str | None, str | None, str | None]:
    """(suite name, version, split) as a run says them, itself or through its plan."""
    plan = view.plans.get(run.plan) if run.plan else None
    declared = (plan.original.get("suite") or {}) if plan is not None else {}
    app = run.apparatus

    def text(*values: Any) -> str | None:
        return next((v for v in values if isinstance(v, str) and v), None)

    version = declared.get("version", "") if plan is not None else app.get("suite_version")
    return (text(app.get("suite"), declared.get("name")),
            version if isinstance(version, str) else None,
            text(app.get("split"), declared.get("split")))


def _saw(run: RunView) -> bool:
    """Whether the run scored an item (a run that scored none showed nothing)."""
    f = run.facts
    if f is not None and f.figures:  # else (samples, a reducer) the counts are the body's
        return f.scored > 0
    scores = (run.body.get("outcomes") or {}).get("score") or []
    return any(s is not None for s in scores)


def _looks(view: LedgerView, seq: int, suite: dict[str, Any], name: str,
           split: dict[str, Any], allowed: int) -> HeldOut:
    version = str(suite.get("version", ""))
    h = HeldOut(str(suite.get("name")), version, seq, name, allowed)
    held = set(split.get("ids") or ())
    for p in view.plans.values():
        s = p.original.get("suite") or {}
        if not p.retracted_by and s.get("name") == h.suite and s.get("split") == name \
                and s.get("version", "") == version:
            h.plans.append((p.slug, p.seq, p.digest))
    by_plan: dict[str, Look] = {}
    singles: list[Look] = []
    by_run: dict[str, Look] = {}  # each run's look, by digest (a reproduction joins it)
    candidates = view.runs_of_suite(suite.get("dataset_hash"), h.suite)
    for r in candidates:
        if r.seq < seq:
            continue  # runs before the suite was named are not runs of the entry
        said, their_version, their_split = _names(view, r)
        if said not in (None, h.suite) or their_version not in (None, version):
            continue
        on = their_split == name or (bool(held) and their_split != name and _holds(r, held))
        if not on or not _saw(r):
            continue
        plan = view.plans.get(r.plan) if r.plan else None
        if plan is None and r.admitted is not None:
            target = view.plans.get(str(r.admitted.body.get("plan")))
            plan = target if target is not None and target.seq < r.seq else None
        if plan is None and r.reproduces in by_run:
            look = by_run[r.reproduces]  # a repeat of a run seen: the same measurement
        elif plan is not None:
            look = by_plan.setdefault(plan.digest, Look(plan.seq, [], plan.slug, plan.digest))
        else:
            look = Look(r.seq, [])
            singles.append(look)
        look.runs.append(r.seq)
        by_run[r.digest] = look
        if r.retracted:
            look.retracted.append(r.seq)
    h.looks = sorted([*by_plan.values(), *singles], key=lambda look: look.at)
    return h


def _holds(run: RunView, held: set[str]) -> bool:
    ids = (run.body.get("outcomes") or {}).get("id") or []
    return any(i in held for i in ids if isinstance(i, str))


def spent_before(h: HeldOut, at: int, plan_digest: str | None = None) -> list[Look]:
    """The looks at ``h`` taken before seq ``at`` (another plan's or run's)."""
    return [look for look in h.looks if look.at < at and look.plan_digest != plan_digest]
