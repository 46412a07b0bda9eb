"""What the `check` entries say about a plan (logbook.model.checks): whether the suite was
checked for contamination for each model the plan's runs ran, and how often the scorer agreed
with the hand spot-checks of those runs. The report prints both (docs/reporting.md, "Checks");
the audit's rules A33-A36 read them. And the search budget: how many configurations were
tried on the plan's suite, in the plan or not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logbook.analysis.run_view import RunView
from logbook.analysis.view import LedgerView, PlanView
from logbook.ledger.entry import Entry

CONFIDENCE = 0.95  # the spot-check agreement's interval


def standing(view: LedgerView, type_: str) -> list[Entry]:
    """The check entries of ``type_`` no retraction withdrew, oldest first."""
    return [e for e in view.entries_of("check")
            if e.body.get("type") == type_ and not view.retracted_by(e.digest)]


def model_of(run: RunView) -> str | None:
    """The model a run names: its apparatus's ``model`` (text, or an object's ``name``)."""
    model = run.apparatus.get("model")
    if isinstance(model, dict):
        model = model.get("name")
    return model if isinstance(model, str) and model else None


def suite_names(plan: PlanView) -> set[str]:
    """What a contamination check may call the plan's suite: its name or its dataset hash."""
    suite = plan.original.get("suite") or {}
    return {str(v) for v in (suite.get("name"), suite.get("dataset_hash")) if v}


@dataclass
class Contamination:
    """The contamination checks of one model on the plan's suite."""

    model: str
    checks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def positive(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if c["verdict"] == "contaminated"]

    def as_json(self) -> dict[str, Any]:
        return {"model": self.model, "checked": bool(self.checks), "checks": self.checks}


def contamination(view: LedgerView, plan: PlanView,
                  checks: list[Entry] | None = None) -> list[Contamination]:
    """For each model the plan's counted runs name, the contamination checks of it on the
    plan's suite (by name or dataset hash, any split), oldest first."""
    found = standing(view, "contamination") if checks is None else checks
    names = suite_names(plan)
    models = sorted({m for r in plan.runs if not r.retracted and (m := model_of(r))})
    out = []
    for model in models:
        mine = [{"seq": e.seq, "digest": e.digest, "method": e.body.get("method"),
                 "verdict": (e.body.get("result") or {}).get("verdict"),
                 "rate": (e.body.get("result") or {}).get("rate"),
                 "split": e.body.get("split")}
                for e in found if e.body.get("model") == model and e.body.get("suite") in names]
        out.append(Contamination(model, mine))
    return out


@dataclass
class Agreement:
    """The hand verdicts on a set of runs' items: how many agreed with the scorer, disagreed
    or could not tell, and the agreement's Wilson interval over those that could."""

    checks: list[int]  # the spot-check entries' seqs
    agree: int
    disagree: int
    unsure: int

    @property
    def decided(self) -> int:
        return self.agree + self.disagree

    def interval(self) -> tuple[float, float] | None:
        if not self.decided:
            return None
        from logbook.stats.proportions import wilson

        est = wilson(self.agree, self.decided, CONFIDENCE)
        return est.low, est.high

    def as_json(self) -> dict[str, Any]:
        ci = self.interval()
        return {"checks": self.checks, "agree": self.agree, "disagree": self.disagree,
                "unsure": self.unsure, "confidence": CONFIDENCE,
                "interval": list(ci) if ci is not None else None}


def agreement(view: LedgerView, runs: list[RunView],
              checks: list[Entry] | None = None) -> Agreement | None:
    """The spot-checks of ``runs`` (None when there are none)."""
    found = standing(view, "spot-check") if checks is None else checks
    digests = {r.digest for r in runs}
    mine = [e for e in found if e.body.get("run") in digests]
    if not mine:
        return None
    said = [str(v.get("verdict")) for e in mine for v in e.body.get("verdicts") or []]
    return Agreement([e.seq for e in mine], said.count("agree"), said.count("disagree"),
                     said.count("unsure"))


def plan_checks(view: LedgerView, plan: PlanView) -> dict[str, Any]:
    """The report's ``checks``: contamination per model, and the scorer's agreement with the
    hand spot-checks of the plan's counted runs (None: never spot-checked)."""
    from logbook.analysis.holdouts import of_plan

    counted = [r for r in plan.runs if not r.retracted]
    agreed = agreement(view, counted)
    out = {"contamination": [c.as_json() for c in contamination(view, plan)],
           "spot_checks": agreed.as_json() if agreed is not None else None,
           "search_budget": search_budget(view, plan)}
    held = of_plan(view, plan)
    if held is not None:  # only a plan on a held-out split has the line
        out["holdout"] = {**held.as_json(), "line": held.line()}
    return out


def search_budget(view: LedgerView, plan: PlanView) -> dict[str, Any]:
    """The plan's suite's search budget: every configuration (distinct system: the apparatus
    fields that are not the run's identity, `RunView.system`) tried on the suite by any run,
    exploratory, of another plan, failed or retracted included, and how many before the plan.
    A claim on the best of them is a claim on the best of that many."""
    from logbook.analysis.view import suite_named

    declared = plan.original.get("suite") or {}
    suite: tuple[str | None, str | None] = (declared.get("dataset_hash"), declared.get("name"))
    if plan.runs:  # the plan's own runs say it as any run of the suite does
        suite = suite_named(view, plan.runs[0])
    tried = view.runs_of_suite(*suite)  # every split of the suite
    systems = {configuration(r) for r in tried}
    return {"suite": suite[1] or suite[0], "configurations": len(systems), "runs": len(tried),
            "before_plan": len({configuration(r) for r in tried if r.seq < plan.seq}),
            "first": tried[0].seq if tried else None, "last": tried[-1].seq if tried else None}


# what names the data a run was tried on, not the configuration tried (a configuration tuned
# on the dev split and measured on the test split is one configuration)
_DATA_FIELDS = frozenset(("suite", "suite_version", "split"))


def configuration(run: RunView) -> tuple[tuple[str, str], ...]:
    """The run's system less the fields that name its suite and split."""
    return tuple(p for p in run.system if p[0] not in _DATA_FIELDS)


def explored(view: LedgerView, plans: list[PlanView]) -> list[list[RunView]]:
    """The configurations tried on the plans' suite by exploratory runs (no plan, none
    admitted into one, no reproduction) that none of the plans' own runs has, each as its
    runs in ledger order, oldest configuration first: the search the plans' comparisons were
    chosen from. When every
    plan measures one split of a suite entry, runs that name another split are left out (a
    held-out split is what protects a figure from the search on dev)."""
    from logbook.analysis.view import suite_named

    if not plans:
        return []
    splits = {(p.original.get("suite") or {}).get("split") for p in plans}
    split = next(iter(splits)) if len(splits) == 1 else None
    declared = plans[0].original.get("suite") or {}
    suite: tuple[str | None, str | None] = (declared.get("dataset_hash"), declared.get("name"))
    own = [r for p in plans for r in p.runs]
    if own:
        suite = suite_named(view, own[0])
    known = {configuration(r) for r in own}
    found: dict[tuple[tuple[str, str], ...], list[RunView]] = {}
    for r, config in _explorations(view, suite, split):
        if config not in known:
            found.setdefault(config, []).append(r)
    return sorted(found.values(), key=lambda runs: runs[0].seq)


def _explorations(view: LedgerView, suite: tuple[str | None, str | None],
                  split: Any) -> list[tuple[RunView, tuple[tuple[str, str], ...]]]:
    """The exploratory runs of the suite (less those naming a split other than ``split``),
    each with its configuration, worked out once per view and suite."""
    key = ("explorations", suite, split)
    if key not in view.memo:
        kept = []
        for r in view.runs_of_suite(*suite):
            if r.plan is not None or r.admitted is not None or r.reproduces is not None:
                continue  # a plan's run, or a repeat of a run: no configuration tried
            theirs = r.apparatus.get("split")
            if split is not None and isinstance(theirs, str) and theirs != split:
                continue
            kept.append((r, configuration(r)))
        view.memo[key] = kept
    found: list[tuple[RunView, tuple[tuple[str, str], ...]]] = view.memo[key]
    return found
