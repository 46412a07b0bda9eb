"""A plan's figures: every arm's report and each treatment's effect over the (first) control."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logbook.analysis.arm_shapes import ArmReport
from logbook.analysis.report.arms import ArmMeans, arm_report
from logbook.analysis.report.effects import effect
from logbook.analysis.report_shapes import Effect
from logbook.analysis.view import PlanView, RunView

Band = Callable[[list[RunView]], dict[str, Any] | None]


def plan_figures(plan: PlanView, confidence: float, band: Band | None = None
                 ) -> tuple[list[ArmReport], list[Effect]]:
    """(arms, effects) from the runs that count in ``plan``; ``band`` gives an arm's band."""
    means_of = ArmMeans()
    arms = [arm_report(plan, a, confidence, band, means_of) for a in plan.arms()]
    controls = [a["name"] for a in plan.arms() if a["role"] == "control"]
    treatments = [a["name"] for a in plan.arms() if a["role"] == "treatment"]
    effects = ([effect(plan, controls[0], t, confidence, means_of) for t in treatments]
               if controls else [])
    return arms, effects
