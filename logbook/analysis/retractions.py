"""Retractions judged: a plan's verdict with and without its retracted runs.

A retraction is argued, not silent, but it can still launder a result: withdraw the worse of two
runs and the figure is the better one's. `report` therefore shows the verdict both ways, and each
retraction's reason and correction beside the run it withdrew; the audit (A22) flags retractions
that change a verdict or remove an arm's worst run after later runs were seen.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from logbook.analysis.report.figures import plan_figures
from logbook.analysis.report_shapes import RetractedRun, RetractionReview, Verdict, VerdictStatus
from logbook.analysis.verdict import judge
from logbook.analysis.view import LedgerView, PlanView, RunView


def restored(plan: PlanView, digests: Iterable[str]) -> PlanView:
    """The plan as if the runs `digests` had never been retracted."""
    back = set(digests)
    runs = [r.unretracted() if r.digest in back else r for r in plan.runs]
    return PlanView(plan.entry, plan.amendments, runs, plan.retracted_by)


def verdict_of(plan: PlanView) -> Verdict:
    """The verdict against the plan's criteria from the runs that count in `plan`."""
    body = plan.body
    confidence = 1 - float(body.get("alpha", 0.05))
    arms, effects = plan_figures(plan, confidence)
    return judge(body, arms, effects, confidence)


def retraction_of(view: LedgerView, run: RunView) -> dict[str, Any]:
    """What withdrew a run: the (first) retraction's seq, digest, category, reason, correction."""
    r = run.retracted_by[0]
    return {"seq": r.seq, "digest": r.digest, "category": r.body.get("category"),
            "reason": r.body.get("reason"), "correction": r.body.get("correction")}


def retraction_review(view: LedgerView, plan: PlanView,
                      verdict: Verdict) -> RetractionReview | None:
    """The verdict without the plan's retracted runs (`verdict`, as reported) and with them
    counted as they stood, and what each retraction withdrew; None when none was retracted."""
    gone = [r for r in plan.runs if r.retracted]
    if not gone:
        return None
    with_them = verdict_of(restored(plan, (r.digest for r in gone)))
    return RetractionReview(
        without=VerdictStatus(status=verdict.status, wording=verdict.wording),
        with_=VerdictStatus(status=with_them.status, wording=with_them.wording),
        changes_verdict=with_them.status != verdict.status,
        runs=[RetractedRun(seq=r.seq, digest=r.digest, arm=r.arm,
                                           status=r.status, score=r.score,
                                           retraction=retraction_of(view, r))
              for r in gone])
