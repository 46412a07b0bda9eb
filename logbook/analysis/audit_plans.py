"""The audit's rule about plans left without a verdict: A23 (a plan past its due date).

A plan may carry `due` (an RFC 3339 date). While an arm of the plan has fewer completed runs
than planned, its verdict is `incomplete`: before the date that is information, after it a
warning, because a plan that quietly stops short is how an unwelcome result goes unreported.
The audit compares the date with today's date (UTC), so the same ledger can gain this finding
as time passes. Thresholds and reasons: docs/audit.md.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

from logbook.analysis.audit import Context
from logbook.findings import Finding


def today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


def a23_past_due(ctx: Context) -> Iterator[Finding]:
    now = today()
    for plan in ctx.scoped_plans():
        body = ctx.body(plan)
        due = body.get("due")
        if not isinstance(due, str):
            continue
        try:
            date = datetime.date.fromisoformat(due)
        except ValueError:
            continue
        planned = int(body.get("runs_per_arm") or 0)
        counts = {a["name"]: len(ctx.usable(plan.runs, a["name"])) for a in plan.arms()}
        short = {name: n for name, n in counts.items() if n < planned}
        if not short:
            continue  # every arm has its runs: the plan has a verdict
        done = ", ".join(f"{name} {n}/{planned}" for name, n in counts.items())
        if date < now:
            yield Finding("A23", "warning", f"plan {plan.slug} was due {due} and has no verdict "
                          f"yet ({done} completed runs): report it, or amend or retract it "
                          "saying why", plan.seq, [plan.digest])
        else:
            yield Finding("A23", "info", f"plan {plan.slug} is due {due} ({(date - now).days} "
                          f"day(s) left) and has no verdict yet ({done} completed runs)",
                          plan.seq, [plan.digest])
