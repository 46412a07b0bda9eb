"""The shapes of what runs used and what a plan meant to spend (logbook.analysis.cost): the
report's ``cost`` (logbook.analysis.report_shapes) and an open plan's ``budget`` in the brief
(logbook.analysis.brief_shapes) are built from these, their schemas exported with each."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from logbook.analysis.out import Out


@dataclass(kw_only=True, eq=False)
class Total(Out):
    """One quantity summed over the runs that recorded it (``runs`` of them)."""

    total: float
    runs: int


@dataclass(kw_only=True, eq=False)
class MoneyTotal(Out):
    """Money spent in one currency (two currencies are never added), over ``runs`` runs."""

    currency: str
    amount: float
    runs: int


@dataclass(kw_only=True, eq=False)
class UsageSum(Out):
    """What a set of runs used: every run is summed, failed and aborted ones (what they spent
    is spent) and retracted ones (named by seq) included; ``unrecorded`` of them record no
    usage at all, and each total says over how many runs it is."""

    runs: int
    unrecorded: int
    failed: int  # failed or aborted
    retracted: list[int]  # the seqs of retracted runs among them
    tokens_in: Total | None
    tokens_out: Total | None
    wall_seconds: Total | None
    money: list[MoneyTotal]


@dataclass(kw_only=True, eq=False)
class ArmCost(Out):
    arm: str
    usage: UsageSum


@dataclass(kw_only=True, eq=False)
class BudgetLine(Out):
    """One quantity of a plan's budget against what its runs spent: money (in the budget's
    currency; money spent in others is ``besides``), tokens (in and out together) or wall
    hours. ``unrecorded``: runs of the plan that record none of this quantity, so that what
    is spent is at least ``spent``."""

    what: Literal["money", "tokens", "wall_hours"]
    unit: str  # the currency, "tokens" or "hours"
    spent: float
    budget: float
    share: float | None  # spent / budget; None for a budget of 0
    over: bool
    unrecorded: int
    besides: list[MoneyTotal] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class Cost(Out):
    """`report --json`'s ``cost``: per arm and for the plan, and the plan's budget against
    the plan's sums (empty without a budget)."""

    arms: list[ArmCost]
    plan: UsageSum
    budget: list[BudgetLine]


SHAPES: tuple[type[Out], ...] = (Total, MoneyTotal, UsageSum, ArmCost, BudgetLine, Cost)
