"""The audit's rule about retractions themselves: A22 (a retraction that launders a result).

A retraction stays visible, but it can still choose the figure: withdraw an arm's worst run,
or the other arm's best, or each run that lands badly and run it again, and the plan reports
what is left. What a real defect looks like is the invariant the rule holds to: a defect of
the harness touched every run made with it, and its fix changes the apparatus (a build, a
prompt hash, a scorer version), so the honest cure withdraws every run of that apparatus and
runs them again with the fix. A retraction of one completed run while another completed run
of the same arm and the same apparatus still counts (kept beside it, or made again after it)
withdrew one draw of an unchanged system and kept another: that is a choice among draws,
whatever the plan's state (incomplete, amended, past due) and whenever it was made. A run that
broke mid-way is kept as failed, not completed and withdrawn. Thresholds and reasons:
docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context, at
from logbook.analysis.audit.registry import rule
from logbook.analysis.retractions import restored, verdict_of
from logbook.analysis.view import PlanView, RunView
from logbook.findings import Finding

EPS = 1e-9


@rule("A22", severity="error", title="laundering retraction",
      finds="a completed run of a plan was retracted while a run of the same arm and "
      "apparatus still counts: one draw of an unchanged system withdrawn, another kept")
def laundering_retraction(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        withdrawn = [run for run in plan.runs if run.retracted and run.status == "completed"
                     and ctx.score(run) is not None]
        for run in withdrawn:
            key = ctx.apparatus_key(run)
            kept = [o for o in ctx.usable(plan.runs, run.arm) if ctx.apparatus_key(o) == key]
            if not kept:
                continue
            retraction = run.retracted_by[0]
            why = [f"{len(kept)} run(s) of arm {run.arm} with the same apparatus still count "
                   f"({at(kept[:5])}{' and more' if len(kept) > 5 else ''})"]
            if worst_of_arm(ctx, plan, run):
                why.append(f"it was the worst run of arm {run.arm}")
            now = verdict_of(plan).status
            with_it = verdict_of(restored(plan, [run.digest])).status
            if with_it != now:
                why.append(f"the verdict is {now} without it and {with_it} with it")
            yield Finding(
                "A22", "error",
                f"retraction @{retraction.seq} ({retraction.body.get('category')}) withdrew "
                f"completed run @{run.seq} of plan {plan.slug} (arm {run.arm}, "
                f"{ctx.show(run, ctx.score(run) or 0.0)}): {'; '.join(why)}; withdrawing one "
                "draw of an unchanged apparatus chooses the figure (a run that broke is kept "
                "as failed; a fixed harness changes the apparatus, and every run it made is "
                "made again)", retraction.seq,
                [retraction.digest, plan.digest, run.digest, *(o.digest for o in kept)])


def worst_of_arm(ctx: Context, plan: PlanView, run: RunView) -> bool:
    """Whether the run scored no better than every run of its arm that still counts."""
    hib = bool((ctx.body(plan).get("metric") or {}).get("higher_is_better", True))
    x = ctx.score(run)
    assert x is not None
    others = ctx.scores(ctx.usable(plan.runs, run.arm))
    sign = 1.0 if hib else -1.0
    return bool(others) and all(sign * (x - y) <= EPS for y in others)
