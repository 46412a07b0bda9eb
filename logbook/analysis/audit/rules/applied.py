"""The audit's rule about what an engine applied: A38 (requested versus applied). A run's
`apparatus.applied` is what its engine's load log showed (`logbook run --log`, `append --from
... --log`: logbook.capture.loadlogs); what was requested is its declared apparatus and, where
it says nothing, its plan's pins. Names, aliases and how values compare:
logbook.format.applied and docs/audit.md."""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context
from logbook.analysis.audit.registry import rule
from logbook.findings import Finding
from logbook.format.apparatus import pins
from logbook.format.applied import mismatches, said


@rule("A38", severity="warning", title="applied is not what was requested",
      finds="a run's engine load log shows a setting applied otherwise than its apparatus or "
      "its plan requested (context, KV cache, layers on the GPU, precision, ...)")
def applied_differs(ctx: Context) -> Iterator[Finding]:
    for r in ctx.view.runs:
        if not ctx.in_scope(r.plan) or ctx.retracted(r.digest):
            continue
        app = r.apparatus
        if not any(k.startswith("applied.") for k in app):
            continue
        plan = ctx.view.plans.get(r.plan) if r.plan else None
        found = mismatches(app, pins(ctx.body(plan), r.arm) if plan else None)
        where = f"plan {plan.slug}: " if plan else ""
        for m in found:
            yield Finding("A38", "warning", f"{where}run @{r.seq} {said(m)}", r.seq, [r.digest])
