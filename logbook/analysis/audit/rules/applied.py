"""The audit's rule about what an engine applied: A38 (requested versus applied). A run's
`apparatus.applied` is what its engine's load log showed (`logbook run --log`, `append --from
... --log`: logbook.capture.loadlogs); what was requested is its declared apparatus and, where
it says nothing, its plan's pins. Names, aliases and how values compare:
logbook.format.applied and docs/audit.md."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logbook.analysis.audit.context import Context
from logbook.analysis.audit.registry import rule
from logbook.findings import Finding
from logbook.format.apparatus import flatten
from logbook.format.applied import Mismatch, mismatches


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
        found = mismatches(app, pins_of(ctx.body(plan), r.arm) if plan else None)
        where = f"plan {plan.slug}: " if plan else ""
        for m in found:
            yield Finding("A38", "warning", f"{where}run @{r.seq} requested {said(m)} but the "
                          f"{m.engine} load log{' ' + m.log if m.log else ''} shows "
                          f"{m.applied} applied", r.seq, [r.digest])


def said(m: Mismatch) -> str:
    """``context 8192`` (the applied field's name and the value requested), with the declared
    field's own name when it is another (``kv_cache q8 (kv_cache_precision)``)."""
    name = m.declared.rsplit(".", 1)[-1]
    return f"{m.field} {m.requested}" + (f" ({m.declared})" if name != m.field else "")


def pins_of(body: dict[str, Any], arm: str | None) -> dict[str, Any]:
    """The plan's pins as flat fields: its `pinned`, then its arm's `apparatus`."""
    pins = flatten(body.get("pinned") or {})
    for a in body.get("arms") or []:
        if a.get("name") == arm:
            pins.update(flatten(a.get("apparatus") or {}))
    return pins
