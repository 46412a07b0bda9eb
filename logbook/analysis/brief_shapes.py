"""The shape of `logbook brief --json`, written once: `brief` builds these dataclasses,
``as_json`` gives what the command prints, and schemas/brief.json is derived from the same
fields (`outputs.json_schema`, through pydantic only at export)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logbook.analysis.cost_shapes import BudgetLine, MoneyTotal
from logbook.analysis.out import ABSENT, Out


@dataclass(kw_only=True, eq=False)
class LedgerHead(Out):
    name: str
    uuid: str
    size: int
    head: str | None


@dataclass(kw_only=True, eq=False)
class Checked(Out):
    """What the integrity check made before this brief established (verify.integrity)."""

    verified: bool
    entries: int
    head: str | None
    checks: str
    signatures_checked: int  # checked one by one
    vouched_by_checkpoint: int  # entries whose signatures the latest checkpoint vouches for
    resumed_from: int = 0  # entries this machine had checked before (carried on, not redone)


@dataclass(kw_only=True, eq=False)
class LatestCheckpoint(Out):
    size: int
    root: str
    created: str


@dataclass(kw_only=True, eq=False)
class Integrity(Out):
    verified: Checked | None  # None: the ledger was not checked
    latest_checkpoint: LatestCheckpoint | None


@dataclass(kw_only=True, eq=False)
class PlanArm(Out):
    arm: str
    role: str | None
    completed: int
    planned: int
    failed: int
    aborted: int
    last_seq: int | None  # the arm's latest completed run


@dataclass(kw_only=True, eq=False)
class RefusedRun(Out):
    """A run meant for the plan's arm that the plan refused (its ``intended``), not admitted."""

    seq: int
    digest: str
    arm: str
    reason: str


@dataclass(kw_only=True, eq=False)
class OpenPlan(Out):
    """A plan with an arm short of its planned runs, and the arm to run next (an arm whose
    latest run was refused is ``blocked``: its runs are being refused, the plan or the runs
    need fixing first)."""

    plan: str
    slug: str
    title: str | None
    seq: int
    arms: list[PlanArm]
    next_arm: str
    runs_done: int
    runs_planned: int
    due: str | None
    refused: list[RefusedRun] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    # the plan's budget against what its runs spent (logbook.analysis.cost): with a budget
    budget: list[BudgetLine] = ABSENT

    @property
    def budget_lines(self) -> list[BudgetLine]:
        """The budget's lines; none for a plan without a budget."""
        return [] if self.budget is ABSENT else self.budget


@dataclass(kw_only=True, eq=False)
class Overdue(Out):
    """An open plan whose `due` date has passed."""

    plan: str
    slug: str
    due: str
    runs_done: int
    runs_planned: int


@dataclass(kw_only=True, eq=False)
class RetractionRow(Out):
    seq: int
    digest: str
    target: str | None
    category: str | None
    reason: str | None
    correction: str | None


@dataclass(kw_only=True, eq=False)
class RestingOn(Out):
    """A claim or note that rests on what a shown retraction withdrew."""

    seq: int
    digest: str
    kind: str
    rests_on: list[str]
    text: str | None


@dataclass(kw_only=True, eq=False)
class StoredAudit(Out):
    """What the last `logbook audit` stored: its errors as stored (a derived row that the
    check cannot vouch for, hence ``verified`` false)."""

    size: int
    at: str
    errors: list[dict[str, Any]]
    verified: bool


@dataclass(kw_only=True, eq=False)
class Remeasure(Out):
    """A later run of a band's apparatus scored under another evaluator: ``changed`` names
    the `evaluator.*` fields that differ from the band's runs'."""

    seq: int
    digest: str
    evaluator_config_hash: str | None
    changed: list[str]


@dataclass(kw_only=True, eq=False)
class BandRow(Out):
    seq: int
    selector: str
    k: int
    mean: float
    band: float
    evaluator_config_hash: str | None
    remeasure: Remeasure | None


@dataclass(kw_only=True, eq=False)
class ClaimRow(Out):
    seq: int
    digest: str
    statement: str
    status: str


@dataclass(kw_only=True, eq=False)
class HeldOutRow(Out):
    """A held-out split a suite entry names (docs/recording.md, "Suites and held-out splits"):
    runs on it outside its plan are looks past what it allows."""

    seq: int  # the suite entry
    suite: str
    version: str
    split: str
    looks: int  # how many looks it allows


@dataclass(kw_only=True, eq=False)
class NoteRow(Out):
    seq: int
    text: str


@dataclass(kw_only=True, eq=False)
class SessionRun(Out):
    seq: int
    digest: str
    plan: str | None
    arm: str | None
    status: str | None


@dataclass(kw_only=True, eq=False)
class PreviousSession(Out):
    session: str
    runs: list[SessionRun]


@dataclass(kw_only=True, eq=False)
class SpooledRun(Out):
    """A run a harness integration could not write at all (no ledger, a lock held past
    LOGBOOK_LOCK_TIMEOUT, a full disk), waiting in the spool beside the ledger
    (logbook.integrations.spool): `logbook spool list` prints these, `brief` lists them."""

    file: str  # its file in .logbook/spool/
    spooled_at: str | None  # when (RFC 3339, UTC)
    source: str | None  # the harness: inspect, lm-eval
    output: str | None  # the harness output it was read from
    runs: int | None  # how many runs it holds (None: read again from the output when appended)
    plan: str | None  # the plan and arm it was recorded for, as named
    arm: str | None
    why: str  # why it was spooled (or why its record cannot be read)


@dataclass(kw_only=True, eq=False)
class Brief(Out):
    """`logbook brief --json`: what to know before the first run. Findings (``remeasure``,
    ``beyond_band``, the audit's errors) are the stored audit's, as it stored them."""

    ledger: LedgerHead
    integrity: Integrity
    open_plans: list[OpenPlan]
    overdue: list[Overdue]
    remeasure: list[dict[str, Any]]
    beyond_band: list[dict[str, Any]]
    retractions: list[RetractionRow]
    resting_on_retracted: list[RestingOn]
    audit: StoredAudit | None
    bands: list[BandRow]
    claims: list[ClaimRow]
    notes: list[NoteRow]
    held_out: list[HeldOutRow]  # the held-out splits of the standing suite entries
    previous_session: PreviousSession | None
    spooled: list[SpooledRun]  # runs waiting in the spool, not yet in the ledger
    next: list[str] = field(  # the three things to do next, most urgent first
        metadata={"limits": {"min_length": 1, "max_length": 3}})


SHAPES: tuple[type[Out], ...] = (  # each after the shapes it holds
    LedgerHead, Checked, LatestCheckpoint, Integrity, PlanArm, RefusedRun, MoneyTotal,
    BudgetLine, OpenPlan, Overdue,
    RetractionRow, RestingOn, StoredAudit, Remeasure, BandRow, ClaimRow, HeldOutRow, NoteRow,
    SessionRun,
    PreviousSession, SpooledRun, Brief)
