"""`logbook report PLAN`: every run of a plan, the right error bars, the effect and the verdict.

The report reads the whole ledger for the plan: failed, aborted and retracted runs are listed;
retracted ones are excluded from the figures, with the retraction's reason. The verdict, the
interval and any p-value printed together come from one method.

Arrows run one way: this module composes the report from its leaves (`arms`, `effects`,
`figures`), `components`, `verdict` and `retractions`; those read the view and `stats`, and
`retractions` reads the leaves, never this module. Its output forms are in `formats`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logbook.analysis.arm_shapes import ArmReport
from logbook.analysis.bands import band_of, latest_bands
from logbook.analysis.components import components
from logbook.analysis.report.figures import plan_figures
from logbook.analysis.report_shapes import ABSENT, Excluded, Refused, Report
from logbook.analysis.verdict import judge
from logbook.analysis.view import LedgerView, PlanView


def _excluded(view: LedgerView, arms: list[ArmReport]) -> list[Excluded]:
    """The retracted runs, each with what withdrew it."""
    excluded = []
    for a in arms:
        for row in a.runs:
            if row.retracted:
                bodies = [view.ledger.get(d).body for d in row.retracted_by]
                excluded.append(Excluded(
                    seq=row.seq, digest=row.digest, arm=a.name,
                    reason="; ".join(str(b.get("reason")) for b in bodies),
                    retracted_by=row.retracted_by,
                    category="; ".join(str(b.get("category")) for b in bodies),
                    correction="; ".join(str(b["correction"]) for b in bodies
                                         if b.get("correction")) or None))
    return excluded


def refused_rows(view: LedgerView, plan: PlanView) -> list[Refused]:
    """The runs meant for the plan that it refused, with the refusal (not in the figures)."""
    return [Refused(seq=r.seq, digest=r.digest, arm=str(want.get("arm")), status=r.status,
                    reason=str(want.get("reason")), retracted=r.retracted)
            for r, want in view.refused(plan.digest)]


def _plan_header(plan: PlanView) -> dict[str, Any]:
    body = plan.body
    return {"digest": plan.digest, "seq": plan.seq, "slug": plan.slug,
            "title": body.get("title"), "decision": body.get("decision"),
            "metric": body.get("metric"), "suite": body.get("suite"),
            "runs_per_arm": body.get("runs_per_arm"), "min_effect": body.get("min_effect"),
            "alpha": body.get("alpha"), "analysis": body.get("analysis"),
            "amendments": [{"seq": a.seq, "digest": a.digest,
                            "changes": a.body.get("changes"),
                            "reason": a.body.get("reason")} for a in plan.amendments],
            "retracted": bool(plan.retracted_by)}


def report_with_findings(view: LedgerView, plan_ref: str,
                         step: Callable[[], None] = lambda: None) -> Report:
    """The report of one plan with the audit's findings about it: what `logbook report`
    prints and the web view's plan page shows, composed here once. ``step`` is called
    between the two (a progress bar's tick)."""
    from logbook.analysis.audit import findings_for_plan
    from logbook.analysis.report_shapes import Finding

    rep = build_report(view, plan_ref)
    step()
    rep.findings = [Finding.of(f) for f in findings_for_plan(view, rep.plan["digest"])]
    return rep


def build_report(view: LedgerView, plan_ref: str) -> Report:
    """The report on the plan ``plan_ref`` (what `report --json` prints as its ``as_json``,
    less the audit findings the command adds to ``findings``)."""
    # retractions reads this package's leaves, and importing a leaf runs this module first:
    # imported when a report is built, so either module can be imported first
    from logbook.analysis.checks import plan_checks
    from logbook.analysis.cost import plan_cost
    from logbook.analysis.report_shapes import Reproduction
    from logbook.analysis.reproductions import reproductions
    from logbook.analysis.retractions import retraction_review

    plan = view.plan(plan_ref)
    body = plan.body
    confidence = 1 - float(body.get("alpha", 0.05))
    bands = latest_bands(view)
    arms, effects = plan_figures(plan, confidence, lambda runs: band_of(view, runs, bands))
    verdict = judge(body, arms, effects, confidence)
    line = next((a.line for a in arms if a.role == "treatment" and a.line),
                next((a.line for a in arms if a.line), None))
    return Report(
        plan=_plan_header(plan), ledger={"size": view.size}, arms=arms, effects=effects,
        verdict=verdict, line=line, excluded=_excluded(view, arms), findings=ABSENT,
        components=components(plan, confidence),
        retractions=retraction_review(view, plan, verdict), refused=refused_rows(view, plan),
        reproductions=[Reproduction(**r.as_json()) for r in reproductions(
            view, plan.runs, confidence)] or ABSENT, checks=plan_checks(view, plan),
        cost=plan_cost(plan))
