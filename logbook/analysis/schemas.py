"""JSON Schemas of command outputs (`report --json`, `brief --json`), and the export that
writes them into schemas/ beside the entry kinds' (`python -m logbook.analysis.schemas schemas/`).

The models here document the output's shape; a test validates real output against them, and
another keeps schemas/ fresh.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from logbook.model.schemas import entry_schemas, render


class _Out(BaseModel):
    """A part of a command's output. The analysis builds these without validation
    (``model_construct``: figures are computed, not parsed, and a plan's integer thresholds
    stay integers), and ``as_json`` gives exactly the fields it set, in declaration order."""

    model_config = ConfigDict(extra="forbid")

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_unset=True)


class Interval(_Out):
    point: float | None = None
    low: float | None
    high: float | None
    method: str
    n: int


class RunRow(_Out):
    seq: int
    digest: str
    status: str
    session: str | None
    score: float | None
    missing: int
    missing_rate: float | None
    retracted: bool
    retracted_by: list[str]
    reason: str | None
    interval: Interval | None


class RunLevel(_Out):
    mean: float
    sd: float
    low: float
    high: float
    method: str
    k: int


class ItemLevel(_Out):
    point: float
    low: float
    high: float
    method: str
    n: int
    clusters: int | None = None  # with a cluster field: how many clusters were resampled
    design_effect: float | None = None  # (cluster-robust se / naive se) squared


class ChosenInterval(_Out):
    low: float
    high: float
    kind: str


class ArmBand(_Out):
    """The latest band measured on the apparatus the arm's runs share (`logbook band`)."""

    seq: int
    digest: str
    mean: float
    band: float
    sd: float
    k: int
    evaluator_config_hash: str | None
    outside: list[int]  # seqs of the arm's completed runs outside mean ± band


class SampleComponents(_Out):
    """Items scored k times: variance of single scores between items and within an item."""

    k: float  # mean samples per item
    n_items: int
    between: float
    within: float
    se_mean: float
    dominant: str


class Spread(_Out):
    """Standard deviations: between seeds (runs), between items (each run's item-level se),
    and their sum in quadrature when the plan sets total_spread."""

    seeds: float
    items: float
    total: float | None


class ArmReport(_Out):
    name: str
    role: str
    expected: float | None
    tolerance: float | None
    planned_runs: int
    completed: int
    failed: int
    aborted: int
    retracted: int
    runs: list[RunRow]
    run_level: RunLevel | None
    item_level: ItemLevel | None
    wider: str | None
    mean: float | None
    interval: ChosenInterval | None
    differing_apparatus: dict[str, list[str]]
    band: ArmBand | None
    samples: SampleComponents | None
    spread: Spread | None
    line: str | None


class WorstCase(_Out):
    """The effect with every missing item-run imputed against (low) and for (high) it."""

    low: float
    high: float
    missing: int  # missing item-runs on both sides


class Effect(_Out):
    """Treatment minus control, a fraction of the metric's scale like every score here."""

    model_config = ConfigDict(extra="allow")  # mcnemar, reason when present
    control: str
    treatment: str
    point: float | None
    low: float | None = None
    high: float | None = None
    pvalue: float | None = None
    method: str | None = None
    n: int | None = None  # paired items, or runs when unit is "runs"
    unit: str | None = None  # "items" (paired) or "runs" (Welch, unpaired)
    n_dropped: int | None = None
    n_resamples: int | None = None  # a bootstrap p-value is never below 1 / n_resamples
    higher_is_better: bool | None = None
    worst_case: WorstCase | None = None
    design_effect: float | None = None
    clusters: int | None = None


class Condition(_Out):  # a pre-registered criterion and what the report observed for it
    stat: str
    op: str
    value: float
    arm: str | None = None
    observed: float | None
    holds: bool | None
    _planned: tuple[str, ...] = PrivateAttr(default=())  # the criterion's keys, as the plan has

    @classmethod
    def judged(cls, spec: dict[str, Any], observed: float | None,
               holds: bool | None) -> Condition:
        c = cls.model_construct(**spec, observed=observed, holds=holds)
        c._planned = tuple(spec)
        return c

    @model_serializer(mode="wrap")
    def _as_planned(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The criterion as the plan states it (its keys in the plan's order), then what was
        observed."""
        out: dict[str, Any] = handler(self)
        head = {k: out[k] for k in self._planned if k in out}
        return {**head, **{k: v for k, v in out.items() if k not in head}}


class Verdict(_Out):
    status: str
    wording: str
    success: list[Condition]
    failure: list[Condition]
    suspect: list[str]
    min_detectable_effect: float | None = None


class Excluded(_Out):
    seq: int
    digest: str
    arm: str
    reason: str
    retracted_by: list[str]
    category: str | None = None
    correction: str | None = None


class VerdictStatus(_Out):
    status: str
    wording: str


class RetractedRun(_Out):
    seq: int
    digest: str
    arm: str | None
    status: str
    score: float | None
    retraction: dict[str, Any]


class RetractionReview(_Out):
    """The verdict without the plan's retracted runs (as reported) and with them counted."""

    without: VerdictStatus
    with_: VerdictStatus = Field(alias="with")
    changes_verdict: bool
    runs: list[RetractedRun]


class Finding(_Out):
    check: str
    severity: str
    message: str
    seq: int | None
    entries: list[str]


class ComponentArm(_Out):
    name: str
    figure: float | None
    n: int


class Component(_Out):
    """A part of a composite suite (an lm-eval group's subtask), beside the roll-up."""

    name: str
    n_items: int
    arms: list[ComponentArm]
    effects: list[dict[str, Any]]


class Report(_Out):
    """`logbook report PLAN --json`. Scores, intervals, effects and thresholds are fractions
    of the metric's own scale (a proportion's 0.745 is what text forms print as 74.5 points)."""

    plan: dict[str, Any]
    ledger: dict[str, Any]
    arms: list[ArmReport]
    effects: list[Effect]
    verdict: Verdict
    line: str | None
    excluded: list[Excluded]
    findings: list[Finding]
    components: list[Component] = []
    retractions: RetractionReview | None = None


def output_schemas() -> dict[str, dict[str, Any]]:
    """The command outputs' schemas, keyed by file name."""
    from logbook.analysis.brief import brief_schema

    schema = Report.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://logbook.dev/schemas/report.json"
    return {"report.json": schema, "brief.json": brief_schema()}


def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema that schemas/ holds: the entry kinds' bodies, then the command outputs."""
    return {**entry_schemas(), **output_schemas()}


def write_all(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in all_schemas().items():
        path = folder / name
        path.write_text(render(schema))
        written.append(path)
    return written


if __name__ == "__main__":  # python -m logbook.analysis.schemas schemas/
    import sys

    for p in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        print(p)
