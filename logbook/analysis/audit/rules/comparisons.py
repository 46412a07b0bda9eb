"""The audit's rule about many comparisons on one suite: A11, with each claimed effect's
verdict unadjusted, under Bonferroni and under Benjamini-Hochberg. Thresholds and the reasons
behind them: docs/audit.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from logbook.analysis.audit.context import Context, comparisons
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import PlanView, suite_key
from logbook.findings import Finding
from logbook.stats.significance import bonferroni_threshold, interval_p


@rule("A11", severity="warning", title="many comparisons",
      finds="several comparisons test the same suite, the configurations exploratory runs "
      "tried on it counted among them: Bonferroni and Benjamini-Hochberg verdicts")
def many_comparisons(ctx: Context) -> Iterator[Finding]:
    from logbook.analysis.checks import explored

    groups: dict[str, list[PlanView]] = {}
    for plan in ctx.plans:
        if not calibration_plan(ctx, plan):
            groups.setdefault(suite_key(plan.original), []).append(plan)
    for plans in groups.values():
        if ctx.scope is not None and not any(p.digest == ctx.scope for p in plans):
            continue
        tests = [(plan, ctl, trt) for plan in plans for ctl, trt in comparisons(plan)]
        if not tests:
            continue
        tried = len(explored(ctx.view, plans))  # each a comparison made, claimed or not
        if len(tests) + tried >= 2:
            yield family(ctx, plans, tests, tried)


def calibration_plan(ctx: Context, plan: PlanView) -> bool:
    """A plan with no treatment arm whose completed runs were all measured into a band: it
    calibrates a pipeline, it compares nothing."""
    if any(a.get("role") == "treatment" for a in plan.arms()):
        return False
    done = ctx.usable(plan.runs)
    return bool(done) and all(r.digest in ctx.band_runs for r in done)


def family(ctx: Context, plans: list[PlanView],
           tests: list[tuple[PlanView, str | None, str]], tried: int = 0) -> Finding:
    """The finding of one suite's comparisons: each claimed effect's p, adjusted both ways;
    ``tried`` configurations of exploratory runs on the suite count as comparisons with no
    claim (p = 1): the plan's figure was chosen from them too."""
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
    ps = [p for *_, p in rows] + [1.0] * tried  # one with no claim counts, with p = 1
    adjusted = list(zip(stats.bonferroni(ps).pvalues_adjusted,
                        stats.benjamini_hochberg(ps).pvalues_adjusted, strict=True))
    verdicts = []
    for (plan, trt, claim, alpha, p), (b, h) in zip(rows, adjusted[:len(rows)], strict=True):
        says = {x: "significant" if x <= alpha else "not significant" for x in (p, b, h)}
        if claim is not None:
            verdicts.append(f"claim @{claim.seq} ({plan.slug}, {trt}): p≈{p:.2g} {says[p]} "
                            f"unadjusted, Bonferroni p={b:.2g} {says[b]}, Benjamini-Hochberg "
                            f"p={h:.2g} {says[h]}")
    m, alpha0 = len(rows) + tried, rows[0][3]
    claims = [row[2] for row in rows if row[2] is not None]
    names = ", ".join(p.slug for p in plans[:4]) + (f" and {len(plans) - 4} more"
                                                   if len(plans) > 4 else "")
    suite = plans[0].original.get("suite") or {}
    tail = "; ".join(verdicts) or (f"no effect claim yet; at alpha {alpha0:g} each needs "
                                   f"p <= {bonferroni_threshold(alpha0, m):.2g} (Bonferroni)")
    if tried:
        names += f"; {tried} configuration(s) tried by exploratory runs"
    return Finding("A11", "warning", f"{m} comparisons test suite "
                   f"{suite.get('name')} {suite.get('version', '')}".rstrip() + f" ({names}); "
                   + tail, max([p.seq for p in plans] + [c.seq for c in claims]),
                   [p.digest for p in plans] + [c.digest for c in claims])


# "best of 6", "6 configurations", "6 other KV settings tried": a count of the search, not
# a figure that happens to be the same number
SAYS_SEARCH = re.compile(r"(?i)\bbest of (\d+)\b|(?<![\d.,])\b(\d+)\b(?![.,]\d)"
                         r"(?=(?:\s+[\w-]+){0,3}?\s+(?:configurations?|configs?|settings?|"
                         r"variants?|setups?|tried))")


@rule("A39", severity="warning", title="search budget not stated",
      finds="a standing claim on a plan whose comparisons were chosen among configurations "
      "exploratory runs tried on its suite before the claim, and whose statement gives "
      "neither how many configurations were tried nor how many besides the plan's")
def search_unstated(ctx: Context) -> Iterator[Finding]:
    from logbook.analysis.checks import configuration, explored

    for c, plan in ctx.planned_claims():
        if not ctx.in_scope(plan.digest) or plan.retracted_by:
            continue
        tried = [runs for runs in explored(ctx.view, [plan]) if runs[0].seq < c.seq]
        if not tried:
            continue
        own = len({configuration(r) for r in plan.runs if r.seq < c.seq})
        total = own + len(tried)
        said = {int(a or b) for a, b in SAYS_SEARCH.findall(str(c.body.get("statement", "")))}
        if said & {total, len(tried)}:
            continue
        first = tried[0][0].seq
        yield Finding("A39", "warning", f"claim @{c.seq} on plan {plan.slug}: its figure was "
                      f"chosen among {total} configurations tried on the suite ({len(tried)} "
                      f"by exploratory runs before the claim, from @{first}), and its statement "
                      "does not say so: a best of many read as one measured once (say \"best "
                      f"of {total} configurations\" in the statement, as `claim check` prints "
                      "it)", c.seq, c.evidence(*(runs[0].digest for runs in tried[:5])))
