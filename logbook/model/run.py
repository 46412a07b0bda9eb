"""A run (DESIGN §4.4 `run`): the apparatus it resolved into and its outcomes item by item."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from logbook.format.apparatus import typed_error
from logbook.format.reducers import PATTERN as REDUCERS
from logbook.model.base import Digest, Record, Text

Status = Literal["completed", "failed", "aborted"]
MAX_SCORE = 1e100  # beyond any metric's scale; sums and cubes of a suite's scores stay finite


class Outcomes(Record):
    """Per-item results, column-wise. A missing item has score null and an error string."""

    metric: Text
    id: list[str]
    score: list[float | None]
    cluster: list[str | None] | None = None
    sample: list[int] | None = None
    error: list[str | None] | None = None
    component: list[str | None] | None = None
    extra: dict[str, list[float | None]] | None = None
    # how an item scored several times gets its one score (logbook.format.reducers); mean
    reducer: str | None = Field(default=None, pattern=REDUCERS)
    # committed items (logbook.format.commitments): each row's salted commitment to its id,
    # content digest and score, in place of the content, which stays with the run's owner
    commitment: list[Digest] | None = None

    @model_validator(mode="after")
    def _columns(self) -> Outcomes:
        n = len(self.id)
        for name in ("score", "cluster", "sample", "error", "component", "commitment"):
            col = getattr(self, name)
            if col is not None and len(col) != n:
                raise ValueError(f"outcomes.{name} has {len(col)} values but outcomes.id has {n}")
        for name, col in (self.extra or {}).items():
            if len(col) != n:
                raise ValueError(f"outcomes.extra.{name} has {len(col)} values but "
                                 f"outcomes.id has {n}")
        errors = self.error or [None] * n
        for i, (s, e) in enumerate(zip(self.score, errors, strict=True)):
            if s is None:
                if not e:
                    raise ValueError(f"outcomes.score[{i}] (item {self.id[i]!r}) is null "
                                     "without an error: a missing item must say why in "
                                     "outcomes.error")
            elif not -MAX_SCORE <= s <= MAX_SCORE:
                raise ValueError(f"outcomes.score[{i}] (item {self.id[i]!r}) is {s:g}: item "
                                 f"scores lie within ±{MAX_SCORE:g}, so that a suite's sums "
                                 "and cubes stay finite")
        samples = self.sample or [0] * n
        seen: set[tuple[str, int]] = set()
        for i, key in enumerate(zip(self.id, samples, strict=True)):
            if key in seen:
                what = f"item {key[0]!r}" + (f" sample {key[1]}" if self.sample else "")
                raise ValueError(f"outcomes.id[{i}]: {what} appears twice")
            seen.add(key)
        return self


class LogRef(Record):
    name: Text
    sha256: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    size: int = Field(ge=0)
    excerpt: str | None = None


class Source(Record):
    """Where an ingested run was read from: the harness, the file (its name and SHA-256), which
    run of that file (``part``: a task, group or scorer) and the harness's own run identity."""

    harness: Text
    file: Text
    sha256: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    part: str | None = None
    ids: dict[Text, str] = Field(default_factory=dict)


class TraceRef(Record):
    """Where a run's item traces are kept (logbook.ledger.traces): a zstd frame of JSON Lines
    named by its SHA-256, its size in bytes and how many rows it holds."""

    sha256: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    size: int = Field(ge=0)
    items: int = Field(ge=0)


CURRENCY = r"^[A-Z]{3}$"  # an ISO 4217 code: three upper-case letters


class Money(Record):
    """A sum of money in one currency (never added to another currency's)."""

    amount: float = Field(ge=0)
    currency: str = Field(pattern=CURRENCY)


class Usage(Record):
    """What a run used (docs/format.md, "Usage"): tokens in and out, wall time and money,
    each optional, at least one given. Failed runs spend too."""

    tokens_in: int | None = Field(default=None, ge=0)
    tokens_out: int | None = Field(default=None, ge=0)
    wall_seconds: float | None = Field(default=None, ge=0)
    cost: Money | None = None

    @model_validator(mode="after")
    def _some(self) -> Usage:
        if all(getattr(self, k) is None for k in USAGE_FIELDS):
            raise ValueError("usage: give at least one of tokens_in, tokens_out, "
                             "wall_seconds, cost")
        return self


USAGE_FIELDS = ("tokens_in", "tokens_out", "wall_seconds", "cost")


class Intended(Record):
    """The plan and arm a run named but was not counted in, and the refusal's sentence (its
    ``plan`` and ``arm`` are then null: docs/recording.md, "Refused runs stay in view")."""

    plan: Digest
    arm: Text
    reason: Text


class Run(Record):
    plan: Digest | None
    arm: str | None = None
    status: Status
    reason: str | None = None
    apparatus: dict[str, Any]
    outcomes: Outcomes | None = None
    session: str | None = None
    started: str | None = None
    finished: str | None = None
    logs: list[LogRef] = Field(default_factory=list)
    note: str | None = None
    task: str | None = None
    group: str | None = None
    reported: dict[str, Any] | None = None
    source: Source | None = None
    intended: Intended | None = None
    beyond_plan: Text | None = None  # why a run past the arm's runs_per_arm was made anyway
    # the earlier run this one repeats (docs/format.md, "Reproductions"): the same suite and
    # metric, on the reproducer's machine and, to be independent, under their key
    reproduces: Digest | None = None
    # each item's prompt, output, target and verdict, kept beside the ledger (format.md §5)
    traces: TraceRef | None = None
    # tokens, wall time and money the run used (docs/format.md, "Usage")
    usage: Usage | None = None

    @field_validator("apparatus")
    @classmethod
    def _typed(cls, apparatus: dict[str, Any]) -> dict[str, Any]:
        """The typed apparatus fields (execution, retries, scoring: format.apparatus.TYPED)."""
        wrong = typed_error(apparatus)
        if wrong is not None:
            raise ValueError(wrong)
        return apparatus

    @model_validator(mode="after")
    def _coherent(self) -> Run:
        if self.status == "completed" and self.outcomes is None:
            raise ValueError("outcomes: a completed run needs its outcomes")
        if self.plan is not None and not self.arm:
            raise ValueError("arm: a run of a plan must name its arm")
        if self.plan is not None and self.intended is not None:
            raise ValueError("intended: a run counted in a plan was not refused by one")
        if self.traces is not None and self.outcomes is not None \
                and self.traces.items > len(self.outcomes.id):
            raise ValueError(f"traces.items is {self.traces.items} but the outcomes have "
                             f"{len(self.outcomes.id)} rows")
        if self.status != "completed" and not self.reason:
            raise ValueError(f"reason: a {self.status} run must say why")
        return self
