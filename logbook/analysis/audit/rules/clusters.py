"""The audit's rule about items that are not independent: A26, a recorded cluster column the
plan does not name, whose intra-class correlation makes the design effect exceed 1.2.

The report warns with the same sentence (`report.effects.unnamed_cluster_warning`, over
stats.clustered.cluster_check): the plan's intervals treat the items as independent, and are
too narrow by the square root of the design effect. Thresholds and reasons: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context, comparisons
from logbook.analysis.audit.registry import rule
from logbook.findings import Finding


@rule("A26", severity="warning", title="unnamed clusters",
      finds="the runs record a cluster column the plan does not name as its cluster_field, "
      "and its intra-class correlation gives a design effect above 1.2")
def unnamed_clusters(ctx: Context) -> Iterator[Finding]:
    from logbook.analysis.report.effects import unnamed_cluster_warning
    from logbook.analysis.view import paired_arrays

    for plan in ctx.scoped_plans():
        body = ctx.body(plan)
        if (body.get("suite") or {}).get("cluster_field"):
            continue
        for ctl, trt in comparisons(plan):
            t_runs = ctx.usable(plan.runs, trt)
            c_runs = ctx.usable(plan.runs, ctl) if ctl is not None else t_runs
            if not t_runs or not any(r.facts.clustered if r.facts is not None else r.clusters
                                     for r in [*c_runs, *t_runs]):
                continue
            ids, a, b = paired_arrays(c_runs, t_runs)
            if ctl is None:  # one arm alone: its items' clustering, no difference to take
                import numpy as np

                a = np.zeros_like(b)
            said = unnamed_cluster_warning(body, c_runs, t_runs, ids, a, b)
            if said:
                runs = [*c_runs, *t_runs] if ctl is not None else t_runs
                name = f"{trt} − {ctl}" if ctl is not None else trt
                yield Finding("A26", "warning", f"plan {plan.slug} ({name}): {said}",
                              max(r.seq for r in runs),
                              [plan.digest, *dict.fromkeys(r.digest for r in runs)])
