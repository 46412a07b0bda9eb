"""The audit's rules about what a plan's runs record: A08 (missing data) and A19 (a score
without the system that made it). Thresholds and the reasons behind them: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context, missing
from logbook.analysis.audit.registry import rule
from logbook.findings import Finding
from logbook.stats.significance import two_proportion_p

A08_P = 0.05      # A08: two-proportion test of missing items between the arms
EPS = 1e-9


@rule("A08", severity="warning", title="missing data",
      finds="a plan's run misses more items than the plan allows, or a claim's missing items "
      "cluster on one arm")
def missing_data(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():  # a run over the limit: a finding before any claim
        body = ctx.body(plan)
        limit = float(body.get("max_missing_rate", 0.02))
        n_items = int((body.get("suite") or {}).get("n_items") or 0)
        for r in ctx.usable(plan.runs):
            m, n = missing(r, n_items)
            if n and m / n > limit + EPS:
                yield Finding("A08", "warning", f"plan {plan.slug}: run @{r.seq} ({r.arm}) "
                              f"misses {m / n:.1%} of the suite's items, more than the plan's "
                              f"limit of {limit:.1%}: re-measure it, or report the worst case",
                              r.seq, [plan.digest, r.digest])
    for c, plan in ctx.planned_claims():  # an effect whose missing items favour one arm
        body = ctx.body(plan)
        limit = float(body.get("max_missing_rate", 0.02))
        n_items = int((body.get("suite") or {}).get("n_items") or 0)
        cited = [r for r in map(ctx.view.runs_by_digest.get, c.cited) if r and r.usable]
        if c.figure != "effect" or len(c.arms) != 2:
            continue
        miss = {r.digest: missing(r, n_items) for r in cited}
        (m0, n0), (m1, n1) = ([sum(miss[r.digest][i] for r in cited if r.arm == arm)
                               for i in (0, 1)] for arm in c.arms)
        p = two_proportion_p(m0, n0, m1, n1)
        if p is not None and p < A08_P and abs(m0 / n0 - m1 / n1) > limit / 2:
            heavy = c.arms[0] if m0 / n0 > m1 / n1 else c.arms[1]
            yield Finding("A08", "warning", f"claim @{c.seq}: its missing items cluster on "
                          f"{heavy} ({m0 / n0:.1%} of {c.arms[0]} vs {m1 / n1:.1%} of "
                          f"{c.arms[1]}, p={p:.2g})", c.seq, c.evidence())


@rule("A19", severity="warning", title="score without its system",
      finds="a completed run of a plan names no model or no decoding policy in its apparatus")
def system_unsaid(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        for r in plan.runs:
            gaps = r.gaps if not ctx.retracted(r.digest) else []
            if gaps:
                yield Finding("A19", "warning", f"plan {plan.slug}: run @{r.seq} ({r.arm}) "
                              f"names no {' and no '.join(gaps)} in its apparatus: its score "
                              "travels without the system that made it", r.seq, [r.digest])
