"""The audit's rules about repeats of one apparatus: A20 (two runs that disagree, and no third),
A21 (repeats that share one fixed seed while decoding samples) and A29 (execution variance:
repeats that should give the same answers, and do not).

Three sources of variance are kept apart, as the book asks: item sampling (which items the
suite drew), decoding (a seed at temperature > 0) and execution (the same greedy or seeded
decode computed twice, on another batch or kernel, giving another answer). Two runs of the same
items are judged against their paired spread: the variance of their per-item differences,
which holds what the runs share (the items) out of the comparison; runs of different items
against their two sampling errors.

An apparatus is the suite, metric and every non-identity apparatus field (seeds, times and
sessions set aside), as for A12. Thresholds and reasons: docs/audit.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import lru_cache
from itertools import pairwise
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
        z, sd, what = pred.z, pred.sd, "their sampling error"
        same = paired(first, second)
        if same is not None:  # the same items: their paired spread, not two samples'
            z, sd, what = same[0], same[1], "the spread of their per-item differences"
        if abs(z) > Z and abs(x - y) > one_item + EPS:
            s = ctx.scale(first)
            yield Finding("A20", "warning", f"runs @{first.seq} ({x * s:.4g}) and "
                          f"@{second.seq} ({y * s:.4g}) of one apparatus disagree by "
                          f"{abs(z):.1f} times {what} (sd {sd * s:.2g}), and no third run "
                          "says which to believe: run it a third time", second.seq,
                          [second.digest, first.digest,
                           *sorted({r.plan for r in group if r.plan})])


def paired(a: RunView, b: RunView) -> tuple[float, float] | None:
    """(z, sd) of the mean per-item difference of two runs over the same item ids (both
    scored), None when their ids differ or fewer than two items pair: the difference over
    the sd of the differences' mean (infinite when every item moved by the same amount)."""
    xa, xb = a.item_scores, b.item_scores
    if set(xa) != set(xb):
        return None
    d = [float(yb) - float(ya) for i, ya in xa.items()
         if ya is not None and (yb := xb[i]) is not None]
    n = len(d)
    if n < 2:
        return None
    m = math.fsum(d) / n
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in d) / (n - 1) / n)
    if sd <= 0:
        return (0.0 if m == 0 else math.copysign(math.inf, m)), 0.0
    return m / sd, sd


def deterministic(run: RunView) -> bool:
    """A decode that should repeat exactly: greedy (temperature 0 recorded), or sampling with
    a fixed seed; the caller compares the runs' seeds (reruns are "greedy and same seed": runs
    that record different seeds are not taken for one decode)."""
    t = temperature(run)
    return t is not None and (t == 0 or bool(seeds(run)))


def temperature(run: RunView) -> float | None:
    """The sampling temperature the run decoded at (`decoding.temperature`, or any field
    named temperature), None when it records none (RunView.temperature)."""
    return run.temperature


def seeds(run: RunView) -> tuple[tuple[str, str], ...]:
    """The seed fields the run records, with their values (empty when it records none)."""
    app = run.apparatus
    return tuple(sorted((k, repr(app[k])) for k in _seed_names(tuple(app))
                        if app[k] is not None))


@lru_cache(maxsize=4096)
def _seed_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """Which of an apparatus's field names name a seed: runs of one harness share their
    names, so each list of them is judged once."""
    return tuple(k for k in names if "seed" in k.rsplit(".", 1)[-1].lower())


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


@rule("A29", severity="info", title="execution variance",
      finds="repeats of one apparatus that should give the same answers (greedy, or one fixed "
      "seed) differ on some items: the inference itself varies, apart from decoding and item "
      "sampling")
def execution_variance(ctx: Context) -> Iterator[Finding]:
    """Runs of one apparatus over the same item ids, greedy (temperature 0) or sampling, with
    the same seed (or none recorded), whose per-item scores differ: execution variance
    (batching, kernels, retries, a judge that changes its mind), which neither the seed nor
    the items explain."""
    for group in apparatus_groups(ctx).values():
        by_decode: dict[tuple[Any, ...], list[RunView]] = {}
        for r in group:
            if deterministic(r):
                t = temperature(r)
                by_decode.setdefault((t, seeds(r)), []).append(r)
        for runs in by_decode.values():
            if len(runs) < 2:
                continue
            found = flips_of(runs)
            if found is None:
                continue
            same, n_ids, flips, moved = found
            shown = "; ".join(f"@{a.seq} to @{b.seq}: {f}" for a, b, f in flips[:4])
            how = "greedy" if not temperature(same[0]) else "one fixed seed"
            more = " and more" if len(same) > 6 else ""
            yield Finding("A29", "info", f"runs {at(same[:6])}{more} "
                          f"of one apparatus ({how}, {n_ids} items) give different answers "
                          f"on {moved} item(s) ({shown} flipped): execution variance, not "
                          "decoding or item sampling; one run's figure carries it unseen, so "
                          "repeat the runs and report their spread (a band)", same[-1].seq,
                          [*(r.digest for r in same), *sorted({r.plan for r in same if r.plan})])


def flips_of(runs: list[RunView]) -> tuple[list[RunView], int, list[tuple[RunView, RunView,
                                                                        int]], int] | None:
    """The runs over the first run's item ids, how many ids, the items each consecutive pair
    scores differently (both scored), and how many items any pair does; None when fewer than
    two runs share the ids or no item moved. Binary runs listing the same ids are compared by
    their facts' bit masks (logbook.format.runfacts), without reading them; any other group by
    its item scores."""
    facts = [r.facts for r in runs if r.facts is not None and not r.pass_k]
    masks = [f.masks for f in facts if f.masks is not None]
    if len(masks) == len(runs) and len({f.items for f in facts}) == 1:
        same, n_ids = runs, facts[0].scores
        counts, moved = [], 0
        for (sa, oa), (sb, ob) in pairwise(masks):
            flipped = (oa ^ ob) & sa & sb
            counts.append(flipped.bit_count())
            moved |= flipped
        n_moved = moved.bit_count()
    else:
        scores = [r.item_scores for r in runs]
        ids = set(scores[0])
        kept = [(r, x) for r, x in zip(runs, scores, strict=True) if set(x) == ids]
        same, n_ids = [r for r, _x in kept], len(ids)
        sets = [_flipped(a, b) for (_r, a), (_q, b) in pairwise(kept)]
        counts, n_moved = [len(f) for f in sets], len(set().union(*sets))
    if len(same) < 2 or not n_moved:
        return None
    return same, n_ids, [(a, b, c) for (a, b), c in zip(pairwise(same), counts,
                                                        strict=True)], n_moved


def _flipped(xa: dict[str, float | None], xb: dict[str, float | None]) -> set[str]:
    return {i for i, v in xa.items() if v is not None and xb.get(i) is not None
            and abs(float(v) - float(xb[i] or 0.0)) > 1e-12}
