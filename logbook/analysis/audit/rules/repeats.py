"""The audit's rules about repeats of one apparatus: A20 (two runs that disagree, and no third)
and A21 (repeats that share one fixed seed while decoding samples).

An apparatus is the suite, metric and every non-identity apparatus field (seeds, times and
sessions set aside), as for A12. Thresholds and reasons: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logbook.analysis.audit.agreement import EPS, Z, apparatus_groups, judged
from logbook.analysis.audit.context import Context, at
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import RunView
from logbook.findings import Finding


@rule("A20", severity="warning", title="two runs disagree",
      finds="two runs of one apparatus disagree beyond their sampling error, and no third run "
      "says which to believe")
def two_runs_disagree(ctx: Context) -> Iterator[Finding]:
    """Exactly two runs of an apparatus, no band measured on it, and they differ by more than
    their sampling errors allow: neither can be believed until a third run says which."""
    for key, group in apparatus_groups(ctx).items():
        if len(group) != 2 or key in ctx.bands:
            continue
        first, second = group
        pred, one_item = judged(ctx, second, [first])
        x, y = ctx.score(first), ctx.score(second)
        assert x is not None and y is not None
        if abs(pred.z) > Z and abs(x - y) > one_item + EPS:
            s = ctx.scale(first)
            yield Finding("A20", "warning", f"runs @{first.seq} ({x * s:.4g}) and "
                          f"@{second.seq} ({y * s:.4g}) of one apparatus disagree by "
                          f"{abs(pred.z):.1f} times their sampling error (sd "
                          f"{pred.sd * s:.2g}), and no third run says "
                          "which to believe: run it a third time", second.seq,
                          [second.digest, first.digest,
                           *sorted({r.plan for r in group if r.plan})])


def temperature(run: RunView) -> float | None:
    """The sampling temperature the run decoded at (`decoding.temperature`, or any field
    named temperature), None when it records none (RunView.temperature)."""
    return run.temperature


def seeds(run: RunView) -> tuple[tuple[str, str], ...]:
    """The seed fields the run records, with their values (empty when it records none)."""
    return tuple(sorted((k, repr(v)) for k, v in run.apparatus.items()
                        if "seed" in k.rsplit(".", 1)[-1].lower() and v is not None))


@rule("A21", severity="warning", title="fixed seed",
      finds="repeats of one apparatus sample (temperature > 0) with one fixed seed, which "
      "hides the variance between runs")
def fixed_seed(ctx: Context) -> Iterator[Finding]:
    """Two or more runs of one apparatus that sample (temperature > 0) with the same seed:
    their agreement measures the seed, not the run-to-run variance."""
    for group in apparatus_groups(ctx).values():
        by_seed: dict[tuple[Any, ...], list[RunView]] = {}
        for r in group:
            t = temperature(r)
            s = seeds(r) if t is not None and t > 0 else ()
            if s:
                by_seed.setdefault(s, []).append(r)
        for s, runs in by_seed.items():
            if len(runs) < 2:
                continue
            shown = ", ".join(f"{k}={v}" for k, v in s)
            yield Finding("A21", "warning", f"runs {at(runs)} of one apparatus sample at "
                          f"temperature {temperature(runs[0]):g} with one fixed seed ({shown}): "
                          "their agreement shows the seed, not the variance between runs; "
                          "repeat with different seeds", runs[-1].seq,
                          [*(r.digest for r in runs), *sorted({r.plan for r in runs if r.plan})])
