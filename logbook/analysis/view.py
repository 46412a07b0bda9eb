"""A read-only view of the whole ledger for analysis: plans (amended), runs, retractions, claims.

Analysis never takes a hand-picked subset of runs: every reader here returns everything the
ledger holds for the question, with failed, aborted and retracted runs marked, not dropped.
A run is a `RunView` (logbook.analysis.run_view; it and logbook.analysis.item_arrays's names
are also importable from here).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from logbook.analysis.item_arrays import clusters_of, item_mean_arrays, item_stack, paired_arrays
from logbook.analysis.run_view import RunView, System
from logbook.format.apparatus import flatten, is_identity
from logbook.format.runfacts import RunFacts
from logbook.ledger.entry import Entry
from logbook.ledger.service import Ledger
from logbook.model import amended

__all__ = ["LedgerView", "PlanView", "RunView", "System", "clusters_of", "flatten",
           "is_identity", "item_mean_arrays", "item_stack", "paired_arrays", "suite_key"]


def suite_key(plan_body: dict[str, Any]) -> str:
    """A suite is its dataset hash, or its name and version when no hash is declared."""
    suite = plan_body.get("suite") or {}
    return str(suite.get("dataset_hash") or f"{suite.get('name')}@{suite.get('version', '')}")


@dataclass
class PlanView:
    entry: Entry
    amendments: list[Entry]
    runs: list[RunView]
    retracted_by: list[Entry] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return self.entry.digest

    @property
    def seq(self) -> int:
        return self.entry.seq

    @property
    def original(self) -> dict[str, Any]:
        return self.entry.body

    @cached_property
    def body(self) -> dict[str, Any]:
        return amended(self.original, self.amendments)

    @property
    def slug(self) -> str:
        return str(self.original.get("slug"))

    def arms(self) -> list[dict[str, Any]]:
        return list(self.body.get("arms") or [])

    def arm_runs(self, arm: str) -> list[RunView]:
        return [r for r in self.runs if r.arm == arm]


class LedgerView:
    """Everything analysis reads, loaded once from the ledger's indexes and entries."""

    def __init__(self, ledger: Ledger, checked: Any = None) -> None:
        """``checked``: what the analysis check established (logbook.verify.integrity
        `Verified`), when the caller made one: the runs' facts it worked out, or, after a
        check resumed from this machine's checked copy, the copy's runs (`reads`), whose
        facts are each decoded when first read (a report or a page reads a few runs of a
        large ledger; the audit reads them all)."""
        self.ledger = ledger
        self.size = ledger.size()
        self._checked = checked
        self._loaded: dict[int, Entry] = {}
        self._reads: Any = None
        self.retractions: dict[str, list[Entry]] = {}
        for r in ledger.log(kind="retraction"):
            self.retractions.setdefault(str(r.body.get("target")), []).append(r)

    def carry_on(self, ledger: Ledger, checked: Any) -> bool:
        """Read on through ``ledger``, a new read transaction of the same ledger, checked
        (``checked``) at the very head this view was read at: what the view holds came from
        the same entries, and what it has not read yet is read from the new transaction.
        False when its runs were read another way than this check offers (through a checked
        copy, or whole from a check made in full, the first on this machine): the caller
        then makes a new view, which reads them as this check does."""
        reads = getattr(checked, "runs", None)
        if "_runs_read" in self.__dict__ and (self._reads is None) != (reads is None):
            return False
        self.ledger, self._checked, self._loaded = ledger, checked, {}
        if self._reads is not None:
            self._reads = reads
        return True

    def retracted_by(self, digest: str) -> list[Entry]:
        return self.retractions.get(digest, [])

    @cached_property
    def _amendments(self) -> dict[str, list[Entry]]:
        amendments: dict[str, list[Entry]] = {}
        for a in self.ledger.log(kind="amendment"):
            if not self.retracted_by(a.digest):  # a withdrawn amendment no longer applies
                amendments.setdefault(str(a.body.get("plan")), []).append(a)
        return amendments

    @cached_property
    def _plan_entries(self) -> list[Entry]:
        return self.ledger.log(kind="plan")

    @cached_property
    def admissions(self) -> dict[str, Entry]:
        """Run digest -> the standing admission that counts it in a plan's arm (logbook
        admit); a retracted admission counts nothing."""
        out: dict[str, Entry] = {}
        for a in self.ledger.log(kind="admission"):
            if not self.retracted_by(a.digest):
                out.setdefault(str(a.body.get("run")), a)
        return out

    @cached_property
    def intended(self) -> dict[str, list[tuple[RunView, dict[str, Any]]]]:
        """Plan digest -> the runs that named it but were refused and are not admitted, each
        with its ``intended`` (arm, reason). Found through the index (a refused run's
        ``target`` is its plan), so no other run is read."""
        out: dict[str, list[tuple[RunView, dict[str, Any]]]] = {}
        plans = [p.digest for p in self._plan_entries]
        for stored in self.ledger.reads.entries_where("run", targets=plans):
            run = self.runs_by_digest.get(stored.digest)
            if run is None or run.plan is not None:  # admitted: counted, no longer refused
                continue
            want = Entry.from_stored(stored).body.get("intended")
            if isinstance(want, dict) and isinstance(want.get("plan"), str):
                out.setdefault(want["plan"], []).append((run, want))
        return out

    def refused(self, plan: str) -> list[tuple[RunView, dict[str, Any]]]:
        """The runs meant for ``plan`` (by digest) that it refused and that are not admitted,
        each with its ``intended`` (arm, reason), in ledger order."""
        return self.intended.get(plan, [])

    @cached_property
    def plans(self) -> dict[str, PlanView]:
        """Every plan, by digest, in ledger order: the ONE place a plan's runs are found
        (runs appended to it, and runs admitted to it: see ``runs``)."""
        runs_by_plan: dict[str, list[RunView]] = {}
        for run in self.runs:
            if run.plan:
                runs_by_plan.setdefault(run.plan, []).append(run)
        out = {}
        for p in self._plan_entries:
            out[p.digest] = PlanView(p, self._amendments.get(p.digest, []),
                                     runs_by_plan.get(p.digest, []), self.retracted_by(p.digest))
        return out

    @cached_property
    def runs(self) -> list[RunView]:
        """Every run, in ledger order; a run a standing admission counts in a plan's arm is
        seen with that plan and arm (so every read of a plan's runs counts it)."""
        runs = self._runs_read
        if not self.admissions:
            return runs
        out = []
        for run in runs:
            admission = self.admissions.get(run.digest) if run.plan is None else None
            if admission is not None:
                run = run.counted_by(admission, self._pass_k.get(str(admission.body["plan"])))
            out.append(run)
        return out

    @cached_property
    def _pass_k(self) -> dict[str, int]:
        # a pass@k plan scores its runs' items by pass@k, so each run learns its plan's k
        # (after amendments) before anything reads its scores
        pass_k: dict[str, int] = {}
        for p in self._plan_entries:
            metric = p.body.get("metric") or {}
            if p.digest in self._amendments:
                metric = amended(p.body, self._amendments[p.digest]).get("metric") or {}
            if metric.get("kind") == "pass_at_k" and isinstance(metric.get("k"), int):
                pass_k[p.digest] = metric["k"]
        return pass_k

    @cached_property
    def _runs_read(self) -> list[RunView]:
        pass_k = self._pass_k
        reads = getattr(self._checked, "runs", None)
        if reads is not None:
            # a large ledger's runs are many small objects with no reference cycles: the
            # cyclic collector would walk the growing heap again and again while they are
            # made, then they are moved out of its sight (reference counting frees them)
            enabled = gc.isenabled()
            gc.disable()
            try:
                return self._checked_runs(reads, pass_k)
            finally:
                gc.freeze()
                if enabled:
                    gc.enable()
        facts = getattr(self._checked, "facts", None) or {}
        return [RunView.of(e, self.retracted_by(e.digest), pass_k.get(str(e.body.get("plan"))),
                           facts.get(e.seq))
                for e in self.ledger.log(kind="run")]

    def _checked_runs(self, reads: Any, pass_k: dict[str, int]) -> list[RunView]:
        """The runs from the checked copy's rows: index fields and facts; a run of no facts
        is read whole now (its index fields may not be its body's); facts that do not decode
        are worked out again from the run, when asked for."""
        out: list[RunView] = []
        whole: list[int] = []
        for seq, digest, plan, arm, status, session, text in reads.run_rows():
            if text is None:
                whole.append(len(out))
            # the check's own facts come decoded; the copy's are decoded when first read (a
            # text that does not decode is worked out from the run then)
            facts, kept = (text, None) if isinstance(text, RunFacts) or text is None else (
                None, text)
            out.append(RunView(seq, digest, plan, arm, str(status), session,
                               self.retracted_by(digest), pass_k.get(str(plan)), facts=facts,
                               facts_text=kept, load=self._entry))
        self._reads = reads
        for i in range(0, len(whole), 2000):
            part = [out[j] for j in whole[i:i + 2000]]
            self._load([r.seq for r in part])
            for j, r in zip(whole[i:i + 2000], part, strict=True):
                e = self._loaded.pop(r.seq)
                out[j] = RunView.of(e, r.retracted_by, pass_k.get(str(e.body.get("plan"))))
        return out

    def _load(self, seqs: list[int]) -> None:
        for stored in self._reads.entries_at(seqs):
            self._loaded[stored.seq] = Entry.from_stored(stored)

    def _entry(self, seq: int) -> Entry:
        """A run's entry, read when first asked for, with the runs of its plan that are not
        read yet (what asks for one run's items asks for its plan's)."""
        if seq not in self._loaded:
            run = self.runs_by_seq[seq]
            more = [r.seq for r in (self.plans[run.plan].runs if run.plan in self.plans
                                    else []) if r.seq != seq and not r.loaded]
            self._load([seq, *more[:1999]])
        return self._loaded.pop(seq)

    @cached_property
    def reproducers(self) -> dict[str, list[RunView]]:
        """Run digest -> the runs that reproduce it (body.reproduces), in ledger order: read
        from the runs' facts, so no run is read for it."""
        out: dict[str, list[RunView]] = {}
        for run in self.runs:
            target = run.reproduces
            if target is not None:
                out.setdefault(target, []).append(run)
        return out

    @cached_property
    def runs_by_seq(self) -> dict[int, RunView]:
        return {r.seq: r for r in self.runs}

    @cached_property
    def runs_by_digest(self) -> dict[str, RunView]:
        return {r.digest: r for r in self.runs}

    def plan(self, ref: str) -> PlanView:
        from logbook.errors import InputError

        digest = self.ledger.resolve(ref, "PLAN")
        if digest not in self.plans:
            raise InputError(f"PLAN {ref}: that entry is not a plan")
        return self.plans[digest]

    def apparatus_key(self, run: RunView) -> tuple[Any, ...]:
        """Identical apparatus: same suite, metric and every non-identity apparatus field
        (what bands are matched on; it includes the evaluator config hash they carry)."""
        plan = self.plans.get(run.plan) if run.plan else None
        return (suite_key(plan.original) if plan else None, run.metric, run.system)

    def entries_of(self, kind: str) -> list[Entry]:
        return self.ledger.log(kind=kind)

    @cached_property
    def suites_said(self) -> dict[int, tuple[str | None, str | None]]:
        """Every run's suite (`suite_named`: dataset hash and name, every split), by seq,
        worked out once."""
        return {r.seq: suite_named(self, r) for r in self.runs}

    @cached_property
    def memo(self) -> dict[Any, Any]:
        """What a reader of this view works out once per view, by a key of its own (the
        configurations explored on a suite: logbook.analysis.checks.explored)."""
        return {}

    @cached_property
    def suite_index(self) -> tuple[dict[str, list[RunView]], dict[str, list[RunView]],
                                   dict[str, list[RunView]]]:
        """Every run by the dataset hash it says, by the suite name it says, and by the name
        of those that say no hash (`suite_named`): where the runs of one suite are found
        without a pass over every run for each question."""
        by_hash: dict[str, list[RunView]] = {}
        by_name: dict[str, list[RunView]] = {}
        bare: dict[str, list[RunView]] = {}
        said = self.suites_said
        for r in self.runs:
            h, name = said[r.seq]
            if h:
                by_hash.setdefault(h, []).append(r)
            if name:
                by_name.setdefault(name, []).append(r)
                if not h:
                    bare.setdefault(name, []).append(r)
        return by_hash, by_name, bare

    def runs_of_suite(self, dataset_hash: str | None, name: str | None) -> list[RunView]:
        """The runs of the suite (dataset hash, name), every split, by `same_suite`, in ledger
        order. With a hash, a run that says one is of the suite exactly when it says that one,
        so only the runs of that hash and those saying a name and no hash are asked."""
        by_hash, by_name, bare = self.suite_index
        said = self.suites_said
        suite = (dataset_hash, name, None)
        named = (bare if dataset_hash else by_name).get(name or "", [])
        found = {r.seq: r for r in by_hash.get(dataset_hash or "", []) + named
                 if same_suite(suite, (*said[r.seq], None))}
        return [found[k] for k in sorted(found)]


def suite_of(view: LedgerView, run: RunView) -> tuple[str | None, str | None, str | None]:
    """A run's suite as far as it says: (dataset hash, name, split), the first two as
    `suite_named` says them, the split from the apparatus."""
    return (*suite_named(view, run), _text(run.apparatus.get("split")))


def suite_named(view: LedgerView, run: RunView) -> tuple[str | None, str | None]:
    """A run's suite as far as it names it: (dataset hash, name). The plan's suite when the
    run has a plan (its ``dataset_hash`` and ``name``), else the apparatus's ``dataset_hash``
    and its ``task`` or ``suite``. The run itself is read only for what its plan leaves
    unsaid (the search budget of one plan's report reads the runs of its suite alone)."""
    plan = view.plans.get(run.plan) if run.plan else None
    declared = (plan.original.get("suite") or {}) if plan is not None else {}
    h, name = _text(declared.get("dataset_hash")), _text(declared.get("name"))
    if h is None or name is None:
        app = run.apparatus
        h = h or _text(app.get("dataset_hash"))
        name = name or _text(app.get("task"), app.get("suite"))
    return h, name


def _text(*values: Any) -> str | None:
    """The first of ``values`` that is a non-empty string, as a string."""
    for v in values:
        if isinstance(v, str) and v:
            return str(v)
    return None


def same_suite(x: tuple[str | None, ...], y: tuple[str | None, ...]) -> bool | None:
    """True when two runs are runs of one suite (one dataset hash, or, without hashes on both,
    one name and no two splits), False when they say different ones, None when they do not
    say enough to tell."""
    if x[0] and y[0]:
        return x[0] == y[0]
    if x[1] and y[1]:
        return x[1] == y[1] and (not (x[2] and y[2]) or x[2] == y[2])
    return None
