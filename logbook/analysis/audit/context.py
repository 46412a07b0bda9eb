"""What every audit rule reads, built once per audit: the read model (`LedgerView`), the facts
the verified ledger gives beside it (checkpoints whose roots match), and the standing bands.

Rules never judge a retracted entry as if it stood: `Context.plans` and `Context.claims` are
the standing ones, and `Context.usable` leaves retracted runs out. Per-run figures (score,
apparatus key, item variance) are computed once per run and kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

from logbook.analysis.bands import latest_bands
from logbook.analysis.view import LedgerView, PlanView, RunView, is_identity
from logbook.format.metrics import BOUNDED_KINDS
from logbook.ledger.entry import Entry
from logbook.model import amended


@dataclass
class Claim:
    """A claim as the audit reads it: its plan (None when unplanned), arms and cited runs."""

    entry: Entry
    plan: PlanView | None
    arms: list[str]
    figure: str
    cited: list[str]

    seq: int = field(init=False)
    digest: str = field(init=False)
    body: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.seq, self.digest, self.body = self.entry.seq, self.entry.digest, self.entry.body

    def evidence(self, *more: str) -> list[str]:
        head = [self.digest] + ([self.plan.digest] if self.plan else [])
        return head + [d for d in more if d not in head]


@dataclass
class Context:
    """What every rule reads, computed once per audit; `scope` limits work to one plan."""

    view: LedgerView
    scope: str | None = None
    _scores: dict[int, float | None] = field(default_factory=dict, init=False, repr=False)
    _keys: dict[int, tuple[Any, ...]] = field(default_factory=dict, init=False, repr=False)
    _item_var: dict[int, tuple[float, int]] = field(default_factory=dict, init=False,
                                                    repr=False)
    _counts: dict[int, bool] = field(default_factory=dict, init=False, repr=False)
    # what a helper of the rules works out once per audit, by name (agreement's groups)
    memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    # -- entries ---------------------------------------------------------------------------
    def retracted(self, digest: str) -> bool:
        return bool(self.view.retracted_by(digest))

    def in_scope(self, plan_digest: str | None) -> bool:
        return self.scope is None or plan_digest == self.scope

    @cached_property
    def plans(self) -> list[PlanView]:
        """Plans that stand (not retracted), in ledger order."""
        return [p for p in self.view.plans.values() if not p.retracted_by]

    def scoped_plans(self) -> list[PlanView]:
        return [p for p in self.plans if self.in_scope(p.digest)]

    @cached_property
    def all_claims(self) -> list[Claim]:
        out = []
        for e in self.view.entries_of("claim"):
            b = e.body
            plan = self.view.plans.get(b["plan"]) if b.get("plan") else None
            arm = b.get("arm")
            arms = [str(a) for a in arm] if isinstance(arm, list) else ([str(arm)] if arm
                                                                         else [])
            figure = b.get("figure") or ("effect" if isinstance(arm, list) else "arm_mean")
            out.append(Claim(e, plan, arms, figure, list(b.get("runs") or [])))
        return out

    @cached_property
    def claims(self) -> list[Claim]:
        """Claims that stand (not retracted): the only ones judged."""
        return [c for c in self.all_claims if not self.retracted(c.digest)]

    def scoped_claims(self) -> list[Claim]:
        """Standing claims of the scoped plan (all standing claims when unscoped)."""
        return [c for c in self.claims if self.scope is None
                or (c.plan is not None and c.plan.digest == self.scope)]

    def planned_claims(self) -> list[tuple[Claim, PlanView]]:
        return [(c, c.plan) for c in self.scoped_claims() if c.plan is not None]

    def amendments(self, plan: PlanView) -> list[Entry]:
        """The plan's amendments that stand, in ledger order."""
        return [a for a in plan.amendments if not self.retracted(a.digest)]

    def body(self, plan: PlanView, before: int | None = None) -> dict[str, Any]:
        """The plan as amended by its standing amendments (those before seq `before`)."""
        return amended(plan.original, self.amendments(plan), before=before)

    @cached_property
    def checkpoint_sizes(self) -> list[int]:
        """Sizes of the checkpoints kept beside the ledger whose root matches the ledger."""
        ledger = self.view.ledger
        out = set()
        for _id, size, root, _note, _created in ledger.entry_log.checkpoints():
            if 0 < size <= self.view.size and ledger.root(size).hex() == root:
                out.add(size)
        return sorted(out)

    # -- bands -------------------------------------------------------------------------------
    @cached_property
    def bands(self) -> dict[tuple[Any, ...], Entry]:
        """The latest standing band of each apparatus (`bands.latest_bands`)."""
        return latest_bands(self.view)

    @cached_property
    def band_runs(self) -> set[str]:
        """Digests of the runs that standing bands were measured from."""
        return {d for b in self.view.entries_of("band") if not self.retracted(b.digest)
                for d in b.body.get("runs") or []}

    # -- runs --------------------------------------------------------------------------------
    def score(self, run: RunView) -> float | None:
        """The run's score: the mean of its scored items (its facts', logbook.format.runfacts),
        or RunView.score for a run whose items carry samples."""
        if run.seq in self._scores:
            return self._scores[run.seq]
        f = run.facts
        value = f.score if f is not None and f.figures else run.score
        self._scores[run.seq] = value
        return value

    def scores(self, runs: Iterable[RunView]) -> list[float]:
        """The scores of runs that have one (every `usable` run has)."""
        return [x for x in map(self.score, runs) if x is not None]

    def item_variance(self, run: RunView) -> tuple[float, int]:
        """(population variance of the run's item scores, items scored), once per run."""
        if run.seq not in self._item_var:
            f = run.facts
            if f is not None and f.figures:
                self._item_var[run.seq] = (f.variance, f.scored)
            else:
                from logbook.stats.spread import population_variance

                vals = [v for v in run.item_scores.values() if v is not None]
                self._item_var[run.seq] = population_variance(vals)
        return self._item_var[run.seq]

    def scale(self, run: RunView) -> float:
        """The display scale of a run's figures in messages: points (100) for a proportion
        or pass@k plan, or, for a run of no plan, when every item scored 0 or 1; else 1."""
        if run.plan:
            plan = self.view.plans.get(run.plan)
            return scale_of(plan.body if plan is not None else None)
        f = run.facts
        if f is not None:
            return 100.0 if f.binary else 1.0
        scores = (run.body.get("outcomes") or {}).get("score") or ()
        return 100.0 if scores and all(s in (0, 1, None) for s in scores) else 1.0

    def show(self, run: RunView, value: float) -> str:
        """A figure of ``run`` as a message prints it: on the display scale, 4 digits."""
        return f"{value * self.scale(run):.4g}"

    def counts(self, run: RunView) -> bool:
        """The run counts: completed, unretracted, with a score (worked out once per run, and
        only for the runs a rule asks about: a scoped audit reads its plan's runs alone)."""
        ok = self._counts.get(run.seq)
        if ok is None:
            ok = self._counts[run.seq] = run.usable and self.score(run) is not None
        return ok

    def usable(self, runs: Iterable[RunView], arm: str | None = None,
               before: int | None = None) -> list[RunView]:
        """Completed, unretracted runs with a score (of `arm`, appended before `before`)."""
        return [r for r in runs if (before is None or r.seq < before)
                and (arm is None or r.arm == arm) and self.counts(r)]

    def apparatus(self, run: RunView) -> dict[str, Any]:
        """The run's apparatus without per-run identity fields (seeds, times, session...)."""
        return {k: v for k, v in run.apparatus.items() if not identity(k)}

    def apparatus_key(self, run: RunView) -> tuple[Any, ...]:
        """Identical apparatus: same suite, metric and every non-identity apparatus field."""
        if run.seq not in self._keys:
            self._keys[run.seq] = self.view.apparatus_key(run)
        return self._keys[run.seq]


identity = cache(is_identity)


def missing(run: RunView, n_items: int) -> tuple[int, int]:
    """(missing, denominator) as RunView.missing counts them, from the run's facts."""
    f = run.facts
    if f is None or not f.figures:
        return run.missing(n_items)
    total = max(n_items, f.scores)
    return total - f.scored, total


def comparisons(plan: PlanView) -> list[tuple[str | None, str]]:
    """(control, treatment) pairs; a plan with no treatment tests its first arm alone."""
    roles = {role: [a["name"] for a in plan.arms() if a.get("role") == role]
             for role in ("control", "treatment")}
    if roles["control"] and roles["treatment"]:
        return [(roles["control"][0], t) for t in roles["treatment"]]
    return [(None, plan.arms()[0]["name"])] if plan.arms() else []


def scale_of(plan_body: dict[str, Any] | None) -> float:
    """The display scale of a plan's figures: points (100) for a bounded metric, else 1."""
    if plan_body is None:
        return 1.0
    return 100.0 if (plan_body.get("metric") or {}).get("kind") in BOUNDED_KINDS else 1.0


# -- how findings name entries -----------------------------------------------------------------
def at(runs: list[RunView]) -> str:
    return ", ".join(f"@{r.seq}" for r in runs)


def short(digest: str) -> str:
    return digest[:12]
