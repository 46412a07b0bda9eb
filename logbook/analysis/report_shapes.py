"""The shapes of the report's output, each written once: the analysis builds these
dataclasses (`out.Out`), ``as_json`` gives the JSON `report --json` prints, and the export
derives schemas/ from the same fields, an arm's shapes (`arm_shapes`) and the brief's
(`brief_shapes`) beside them (through pydantic, imported only then: `python -m
logbook.analysis.report_shapes schemas/`, beside the entry kinds'). Tests validate real output
against them and keep schemas/ fresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from logbook.analysis import arm_shapes, cost_shapes
from logbook.analysis.arm_shapes import ArmReport
from logbook.analysis.cost_shapes import Cost
from logbook.analysis.out import ABSENT, EXTRA_KEY, INTERNAL, Out, json_schema

if TYPE_CHECKING:
    from logbook import findings


@dataclass(kw_only=True, eq=False)
class WorstCase(Out):
    """The effect with every missing item-run imputed against (low) and for (high) it."""

    low: float
    high: float
    missing: int  # missing item-runs on both sides


@dataclass(kw_only=True, eq=False)
class Effect(Out):
    """Treatment minus control, a fraction of the metric's scale like every score here."""

    EXTRA: ClassVar[Literal["forbid", "allow"]] = "allow"  # mcnemar, reason when present
    control: str
    treatment: str
    point: float | None
    low: float | None = ABSENT
    high: float | None = ABSENT
    pvalue: float | None = ABSENT
    method: str | None = ABSENT
    n: int | None = ABSENT  # paired items, or runs when unit is "runs"
    unit: str | None = ABSENT  # "items" (paired) or "runs" (Welch, unpaired)
    n_dropped: int | None = ABSENT
    n_resamples: int | None = ABSENT  # a bootstrap p-value is never below 1 / n_resamples
    higher_is_better: bool | None = ABSENT
    worst_case: WorstCase | None = ABSENT
    design_effect: float | None = ABSENT
    clusters: int | None = ABSENT
    reason: str = field(default=ABSENT, metadata=EXTRA_KEY)  # why there is no point
    mcnemar: dict[str, Any] = field(default=ABSENT, metadata=EXTRA_KEY)
    # the interval over items and runs (stats.paired_runs): its df and two parts of its se
    df: float = field(default=ABSENT, metadata=EXTRA_KEY)
    se_items: float = field(default=ABSENT, metadata=EXTRA_KEY)
    se_runs: float = field(default=ABSENT, metadata=EXTRA_KEY)
    runs_note: str = field(default=ABSENT, metadata=EXTRA_KEY)  # run noise unmeasured
    discordance: float = field(default=ABSENT, metadata=EXTRA_KEY)  # binary pairs only
    cluster_warning: str = field(default=ABSENT, metadata=EXTRA_KEY)  # an unnamed cluster


@dataclass(kw_only=True, eq=False)
class Condition(Out):  # a pre-registered criterion and what the report observed for it
    stat: str
    op: str
    value: float
    arm: str | None = ABSENT
    observed: float | None
    holds: bool | None
    planned: tuple[str, ...] = field(default=(), metadata=INTERNAL)  # the plan's key order

    @classmethod
    def judged(cls, spec: dict[str, Any], observed: float | None,
               holds: bool | None) -> Condition:
        return cls(**spec, observed=observed, holds=holds, planned=tuple(spec))

    def as_json(self) -> dict[str, Any]:
        """The criterion as the plan states it (its keys in the plan's order), then what was
        observed."""
        out = super().as_json()
        head = {k: out[k] for k in self.planned if k in out}
        return {**head, **{k: v for k, v in out.items() if k not in head}}


@dataclass(kw_only=True, eq=False)
class Verdict(Out):
    status: str
    wording: str
    success: list[Condition]
    failure: list[Condition]
    suspect: list[str]
    min_detectable_effect: float | None = ABSENT


@dataclass(kw_only=True, eq=False)
class Excluded(Out):
    seq: int
    digest: str
    arm: str
    reason: str
    retracted_by: list[str]
    category: str | None = None
    correction: str | None = None


@dataclass(kw_only=True, eq=False)
class Refused(Out):
    """A run meant for the plan (its ``intended``) that the plan refused: not counted, not
    admitted (docs/recording.md, "Refused runs stay in view")."""

    seq: int
    digest: str
    arm: str
    status: str
    reason: str
    retracted: bool = False  # withdrawn since: listed, no longer waiting for a fix


@dataclass(kw_only=True, eq=False)
class VerdictStatus(Out):
    status: str
    wording: str


@dataclass(kw_only=True, eq=False)
class RetractedRun(Out):
    seq: int
    digest: str
    arm: str | None
    status: str
    score: float | None
    retraction: dict[str, Any]


@dataclass(kw_only=True, eq=False)
class RetractionReview(Out):
    """The verdict without the plan's retracted runs (as reported) and with them counted."""

    without: VerdictStatus
    with_: VerdictStatus = field(metadata={"json": "with"})
    changes_verdict: bool
    runs: list[RetractedRun]


@dataclass(kw_only=True, eq=False)
class Finding(Out):
    check: str
    severity: str
    message: str
    seq: int | None
    entries: list[str]

    @classmethod
    def of(cls, found: findings.Finding) -> Finding:
        return cls(check=found.check, severity=found.severity, message=found.message,
                   seq=found.seq, entries=list(found.entries))


@dataclass(kw_only=True, eq=False)
class ComponentArm(Out):
    name: str
    figure: float | None
    n: int


@dataclass(kw_only=True, eq=False)
class Component(Out):
    """A part of a composite suite (an lm-eval group's subtask), beside the roll-up."""

    name: str
    n_items: int
    arms: list[ComponentArm]
    effects: list[dict[str, Any]]


@dataclass(kw_only=True, eq=False)
class Reproduction(Out):
    """A run of the plan that another run reproduces (logbook.analysis.reproductions): the
    difference, reproduction minus run, over the items both scored, with its interval."""

    run: int
    by: int
    by_digest: str
    signer: str
    independent: bool  # signed by another key than the run
    difference: dict[str, Any] | None  # point, low, high, n, method; None without one
    higher: int  # items the reproduction scored higher
    lower: int  # items it scored lower
    agrees: bool | None  # the interval holds 0


@dataclass(kw_only=True, eq=False)
class Report(Out):
    """`logbook report PLAN --json`. Scores, intervals, effects and thresholds are fractions
    of the metric's own scale (a proportion's 0.745 is what text forms print as 74.5 points)."""

    plan: dict[str, Any]
    ledger: dict[str, Any]
    arms: list[ArmReport]
    effects: list[Effect]
    verdict: Verdict
    line: str | None
    excluded: list[Excluded]
    components: list[Component] = field(default_factory=list)
    retractions: RetractionReview | None = None
    refused: list[Refused] = field(default_factory=list)
    reproductions: list[Reproduction] = ABSENT  # when any run of the plan is reproduced
    # contamination per model and the scorer's agreement with hand spot-checks
    # (logbook.analysis.checks.plan_checks)
    checks: dict[str, Any] = field(default_factory=dict)
    # tokens, wall time and money per arm and for the plan, and its budget against them
    # (logbook.analysis.cost.plan_cost): when a run records usage or the plan has a budget
    cost: Cost = ABSENT
    findings: list[Finding]  # the command adds them (last, as `report --json` prints them)


SHAPES: tuple[type[Out], ...] = (  # each after the shapes it holds
    *arm_shapes.SHAPES, WorstCase, Effect, Condition, Verdict, Excluded, Refused,
    VerdictStatus, RetractedRun, RetractionReview, Finding, ComponentArm, Component,
    Reproduction, *cost_shapes.SHAPES, Report)


def output_schemas() -> dict[str, dict[str, Any]]:
    """The command outputs' schemas, keyed by file name."""
    from logbook.analysis import brief_shapes

    return {"report.json": json_schema(Report, SHAPES, "https://logbook.dev/schemas/report.json"),
            "brief.json": json_schema(brief_shapes.Brief, brief_shapes.SHAPES,
                                      "https://logbook.dev/schemas/brief.json")}


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema that schemas/ holds: the entry kinds' bodies, then the command outputs."""
    from logbook.model.schemas import entry_schemas

    return {**entry_schemas(), **output_schemas()}


def write_all(folder: Path) -> list[Path]:
    from logbook.model.schemas import render

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in all_schemas().items():
        path = folder / name
        path.write_text(render(schema))
        written.append(path)
    return written


if __name__ == "__main__":  # python -m logbook.analysis.report_shapes schemas/
    import sys

    for p in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        print(p)
