"""The verdict against a plan's pre-registered criteria, exactly as DESIGN §4.4 defines it.

`incomplete` while an arm has fewer completed runs than planned; otherwise `success` when every
success condition holds, `failure` when every failure condition holds, `inconclusive` otherwise.
Only the criteria decide.
"""

from __future__ import annotations

import operator
from typing import Any, cast

from logbook.analysis.arm_shapes import ArmReport
from logbook.analysis.report_shapes import ABSENT, Condition, Effect, Verdict

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
        wording = "inconclusive: " + _inconclusive(success, failure, effects, scale)
    unknown = [c for c in (*success, *failure) if c.observed is None]
    if status == "inconclusive" and unknown:
        reasons = sorted({str(e.reason) for e in effects
                          if e.point is None and e.reason is not ABSENT and e.reason})
        wording = ("inconclusive: a pre-registered criterion could not be computed ("
                   + ", ".join(sorted({c.stat for c in unknown}))
                   + (f": {'; '.join(reasons)}" if reasons else "") + ")")
    detected = any(_excludes_zero(e) for e in effects)
    mde = (_mde(plan, effects) if status == "inconclusive" and not unknown and not detected
           else None)
    if mde is None:
        return Verdict(status=status, wording=wording, success=success,
                                       failure=failure, suspect=suspect)
    unit = " points" if scale == 100 else ""
    wording += (f"; this suite and run count can detect an effect of about "
                f"{mde * scale:.3g}{unit} at 80% power with the analysis used (the plan's "
                f"min_effect is {plan.get('min_effect', 0) * scale:g}{unit})")
    return Verdict(status=status, wording=wording, success=success,
                                   failure=failure, suspect=suspect, min_detectable_effect=mde)


def _excludes_zero(e: Effect) -> bool:
    return (e.point is not None and e.low is not None and e.high is not None
            and (e.low > 0 or e.high < 0))


def _inconclusive(success: list[Condition], failure: list[Condition], effects: list[Effect],
                  scale: float) -> str:
    """The sentence under an inconclusive verdict: a difference detected (an effect's interval
    excludes zero) and the criterion it misses, or indistinguishable (every interval includes
    zero)."""
    detected = [e for e in effects if _excludes_zero(e)]
    if not detected:
        return "indistinguishable at this suite and run budget (the effect's interval includes 0)"
    from logbook.stats import format_estimate

    unit = " points" if scale == 100 else ""
    said = []
    for e in detected:
        f = format_estimate(float(e.point or 0.0), float(e.low or 0.0), float(e.high or 0.0),
                            scale)
        sep = " to " if f.low.startswith("-") or f.high.startswith("-") else "–"
        which = f"between {e.treatment} and {e.control} " if len(effects) > 1 else ""
        said.append(f"a difference of {_signed(f.point)}{unit} ({f.low}{sep}{f.high}) "
                    f"{which}was detected")
    missed = [c for c in success if c.holds is False]
    fails = [c for c in failure if c.holds is False]
    why = []
    if missed:
        why.append("the success criterion " + " and ".join(_named(c, scale) for c in missed)
                   + " does not hold")
    if fails:
        why.append("the failure criterion " + " and ".join(_named(c, scale) for c in fails)
                   + " does not hold")
    if not why:
        why.append("the plan pre-registers no criterion it meets")
    return "; ".join(said) + ", but " + ", and ".join(why)


def _signed(text: str) -> str:
    return text if text.startswith("-") or float(text) == 0.0 else "+" + text


def _named(c: Condition, scale: float) -> str:
    unit = " points" if scale == 100 else ""
    arm = f"[{c.arm}]" if isinstance(c.arm, str) else ""
    return f"{c.stat}{arm} {c.op} {c.value * scale:g}{unit}"


def _mde(plan: dict[str, Any], effects: list[Effect]) -> float | None:
    """The effect this analysis detects at 80% power: from the effect's own interval (the
    method actually used, paired when paired, runs included), its half-width h at the plan's
    alpha gives se = h / z₁₋α/₂ and the detectable effect (z₁₋α/₂ + z₀.₈)·se."""
    eff = next((e for e in effects if e.point is not None and e.low is not None
                and e.high is not None), None)
    if eff is None or eff.high is None or eff.low is None:
        return None
    from logbook.stats._dist import ndtri

    alpha = float(plan.get("alpha", 0.05))
    za = float(ndtri(1 - alpha / 2))
    half = (eff.high - eff.low) / 2
    if half <= 0:
        return None
    return half * (za + float(ndtri(0.8))) / za
