"""The audit's rules on outside time (docs/format.md, "Timestamps"; docs/auditing.md, "Outside
time"): A31, a plan whose registration the stamped times contradict, and A32, a plan with no
stamped checkpoint between it and its first run, in a ledger that stamps its checkpoints.

A `timestamp` entry says that a time-stamping authority stamped the checkpoint of its size by
the time its token states; admission held the token to that checkpoint's body and time. Who
signed it is for `logbook verify --tsa-cert` to check; the audit reads the times as stamped.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

from logbook.analysis.audit.context import Context
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import PlanView
from logbook.findings import Finding

Stamp = tuple[int, datetime.datetime, int]  # size, time, seq


def _stamps(ctx: Context) -> list[Stamp]:
    """(size, time, seq) of every timestamp entry whose time reads, oldest size first."""
    out = []
    for e in ctx.view.entries_of("timestamp"):
        size, when = e.body.get("size"), e.body.get("time")
        try:
            at = datetime.datetime.fromisoformat(str(when).replace("Z", "+00:00"))
        except ValueError:
            continue
        if type(size) is int:
            out.append((size, at, e.seq))
    return sorted(out)


def _windows(stamps: list[Stamp], ctx: Context) -> Iterator[tuple[PlanView, list[Stamp],
                                                                   list[Stamp]]]:
    """Each scoped plan with runs: its first run, the stamps of checkpoints that hold the plan
    but not that run, and those that hold the run."""
    for plan in ctx.scoped_plans():
        first = plan.runs[0] if plan.runs else None
        if first is None:
            continue
        before = [s for s in stamps if plan.seq < s[0] <= first.seq]
        after = [s for s in stamps if s[0] > first.seq]
        yield plan, before, after


def _shown(stamp: Stamp) -> str:
    size, at, seq = stamp
    return f"size {size}, stamped {at.strftime('%Y-%m-%dT%H:%M:%SZ')} (@{seq})"


@rule("A31", severity="error", title="stamps contradict the plan",
      finds="a plan's first stamped checkpoint (after the plan, before its runs) was stamped "
            "later than a checkpoint that holds its runs")
def stamps_contradict_plan(ctx: Context) -> Iterator[Finding]:
    stamps = _stamps(ctx)
    for plan, before, after in _windows(stamps, ctx) if stamps else ():
        if not before or not after:
            continue
        earliest = min(before, key=lambda s: s[1])
        runs_at = min(after, key=lambda s: s[1])
        if earliest[1] > runs_at[1]:
            first = plan.runs[0]
            yield Finding("A31", "error", f"plan {plan.slug} @{plan.seq}: "
                          f"its first stamped checkpoint ({_shown(earliest)}) was stamped "
                          f"after one that already holds its first run @{first.seq} "
                          f"({_shown(runs_at)}): the outside time does not show the plan came "
                          "before its runs", plan.seq,
                          [plan.digest, first.digest])


@rule("A32", severity="info", title="plan not stamped before its runs",
      finds="in a ledger that stamps its checkpoints, no stamped checkpoint lies between a "
            "plan and its first run")
def plan_not_stamped(ctx: Context) -> Iterator[Finding]:
    stamps = _stamps(ctx)
    for plan, before, _after in _windows(stamps, ctx) if stamps else ():
        if before:
            continue
        first = plan.runs[0]
        yield Finding("A32", "info", f"plan {plan.slug} @{plan.seq}: no stamped "
                      f"checkpoint lies between it and its first run @{first.seq}, so no "
                      "outside time shows the plan came first (stamp a checkpoint after "
                      "writing a plan: logbook checkpoint --timestamp URL)", plan.seq,
                      [plan.digest, first.digest])
