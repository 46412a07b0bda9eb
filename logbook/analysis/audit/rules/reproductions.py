"""The audit's rule about reproductions (docs/format.md, "Reproductions"): A30, a claim that
rests on a run another run reproduced and did not agree with.

A reproduction disagrees when the interval of its paired difference from the run excludes 0
at 99.9% (logbook.analysis.reproductions): an honest reproduction of an honest run is flagged
about once in a thousand, not once in twenty as at the report's 95%. Thresholds and the
reasons behind them: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context
from logbook.analysis.audit.registry import rule
from logbook.analysis.display import scale_of
from logbook.analysis.reproductions import reproductions, signer
from logbook.findings import Finding

CONFIDENCE = 0.999


@rule("A30", severity="warning", title="reproduction disagrees",
      finds="a claim rests on a run that a later run reproduced, and the reproduction's "
            "paired difference from it excludes 0 at 99.9%")
def reproduction_disagrees(ctx: Context) -> Iterator[Finding]:
    if not ctx.view.reproducers:
        return
    for c, plan in ctx.planned_claims():
        cited = set(c.cited) or {r.digest for r in plan.runs
                                 if r.usable and r.arm in c.arms and r.seq < c.seq}
        rests = [r for r in plan.runs if r.digest in cited]
        bad = [x for x in reproductions(ctx.view, rests, CONFIDENCE) if x.agrees is False]
        if not bad:
            continue
        scale = scale_of((plan.body.get("metric") or {}).get("kind"))
        unit = " points" if scale == 100 else ""
        said = "; ".join(
            f"@{x.original.seq} by @{x.by.seq} "
            f"({'independent' if x.independent else 'same signer'}, {signer(x.by)[:12]}): "
            f"{x.effect.point * scale:+.3g}{unit} ({x.effect.low * scale:+.3g} to "
            f"{x.effect.high * scale:+.3g})" for x in bad if x.effect is not None)
        yield Finding("A30", "warning", f"claim @{c.seq} rests on runs that were reproduced "
                      f"and did not agree (the reproduction minus the run, 99.9% interval): "
                      f"{said}", c.seq,
                      c.evidence(*(d for x in bad for d in (x.original.digest, x.by.digest))))
