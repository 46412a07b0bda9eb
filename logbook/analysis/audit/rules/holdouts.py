"""The audit's rule on held-out splits (docs/recording.md, "Suites and held-out splits"): A37,
a held-out split looked at more often than its holdout allows, or a plan on it written after
its looks were spent. The looks are counted in one place, logbook.analysis.holdouts, which
the report's line reads too."""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Context
from logbook.analysis.audit.registry import rule
from logbook.analysis.holdouts import HeldOut, held_out, spent_before
from logbook.findings import Finding


def _in_scope(ctx: Context, h: HeldOut) -> bool:
    return ctx.scope is None or any(ctx.in_scope(d) for _s, _q, d in h.plans)


def _digests(ctx: Context, seqs: list[int]) -> list[str]:
    runs = ctx.view.runs_by_seq
    return [runs[s].digest for s in seqs if s in runs]


@rule("A37", severity="error", title="held-out split looked at again",
      finds="a look at a held-out split past the looks its suite entry allows (a plan's runs "
            "are one look, any other run one each, retracted runs included), or a plan on a "
            "held-out split written after its looks were spent")
def holdout_looks(ctx: Context) -> Iterator[Finding]:
    for h in held_out(ctx.view):
        if not _in_scope(ctx, h):
            continue
        for n, look in enumerate(h.looks[h.allowed:], start=h.allowed + 1):
            earlier = ", ".join(x.said() for x in h.looks[:n - 1][:3])
            yield Finding(
                "A37", "error",
                f"{h.label} (suite entry @{h.entry}) allows {h.allowed} look(s), and look "
                f"{n} is {look.said()}, after {earlier}: a split seen again is no longer held "
                "out, and its figures can have steered what was tried next (report the first "
                "look's figures, or hold out a fresh split)", look.at,
                ([look.plan_digest] if look.plan_digest else []) + _digests(ctx, look.runs)
                + [d for _s, _q, d in h.plans if d != look.plan_digest])
        looked_by = {look.plan_digest for look in h.looks}
        for slug, seq, digest in h.plans:
            if digest in looked_by:
                continue  # its own look, if past the allowance, is said above
            before = spent_before(h, seq, digest)
            if len(before) >= h.allowed:
                yield Finding(
                    "A37", "error",
                    f"plan {slug} @{seq} is on the {h.label} (suite entry @{h.entry}), "
                    f"written after {len(before)} look(s) at it "
                    f"({', '.join(x.said() for x in before[:3])}), which allows {h.allowed}: "
                    "its choices may rest on the figures it is to test (plan on a fresh "
                    "held-out split)", seq, [digest])
