"""The shapes of one arm of the report (`ArmReport`, in `report --json`'s ``arms``): its runs,
its run-level and item-level intervals and the one chosen, its band, the components of its
items' variance, its spread (by source, by prompt variant). Written once, as the report's other
shapes (`report_shapes`, which lists these in its ``SHAPES`` for the schema export).
"""

from __future__ import annotations

from dataclasses import dataclass

from logbook.analysis.out import ABSENT, Out


@dataclass(kw_only=True, eq=False)
class Interval(Out):
    point: float | None = None
    low: float | None
    high: float | None
    method: str
    n: int


@dataclass(kw_only=True, eq=False)
class RunRow(Out):
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
    admitted_by: str | None = None  # the admission (digest) that counts it here (logbook admit)


@dataclass(kw_only=True, eq=False)
class RunLevel(Out):
    mean: float
    sd: float
    low: float
    high: float
    method: str
    k: int


@dataclass(kw_only=True, eq=False)
class ItemLevel(Out):
    point: float
    low: float
    high: float
    method: str
    n: int
    clusters: int | None = ABSENT  # with a cluster field: how many clusters were resampled
    design_effect: float | None = ABSENT  # (cluster-robust se / naive se) squared


@dataclass(kw_only=True, eq=False)
class ChosenInterval(Out):
    low: float
    high: float
    kind: str


@dataclass(kw_only=True, eq=False)
class ArmBand(Out):
    """The latest band measured on the apparatus the arm's runs share (`logbook band`)."""

    seq: int
    digest: str
    mean: float
    band: float
    sd: float
    k: int
    evaluator_config_hash: str | None
    outside: list[int]  # seqs of the arm's completed runs outside mean ± band


@dataclass(kw_only=True, eq=False)
class SampleComponents(Out):
    """Items scored k times: variance of single scores between items and within an item."""

    k: float  # mean samples per item
    n_items: int
    between: float
    within: float
    se_mean: float
    dominant: str


@dataclass(kw_only=True, eq=False)
class Spread(Out):
    """Standard deviations: between seeds (runs), between items (each run's item-level se),
    and their sum in quadrature when the plan sets total_spread."""

    seeds: float
    items: float
    total: float | None


@dataclass(kw_only=True, eq=False)
class SourceSpread(Out):
    """One source of run-to-run spread (docs/reporting.md, "Spread by source"): the sd
    pooled within groups of the arm's runs that differ only by that source, how many runs
    and groups gave it and how they decoded; or, with sd null, why it cannot be estimated."""

    sd: float | None
    runs: int
    groups: int
    how: str | None  # "greedy", "one fixed seed", "seeds at T=0.7"
    why: str | None  # why the source cannot be estimated from the arm's runs


@dataclass(kw_only=True, eq=False)
class SpreadSources(Out):
    """Run-to-run spread by source: execution (identical apparatus, a decode that should
    repeat), decoding (identical apparatus, seeds at temperature > 0), and items (the finite
    suite, as Spread.items)."""

    execution: SourceSpread
    decoding: SourceSpread
    items: float | None


@dataclass(kw_only=True, eq=False)
class VariantSpread(Out):
    """The plan's prompt variants within an arm: the one-way random-effects decomposition of
    the arm's run scores by variant (stats.sources.one_way_random), its F test, and each
    variant's mean and run count. Null figures when fewer than two variants were run or no
    variant has two runs."""

    field: str  # the apparatus field naming a run's variant
    declared: int
    seen: int
    runs: int
    means: dict[str, float]
    counts: dict[str, int]
    between: float | None  # variance between variants (ANOVA estimator; below 0: none seen)
    within: float | None   # variance between runs of one variant
    f: float | None
    df_between: int | None
    df_within: int | None
    p: float | None


@dataclass(kw_only=True, eq=False)
class ArmReport(Out):
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
    sources: SpreadSources | None
    variants: VariantSpread | None
    line: str | None


SHAPES: tuple[type[Out], ...] = (  # each after the shapes it holds
    Interval, RunRow, RunLevel, ItemLevel, ChosenInterval, ArmBand, SampleComponents, Spread,
    ArmReport)
