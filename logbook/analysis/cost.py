"""What runs used, summed (docs/reporting.md, "Cost"): tokens in and out, wall time and money
per arm and for a plan, and a plan's budget against them. Every run counts, failed and
retracted ones too: money spent on a run that failed is spent. Two currencies are never
added; a total says over how many runs it is, and the runs recording nothing are counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logbook.analysis.cost_shapes import (
    ArmCost,
    BudgetLine,
    Cost,
    MoneyTotal,
    Total,
    UsageSum,
)
from logbook.analysis.out import ABSENT

if TYPE_CHECKING:
    from logbook.verify.checked_reads import CheckedReads


@dataclass(frozen=True)
class Spent:
    """One run as the sums read it: its seq, status, whether it is retracted, and its usage
    (logbook.format.runfacts.usage_of; None: none recorded)."""

    seq: int
    status: str
    retracted: bool
    usage: dict[str, Any] | None


def summed(runs: Iterable[Spent]) -> UsageSum:
    """The sums of ``runs`` (see the module's text)."""
    runs = list(runs)
    counts: dict[str, list[float]] = {"tokens_in": [], "tokens_out": [], "wall_seconds": []}
    money: dict[str, list[float]] = {}
    for r in runs:
        u = r.usage or {}
        for key, values in counts.items():
            if key in u:
                values.append(u[key])
        if "cost" in u:
            money.setdefault(u["cost"]["currency"], []).append(u["cost"]["amount"])

    def total(key: str) -> Total | None:
        values = counts[key]
        if not values:
            return None
        return Total(total=sum(values) if key != "wall_seconds" else math.fsum(values),
                     runs=len(values))

    return UsageSum(runs=len(runs), unrecorded=sum(1 for r in runs if not r.usage),
                    failed=sum(1 for r in runs if r.status != "completed"),
                    retracted=[r.seq for r in runs if r.retracted],
                    tokens_in=total("tokens_in"), tokens_out=total("tokens_out"),
                    wall_seconds=total("wall_seconds"),
                    money=[MoneyTotal(currency=c, amount=math.fsum(v), runs=len(v))
                           for c, v in sorted(money.items())])


def _line(what: Any, unit: str, spent: float, budget: float, unrecorded: int,
          besides: list[MoneyTotal] | None = None) -> BudgetLine:
    return BudgetLine(what=what, unit=unit, spent=spent, budget=budget,
                      share=spent / budget if budget > 0 else None, over=spent > budget,
                      unrecorded=unrecorded, besides=besides or [])


def against(budget: Any, spent: UsageSum, usages: list[dict[str, Any] | None]) -> list[BudgetLine]:
    """Each quantity a plan's ``budget`` (its body's) names against ``spent``, the plan's sums
    (``usages``: its runs' usage, to count those recording none of a quantity)."""
    if not isinstance(budget, dict):
        return []
    out = []
    amount, currency = budget.get("amount"), budget.get("currency")
    if isinstance(amount, int | float) and isinstance(currency, str):
        mine = next((m for m in spent.money if m.currency == currency), None)
        out.append(_line("money", currency, mine.amount if mine else 0.0, float(amount),
                         sum(1 for u in usages if not u or "cost" not in u),
                         [m for m in spent.money if m.currency != currency]))
    tokens = budget.get("tokens")
    if isinstance(tokens, int):
        used = sum(t.total for t in (spent.tokens_in, spent.tokens_out) if t is not None)
        out.append(_line("tokens", "tokens", used, float(tokens), sum(
            1 for u in usages if not u or ("tokens_in" not in u and "tokens_out" not in u))))
    hours = budget.get("wall_hours")
    if isinstance(hours, int | float):
        wall = spent.wall_seconds.total / 3600 if spent.wall_seconds else 0.0
        out.append(_line("wall_hours", "hours", wall, float(hours),
                         sum(1 for u in usages if not u or "wall_seconds" not in u)))
    return out


def plan_cost(plan: Any) -> Cost:
    """The report's ``cost`` of a plan (logbook.analysis.view.PlanView): ABSENT when none of
    its runs records usage and it has no budget (nothing to say)."""
    runs = [Spent(r.seq, r.status, r.retracted, r.usage) for r in plan.runs]
    budget = plan.body.get("budget")
    if not budget and not any(r.usage for r in runs):
        return ABSENT  # type: ignore[no-any-return]
    names = [str(a.get("name")) for a in plan.body.get("arms", [])]
    by_arm = {n: [r for r, v in zip(runs, plan.runs, strict=True) if v.arm == n] for n in names}
    total = summed(runs)
    return Cost(arms=[ArmCost(arm=n, usage=summed(rs)) for n, rs in by_arm.items()],
                plan=total, budget=against(budget, total, [r.usage for r in runs]))


def plan_budget(store: CheckedReads, plan: str, budget: Any, retracted: set[str],
                admitted: list[int]) -> Any:
    """A plan's budget against what its runs spent (logbook.analysis.cost.against): its own
    runs and those admitted to it, failed and retracted ones included; ABSENT without a
    budget. Only an open plan with a budget has its runs read here."""
    from logbook.format.runfacts import usage_of
    from logbook.ledger.entry import Entry

    if not budget:
        return ABSENT
    found = {s.seq: s for s in store.entries_where("run", plan)}
    found.update((s.seq, s) for s in store.entries_at(sorted(set(admitted) - set(found))))
    spent = []
    for seq in sorted(found):
        e = Entry.from_stored(found[seq])
        spent.append(Spent(seq, str(e.body.get("status")), e.digest in retracted,
                           usage_of(e.body)))
    return against(budget, summed(spent), [r.usage for r in spent])


def money_text(amount: float, currency: str) -> str:
    return f"{amount:,.2f} {currency}"


def budget_text(line: dict[str, Any]) -> str:
    """``spent 4.20 of 50.00 USD (8%)``: a budget's line (a `BudgetLine`'s JSON), as report
    and brief print it."""
    share = "" if line["share"] is None else f" ({100 * line['share']:.0f}%)"
    spent, budget = line["spent"], line["budget"]
    if line["what"] == "money":
        said = f"spent {spent:,.2f} of {budget:,.2f} {line['unit']}{share}"
    elif line["what"] == "tokens":
        said = f"used {spent:,.0f} of {budget:,.0f} tokens{share}"
    else:
        said = f"ran {spent:,.2f} of {budget:,.2f} wall hours{share}"
    if line["over"]:
        said += ", over budget"
    if line["unrecorded"]:
        said += f"; {line['unrecorded']} run(s) recorded none"
    if line.get("besides"):
        said += "; besides " + ", ".join(money_text(m["amount"], m["currency"])
                                         for m in line["besides"]) + " (not counted against it)"
    return said


def duration(seconds: float) -> str:
    """Seconds as a person reads them: ``4.0 s``, ``12.5 min``, ``3.20 h``."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:,.2f} h"


def _runs(n: int) -> str:
    return f"{n} run{'s' if n != 1 else ''}"


def usage_text(u: dict[str, Any]) -> str:
    """One line of sums (a `UsageSum`'s JSON): ``12 runs (2 failed, retracted @45; 3
    recorded none): tokens in 12,345 (9 runs), out ...; wall 1.20 h (12 runs); 4.20 USD (9
    runs)``."""
    head = [f"{u['failed']} failed or aborted"] if u["failed"] else []
    if u["retracted"]:
        head.append("retracted " + ", ".join(f"@{s}" for s in u["retracted"]))
    if u["unrecorded"]:
        head.append(f"{u['unrecorded']} recorded none")
    parts = []
    tok = [f"{name} {t['total']:,.0f} ({_runs(t['runs'])})"
           for name, t in (("in", u["tokens_in"]), ("out", u["tokens_out"])) if t is not None]
    if tok:
        parts.append("tokens " + ", ".join(tok))
    if u["wall_seconds"]:
        w = u["wall_seconds"]
        parts.append(f"wall {duration(w['total'])} ({_runs(w['runs'])})")
    parts += [f"{money_text(m['amount'], m['currency'])} ({_runs(m['runs'])})"
              for m in u["money"]]
    return (_runs(u["runs"]) + (f" ({', '.join(head)})" if head else "") + ": "
            + ("; ".join(parts) if parts else "no usage recorded"))
