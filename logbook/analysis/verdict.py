"""The verdict against a plan's pre-registered criteria, exactly as DESIGN §4.4 defines it.

`incomplete` while an arm has fewer completed runs than planned; otherwise `success` when every
success condition holds, `failure` when every failure condition holds, `inconclusive` otherwise.
Only the criteria decide.
"""

from __future__ import annotations

import operator
from typing import Any, cast

from logbook.analysis.schemas import ABSENT, ArmReport, Condition, Effect, Verdict

OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def _stat(cond: dict[str, Any], arms: list[ArmReport], effects: list[Effect]) -> float | None:
    stat = cond["stat"]
    name = cond.get("arm")
    if stat.startswith("effect"):
        eff = next((e for e in effects if name is None or e.treatment == name), None)
        if eff is None or eff.point is None:
            return None
        return {"effect": eff.point, "effect_low": eff.low, "effect_high": eff.high}[stat]
    arm = next((a for a in arms if (name is None and a.role != "negative_control")
                or a.name == name), None)
    if arm is None or arm.mean is None or arm.interval is None:
        return None
    return {"mean": arm.mean, "mean_low": arm.interval.low,
            "mean_high": arm.interval.high}[stat]


def _conditions(conds: list[dict[str, Any]], arms: list[ArmReport],
                effects: list[Effect]) -> list[Condition]:
    out = []
    for c in conds:
        value = _stat(c, arms, effects)
        holds = None if value is None else OPS[c["op"]](value, c["value"])
        out.append(Condition.judged(c, value, holds))
    return out


def negative_control_problems(arms: list[ArmReport], scale: float = 1.0) -> list[str]:
    """A negative control that lands away from its expected score makes the harness suspect."""
    problems = []
    for a in arms:
        if a.role != "negative_control" or a.mean is None:
            continue
        expected = cast(float, a.expected)  # admission requires it of a negative control
        tol = a.tolerance
        if tol is not None:
            away = abs(a.mean - expected) > tol
            band = f"{expected * scale:g} ± {tol * scale:g}"
        else:
            low = a.mean if a.interval is None else a.interval.low
            high = a.mean if a.interval is None else a.interval.high
            away = not (low <= expected <= high)
            band = f"{expected * scale:g} (outside its interval)"
        if away:
            problems.append(f"negative control arm {a.name!r} scored {a.mean * scale:.4g}, "
                            f"expected {band}: the harness is suspect")
    return problems


def judge(plan: dict[str, Any], arms: list[ArmReport], effects: list[Effect],
          confidence: float) -> Verdict:
    success = _conditions(plan.get("success") or [], arms, effects)
    failure = _conditions(plan.get("failure") or [], arms, effects)
    short = [f"{a.name} {a.completed}/{a.planned_runs}" for a in arms
             if a.completed < a.planned_runs]
    from logbook.analysis.display import scale_of

    scale = scale_of((plan.get("metric") or {}).get("kind"))
    suspect = negative_control_problems(arms, scale)
    if short:
        status = "incomplete"
        wording = f"incomplete: fewer completed runs than planned ({', '.join(short)})"
    elif success and all(c.holds for c in success):
        status, wording = "success", "success: every pre-registered success condition holds"
    elif failure and all(c.holds for c in failure):
        status, wording = "failure", "failure: every pre-registered failure condition holds"
    else:
        status = "inconclusive"
        wording = "inconclusive: indistinguishable at this suite and run budget"
    unknown = [c for c in (*success, *failure) if c.observed is None]
    if status == "inconclusive" and unknown:
        reasons = sorted({str(e.reason) for e in effects
                          if e.point is None and e.reason is not ABSENT and e.reason})
        wording = ("inconclusive: a pre-registered criterion could not be computed ("
                   + ", ".join(sorted({c.stat for c in unknown}))
                   + (f": {'; '.join(reasons)}" if reasons else "") + ")")
    mde = _mde(plan, arms) if status == "inconclusive" and not unknown else None
    if mde is None:
        return Verdict(status=status, wording=wording, success=success,
                                       failure=failure, suspect=suspect)
    wording += (f"; this suite and run count can detect an effect of about "
                f"{mde * scale:.3g} points at 80% power (the plan's min_effect "
                f"is {plan.get('min_effect', 0) * scale:g})")
    return Verdict(status=status, wording=wording, success=success,
                                   failure=failure, suspect=suspect, min_detectable_effect=mde)


def _mde(plan: dict[str, Any], arms: list[ArmReport]) -> float | None:
    if plan["metric"]["kind"] != "proportion":
        return None
    control = next((a for a in arms if a.role == "control"), None)
    n = plan["suite"].get("n_items")
    if control is None or control.mean is None or not n:
        return None
    from logbook import stats
    from logbook.stats.planning import working_baseline

    p = working_baseline(control.mean)
    try:
        return float(stats.min_detectable_effect(n, p, alpha=float(plan.get("alpha", 0.05)),
                                                 paired=True))
    except ValueError:
        return None
