"""The audit's rules about runs a plan refused and runs admitted to it afterwards: A24 (runs
meant for a plan are being refused) and A25 (a selective or late admission).

A run meant for a plan's arm that the plan refused stays in the ledger as an exploratory run
naming what it was meant for (``intended``). While it is refused, the arm's figures lack it:
A24 says so. `logbook admit` counts such a run once the plan, amended, accepts it. Admissions
are judged as retractions are (A22): admitting some of the refused runs the plan now accepts
and not the others chooses which results count; admitting a run after later runs of the plan
were seen may have been chosen by them. Thresholds and reasons: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logbook.analysis.audit.context import Context
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import PlanView, RunView
from logbook.errors import InputError
from logbook.findings import Finding


def _refused(ctx: Context, plan: PlanView) -> list[tuple[RunView, dict[str, Any]]]:
    return [(r, want) for r, want in ctx.view.refused(plan.digest) if not r.retracted]


@rule("A24", severity="warning", title="runs being refused",
      finds="runs meant for a plan's arm were refused by the plan (suite, metric or pins) and "
      "are neither admitted nor retracted: the arm's figures go without them")
def runs_refused(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        by_arm: dict[str, list[tuple[RunView, dict[str, Any]]]] = {}
        for r, want in _refused(ctx, plan):
            by_arm.setdefault(str(want.get("arm")), []).append((r, want))
        for arm, found in by_arm.items():
            reasons = list(dict.fromkeys(str(w.get("reason")) for _, w in found))
            shown = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if
                                              len(reasons) > 3 else "")
            yield Finding("A24", "warning", f"runs intended for plan {plan.slug} arm {arm} "
                          f"were refused: {len(found)} ({', '.join(f'@{r.seq}' for r, _ in found)}"
                          f"), reasons: {shown}; fix the plan (`logbook amend`) and count them "
                          "(`logbook admit`), or retract them saying why",
                          found[-1][0].seq, [plan.digest, *(r.digest for r, _ in found)])


def fits(ctx: Context, plan: PlanView, run: RunView, arm: str) -> bool:
    """Whether the plan as it stands would take the run in the arm: the door's metric and
    pin checks, and its suite checks against the plan's counted runs (logbook.ledger.intake)."""
    from logbook.ledger import intake

    body = ctx.body(plan)
    run_body = run.body
    try:
        intake.check_metric(plan.slug, body, run_body)
        intake.check_pins(body, arm, run_body.get("apparatus"))
    except InputError:
        return False
    if arm not in [a.get("name") for a in body.get("arms") or []]:
        return False
    suite = body.get("suite") or {}
    mine = (run_body.get("apparatus") or {}).get("dataset_hash")
    if suite.get("dataset_hash") and mine != suite["dataset_hash"]:
        return False
    known: set[str] = set()
    for r in plan.runs:
        if not r.retracted:
            known.update((r.body.get("outcomes") or {}).get("id") or [])
    ids = set((run_body.get("outcomes") or {}).get("id") or [])
    return len(known | ids) <= int(suite.get("n_items") or 0)


@rule("A25", severity="error", title="selective or late admission",
      finds="runs were admitted to a plan while other refused runs meant for it, which the "
      "plan as it stands accepts, were not (error); or a run was admitted after later runs "
      "of the plan were appended (warning)")
def admissions(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        admitted = [r for r in plan.runs if r.admitted is not None
                    and not ctx.retracted(r.admitted.digest)]
        if not admitted:
            continue
        left = [r for r, want in _refused(ctx, plan)
                if fits(ctx, plan, r, str(want.get("arm")))]
        if left:
            yield Finding("A25", "error", f"plan {plan.slug}: {len(admitted)} refused run(s) "
                          f"were admitted ({', '.join(f'@{r.seq}' for r in admitted)}) but "
                          f"{len(left)} other(s) the plan as it stands accepts were not "
                          f"({', '.join(f'@{r.seq}' for r in left)}): admit them too, or "
                          "retract them saying why", max(r.admitted.seq for r in admitted
                                                         if r.admitted is not None),
                          [plan.digest, *(r.digest for r in admitted),
                           *(r.digest for r in left)])
        for r in admitted:
            assert r.admitted is not None
            later = [x for x in plan.runs if x.admitted is None
                     and r.seq < x.seq < r.admitted.seq]
            if later:
                yield Finding("A25", "warning", f"run @{r.seq} was admitted to plan "
                              f"{plan.slug} arm {r.arm} by @{r.admitted.seq}, after "
                              f"{len(later)} later run(s) of the plan were appended "
                              f"({', '.join(f'@{x.seq}' for x in later)}): the choice to "
                              "count it may rest on their results", r.admitted.seq,
                              [plan.digest, r.admitted.digest, r.digest,
                               *(x.digest for x in later)])
