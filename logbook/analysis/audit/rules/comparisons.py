"""The audit's rule about many comparisons on one suite: A11, with each claimed effect's
verdict unadjusted, under Bonferroni and under Benjamini-Hochberg. Thresholds and the reasons
behind them: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context, comparisons
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import PlanView, suite_key
from logbook.findings import Finding
from logbook.stats.significance import bonferroni_threshold, interval_p


@rule("A11", severity="warning", title="many comparisons",
      finds="several comparisons test the same suite: Bonferroni and Benjamini-Hochberg "
      "verdicts")
def many_comparisons(ctx: Context) -> Iterator[Finding]:
    groups: dict[str, list[PlanView]] = {}
    for plan in ctx.plans:
        if not calibration_plan(ctx, plan):
            groups.setdefault(suite_key(plan.original), []).append(plan)
    for plans in groups.values():
        tests = [(plan, ctl, trt) for plan in plans for ctl, trt in comparisons(plan)]
        if len(tests) >= 2 and (ctx.scope is None or any(p.digest == ctx.scope for p in plans)):
            yield family(ctx, plans, tests)


def calibration_plan(ctx: Context, plan: PlanView) -> bool:
    """A plan with no treatment arm whose completed runs were all measured into a band: it
    calibrates a pipeline, it compares nothing."""
    if any(a.get("role") == "treatment" for a in plan.arms()):
        return False
    done = ctx.usable(plan.runs)
    return bool(done) and all(r.digest in ctx.band_runs for r in done)


def family(ctx: Context, plans: list[PlanView],
           tests: list[tuple[PlanView, str | None, str]]) -> Finding:
    """The finding of one suite's comparisons: each claimed effect's p, adjusted both ways."""
    from logbook import stats

    rows = []
    for plan, ctl, trt in tests:  # each comparison's latest standing effect claim, if any
        alpha = float(ctx.body(plan).get("alpha", 0.05))
        claim = next((c for c in reversed(ctx.claims) if c.plan is plan
                      and c.figure == "effect" and c.arms == [ctl, trt]), None)
        if claim is None:
            p = 1.0
        else:
            low, high = (float(x) for x in claim.body["interval"])
            p = interval_p(float(claim.body["value"]), low, high, alpha)
        rows.append((plan, trt, claim, alpha, p))
    ps = [p for *_, p in rows]  # a comparison with no claim counts, with p = 1
    adjusted = zip(stats.bonferroni(ps).pvalues_adjusted,
                   stats.benjamini_hochberg(ps).pvalues_adjusted, strict=True)
    verdicts = []
    for (plan, trt, claim, alpha, p), (b, h) in zip(rows, adjusted, strict=True):
        says = {x: "significant" if x <= alpha else "not significant" for x in (p, b, h)}
        if claim is not None:
            verdicts.append(f"claim @{claim.seq} ({plan.slug}, {trt}): p≈{p:.2g} {says[p]} "
                            f"unadjusted, Bonferroni p={b:.2g} {says[b]}, Benjamini-Hochberg "
                            f"p={h:.2g} {says[h]}")
    m, alpha0 = len(rows), rows[0][3]
    claims = [row[2] for row in rows if row[2] is not None]
    names = ", ".join(p.slug for p in plans[:4]) + (f" and {len(plans) - 4} more"
                                                   if len(plans) > 4 else "")
    suite = plans[0].original.get("suite") or {}
    tail = "; ".join(verdicts) or (f"no effect claim yet; at alpha {alpha0:g} each needs "
                                   f"p <= {bonferroni_threshold(alpha0, m):.2g} (Bonferroni)")
    return Finding("A11", "warning", f"{m} comparisons test suite "
                   f"{suite.get('name')} {suite.get('version', '')}".rstrip() + f" ({names}); "
                   + tail, max([p.seq for p in plans] + [c.seq for c in claims]),
                   [p.digest for p in plans] + [c.digest for c in claims])
