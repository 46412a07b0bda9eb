"""The pre-registration (DESIGN §4.4 `plan`) and its amendments."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from logbook.format.metrics import BOUNDED_KINDS, MetricKind  # noqa: F401  (re-exported)
from logbook.model import apply_amendments  # noqa: F401  (re-exported)
from logbook.model.base import Digest, Record, Text

Stat = Literal["effect", "effect_low", "effect_high", "mean", "mean_low", "mean_high"]
Op = Literal[">", ">=", "<", "<="]
Analysis = Literal["paired_bootstrap", "paired_normal", "welch", "bootstrap"]


def is_date(text: str) -> bool:
    """An RFC 3339 full-date: YYYY-MM-DD, and a day the calendar has."""
    import datetime
    import re

    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


class Metric(Record):
    name: Text
    kind: MetricKind
    higher_is_better: bool = True
    k: int | None = Field(default=None, ge=1)
    aliases: list[Text] = Field(default_factory=list)  # other names runs may give the metric

    @model_validator(mode="after")
    def _k(self) -> Metric:
        if self.kind == "pass_at_k" and self.k is None:
            raise ValueError("metric.k: a pass_at_k metric needs k (the samples that may pass)")
        if self.kind != "pass_at_k" and self.k is not None:
            raise ValueError(f"metric.k: only a pass_at_k metric takes k (kind is {self.kind!r})")
        return self


class Suite(Record):
    name: Text
    version: str = ""
    dataset_hash: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$|^[^:]+:.+$")
    n_items: int = Field(ge=1)
    cluster_field: str | None = None
    # the split of the suite entry named (name, version) the plan measures
    # (logbook.model.suites; docs/recording.md, "Suites and held-out splits")
    split: Text | None = None


class Arm(Record):
    name: Text
    role: Literal["control", "treatment", "negative_control"]
    expected: float | None = None
    tolerance: float | None = Field(default=None, ge=0)
    apparatus: dict[Text, Any] = Field(default_factory=dict)  # dotted key -> pinned value

    @model_validator(mode="after")
    def _negative_control(self) -> Arm:
        if self.role == "negative_control" and self.expected is None:
            raise ValueError(f"arm {self.name!r} is a negative_control and needs `expected`")
        return self


class Condition(Record):
    stat: Stat
    op: Op
    value: float
    arm: str | None = None


class Budget(Record):
    """What a plan means to spend at most (docs/format.md, "Budget"): money (an amount in one
    currency), tokens (in and out together), wall hours; at least one."""

    amount: float | None = Field(default=None, ge=0)
    currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    tokens: int | None = Field(default=None, ge=0)
    wall_hours: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _coherent(self) -> Budget:
        if (self.amount is None) != (self.currency is None):
            raise ValueError("budget: amount and currency go together (an amount in a "
                             "currency, an ISO 4217 code such as USD)")
        if self.amount is None and self.tokens is None and self.wall_hours is None:
            raise ValueError("budget: give at least one of amount (with currency), tokens, "
                             "wall_hours")
        return self


class Plan(Record):
    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{1,63}$")
    title: Text
    decision: str = ""
    hypothesis: str = ""
    metric: Metric
    suite: Suite
    arms: list[Arm] = Field(min_length=1)
    variable: list[str] = Field(default_factory=list)
    pinned: dict[Text, Any] = Field(default_factory=dict)  # dotted key -> value, every arm
    runs_per_arm: int = Field(ge=1)
    min_effect: float = Field(default=0.0, ge=0)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    analysis: Analysis = "paired_bootstrap"
    success: list[Condition] = Field(default_factory=list)
    failure: list[Condition] = Field(default_factory=list)
    stopping_rule: str = "fixed"
    max_missing_rate: float = Field(default=0.02, ge=0, le=1)
    total_spread: bool = False  # report seed and item spread summed in quadrature (003)
    # the share of hand spot-checks the scorer may get wrong before the audit warns (A34)
    scorer_tolerance: float = Field(default=0.05, gt=0, lt=1)
    exclusions: list[str] = Field(default_factory=list)
    # prompt variants, a factor within every arm: each run names its variant in its apparatus
    # (`prompt_hash`, format.apparatus.VARIANT); the report gives the variance between them
    variants: list[Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$|^[^:]+:.+$")]] = \
        Field(default_factory=list)
    budget: Budget | None = None  # what the plan means to spend at most (brief compares)
    due: str | None = Field(default=None, json_schema_extra={"format": "date"},
                            description="RFC 3339 full-date (YYYY-MM-DD) by which the plan "
                            "should have its verdict")

    @model_validator(mode="after")
    def _coherent(self) -> Plan:
        if self.due is not None and not is_date(self.due):
            raise ValueError(f"due: {self.due!r} is not an RFC 3339 date (YYYY-MM-DD)")
        if all(c in "0123456789abcdef" for c in self.slug):
            raise ValueError(f"slug {self.slug!r} must contain a non-hex character "
                             "(so it never looks like a digest)")
        if len(self.variants) == 1 or len(set(self.variants)) != len(self.variants):
            raise ValueError("variants: a within-arm factor needs two or more distinct prompt "
                             f"hashes (got {len(self.variants)}, {len(set(self.variants))} "
                             "distinct)")
        from logbook.format.apparatus import VARIANT

        if self.variants and (VARIANT in self.pinned or any(VARIANT in a.apparatus
                                                             for a in self.arms)):
            raise ValueError(f"variants: the plan pins {VARIANT}, which its variants vary")
        names = [a.name for a in self.arms]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"arms: duplicate arm name {sorted(dup)[0]!r}")
        for where, conds in (("success", self.success), ("failure", self.failure)):
            for c in conds:
                if c.arm is not None and c.arm not in names:
                    raise ValueError(f"{where}: condition names arm {c.arm!r}, "
                                     f"which is not one of the plan's arms {names}")
        return self

    def arm(self, name: str) -> Arm | None:
        return next((a for a in self.arms if a.name == name), None)


class Amendment(Record):
    plan: Digest
    changes: dict[str, Any] = Field(min_length=1)
    reason: Text

    @model_validator(mode="after")
    def _fields(self) -> Amendment:
        unknown = sorted(set(self.changes) - set(Plan.model_fields) )
        if unknown:
            raise ValueError(f"changes: {unknown[0]!r} is not a plan field")
        if "slug" in self.changes:
            raise ValueError("changes: a plan's slug cannot be amended")
        return self
