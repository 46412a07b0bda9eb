"""The audit's rules about how a plan's arms were run: A06 (a confound besides the declared
variable), A07 (a historical baseline), A15 (a negative control away from its expected score).
Thresholds and the reasons behind them: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context, at, comparisons, scale_of
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import item_mean_arrays
from logbook.findings import Finding
from logbook.format.apparatus import VARIANT
from logbook.stats.spread import margin_of_mean, mean_sd

A15_SE = 3.0      # A15: standard errors of the arm mean when the arm sets no tolerance
EPS = 1e-9


@rule("A06", severity="warning", title="confound",
      finds="control and treatment runs differ in apparatus fields besides the plan's "
      "declared variable")
def confound(ctx: Context) -> Iterator[Finding]:
    from logbook.analysis.audit.confounds import confounds, table

    for plan in ctx.scoped_plans():
        body = ctx.body(plan)
        variable = list(body.get("variable") or [])
        if body.get("variants"):  # prompt variants are a declared factor within every arm
            variable.append(VARIANT)
        for control, treatment in comparisons(plan):
            ctl, trt = ctx.usable(plan.runs, control), ctx.usable(plan.runs, treatment)
            if not (control and ctl and trt):
                continue
            found = confounds(ctl, trt, variable, (control, treatment))
            if found:
                yield Finding("A06", "warning", f"plan {plan.slug}: {control} and {treatment} "
                              f"runs differ besides the declared variable "
                              f"({', '.join(variable) or 'none'}) in "
                              f"{len(found.differ)} field(s):\n" + table(found, (control,
                                                                               treatment)),
                              plan.seq, [plan.digest, ctl[0].digest, trt[0].digest])


@rule("A07", severity="warning", title="historical baseline",
      finds="control runs come from other sessions than the treatment runs, or were not "
      "interleaved with them")
def historical_baseline(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        for control, treatment in comparisons(plan):
            ctl, trt = ctx.usable(plan.runs, control), ctx.usable(plan.runs, treatment)
            if control is None or not ctl or not trt:
                continue
            cs, ts = {r.session for r in ctl}, {r.session for r in trt}
            why = []
            if None not in cs and None not in ts and not cs & ts:
                why.append(f"its {control} runs come from session(s) "
                           f"{', '.join(sorted(map(str, cs)))} and its {treatment} runs from "
                           f"{', '.join(sorted(map(str, ts)))}")
            for a, ra, b, rb in ((control, ctl, treatment, trt), (treatment, trt, control, ctl)):
                if len(ra) >= 2 and len(rb) >= 2 and ra[-1].seq < rb[0].seq:
                    why.append(f"all its {a} runs ({at(ra)}) were appended before the first "
                               f"{b} run @{rb[0].seq}, not interleaved")
            if why:
                yield Finding("A07", "warning", f"plan {plan.slug}: " + "; ".join(why) +
                              ": a historical baseline, not a control run alongside",
                              plan.seq, [plan.digest, ctl[0].digest, trt[0].digest])


@rule("A15", severity="error", title="negative control failed",
      finds="a negative-control arm's score lies away from its expected value")
def negative_control(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        for arm in [a for a in plan.arms() if a.get("role") == "negative_control"]:
            runs = ctx.usable(plan.runs, arm["name"])
            if not runs:
                continue
            got = mean_sd(ctx.scores(runs))[0]
            expected, tol = float(arm["expected"]), arm.get("tolerance")
            how = (f"tolerance {tol * scale_of(plan.body):g}" if tol is not None
                   else f"{A15_SE:g} standard errors")
            if tol is None:  # standard error of the arm's item means
                vals = [v for v in item_mean_arrays(runs)[1].tolist() if v == v]  # not NaN
                tol = margin_of_mean(vals, A15_SE)
            if abs(got - expected) > float(tol) + EPS:
                yield Finding("A15", "error", f"negative control {arm['name']} of plan "
                              f"{plan.slug} scored {got * scale_of(plan.body):.4g} over "
                              f"{len(runs)} run(s), away from its expected "
                              f"{expected * scale_of(plan.body):g} (beyond {how}): the harness "
                              "may be broken", plan.seq, [plan.digest, *(r.digest for r in runs)])
