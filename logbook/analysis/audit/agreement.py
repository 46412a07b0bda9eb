"""Runs of one apparatus, for the rules about run-to-run agreement (A12, A18, A20, A21).

An apparatus is the suite, metric and every non-identity apparatus field (seeds, times and
sessions set aside): `LedgerView.apparatus_key`, the key bands are matched on too.
"""

from __future__ import annotations

from typing import Any

from logbook.analysis.audit.context import Context
from logbook.analysis.view import RunView, suite_key
from logbook.stats.repeats import RunPrediction, predict_run
from logbook.stats.spread import pooled_standard_errors

Z = 3.5     # A12, A20: z of a run against the prediction from its apparatus's runs
EPS = 1e-9


def apparatus_groups(ctx: Context) -> dict[tuple[Any, ...], list[RunView]]:
    """Usable runs by apparatus (suite, metric, every non-identity field), in ledger order;
    scoped to the groups that hold a run of the scoped plan. Worked out once per audit."""
    found = ctx.memo.get("apparatus_groups")
    if found is None:
        found = ctx.memo["apparatus_groups"] = _groups(ctx)
    return found


def _groups(ctx: Context) -> dict[tuple[Any, ...], list[RunView]]:
    runs = ctx.view.runs
    if ctx.scope is not None:  # only runs on the scoped plan's suite can share its apparatus
        suite = suite_key(ctx.view.plans[ctx.scope].original)
        runs = [r for r in runs if r.plan and suite_key(ctx.view.plans[r.plan].original) == suite]
    runs = ctx.usable(runs)
    groups: dict[tuple[Any, ...], list[RunView]] = {}
    for r in runs:
        groups.setdefault(ctx.apparatus_key(r), []).append(r)
    return {k: g for k, g in groups.items()
            if ctx.scope is None or any(r.plan == ctx.scope for r in g)}


def sampling_errors(ctx: Context, runs: list[RunView]) -> list[float]:
    """Each run's standard error from the item variance pooled over `runs` (so that a run
    whose items all scored alike still has the sampling error its apparatus shows)."""
    return pooled_standard_errors([ctx.item_variance(r) for r in runs])


def judged(ctx: Context, last: RunView, reference: list[RunView],
           tau2: float | None = None) -> tuple[RunPrediction, float]:
    """The prediction for `last` from `reference` (usable runs), and the least difference that
    counts (one item's worth of score); ``tau2``: a between-run variance pooled over more runs
    than `reference` (`pooled_between`)."""
    ses = sampling_errors(ctx, [last, *reference])
    x = ctx.score(last)
    assert x is not None
    pred = predict_run(x, ses[0], ctx.scores(reference), ses[1:], tau2)
    return pred, 1 / max(1, ctx.item_variance(last)[1])


def pooled_between(ctx: Context, groups: dict[tuple[Any, ...], list[RunView]],
                   key: tuple[Any, ...]) -> float | None:
    """The between-run variance of group `key`'s apparatus, pooled with every other group of
    the same plan suite and metric: run-to-run noise (decoding, batching) is the pipeline's,
    shared by the arms, and two or three runs of one arm estimate it badly (two that happen to
    agree say it is zero). The group's last run is left out (it is the one being judged). None
    when the group is no plan's, or the pool holds no more than the group's own runs."""
    if key[0] is None:
        return None
    pool = [g[:-1] if k == key else g for k, g in groups.items() if k[:2] == key[:2]]
    pool = [g for g in pool if len(g) >= 2]
    if len(pool) < 2:
        return None
    s2 = q = 0.0
    df = 0
    for g in pool:
        xs = ctx.scores(g)
        m = sum(xs) / len(xs)
        s2 += sum((x - m) ** 2 for x in xs)
        q += sum(se * se for se in sampling_errors(ctx, g)) * (len(g) - 1) / len(g)
        df += len(g) - 1
    return max(0.0, (s2 - q) / df)
