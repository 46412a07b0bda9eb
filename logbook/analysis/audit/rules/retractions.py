"""The audit's rule about retractions themselves: A22 (a retraction that launders a result).

A retraction stays visible, but it can still choose the figure: withdraw an arm's worst run,
once a better one is in, and the plan reports the better one. A retraction of a plan's run is
judged when it came after later runs of the plan existed (so their scores were known) and no
run of the same apparatus replaced the one it withdrew: it is an error when the run it withdrew
was its arm's worst, or when the plan's verdict differs with the run counted. Thresholds and
reasons: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context, at
from logbook.analysis.audit.registry import rule
from logbook.analysis.retractions import restored, verdict_of
from logbook.analysis.view import PlanView, RunView
from logbook.findings import Finding
from logbook.ledger.entry import Entry

EPS = 1e-9


@rule("A22", severity="error", title="laundering retraction",
      finds="a retraction, made after later runs, removed an arm's worst run or changed the "
      "verdict, and nothing replaced it")
def laundering_retraction(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        late = [(r, run) for run in plan.runs if run.retracted
                for r in run.retracted_by[:1] if not ctx.retracted(r.digest)
                and any(run.seq < o.seq < r.seq for o in plan.runs)]
        if not late:
            continue
        replaced = replacements(ctx, plan, late)
        late = [(r, run) for r, run in late if run.digest not in replaced
                and run.status == "completed" and ctx.score(run) is not None]
        # a plan left short of runs reports no verdict, so nothing was laundered (yet)
        now = verdict_of(plan).status if late else "incomplete"
        for retraction, run in late if now != "incomplete" else []:
            why = []
            if worst_of_arm(ctx, plan, run):
                why.append(f"it was the worst run of arm {run.arm}")
            else:  # only then is the verdict worth recomputing
                with_it = verdict_of(restored(plan, [run.digest])).status
                if with_it != now:
                    why.append(f"the verdict is {now} without it and {with_it} with it")
            if not why:
                continue
            later = [o for o in plan.runs if run.seq < o.seq < retraction.seq]
            yield Finding(
                "A22", "error",
                f"retraction @{retraction.seq} ({retraction.body.get('category')}) withdrew "
                f"run @{run.seq} of plan {plan.slug} (arm {run.arm}, "
                f"{ctx.show(run, ctx.score(run) or 0.0)}) "
                f"after later runs of the plan ({at(later[:5])}"
                f"{' and more' if len(later) > 5 else ''}), and no run of the same apparatus "
                f"replaced it: {'; '.join(why)}", retraction.seq,
                [retraction.digest, plan.digest, run.digest, *(o.digest for o in later)])


def worst_of_arm(ctx: Context, plan: PlanView, run: RunView) -> bool:
    """Whether the run scored no better than every run of its arm that still counts."""
    hib = bool((ctx.body(plan).get("metric") or {}).get("higher_is_better", True))
    x = ctx.score(run)
    assert x is not None
    others = ctx.scores(ctx.usable(plan.runs, run.arm))
    sign = 1.0 if hib else -1.0
    return bool(others) and all(sign * (x - y) <= EPS for y in others)


def replacements(ctx: Context, plan: PlanView,
                 late: list[tuple[Entry, RunView]]) -> set[str]:
    """Retracted runs that a later completed run of the same arm and apparatus replaced,
    each replacement counted once (the earliest retraction takes the earliest run after it)."""
    used: set[str] = set()
    out: set[str] = set()
    for retraction, run in sorted(late, key=lambda x: x[0].seq):
        key = ctx.apparatus_key(run)
        new = next((o for o in ctx.usable(plan.runs, run.arm)
                    if o.seq > retraction.seq and o.digest not in used
                    and ctx.apparatus_key(o) == key), None)
        if new is not None:
            used.add(new.digest)
            out.add(run.digest)
    return out
