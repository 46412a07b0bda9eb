"""The audit's rules about run-to-run agreement: A12 (a surprising run not re-measured) and
A18 (a plan's runs vary more than their pipeline's measured band); A20 and A21, about two
repeats, are in `audit_repeats`.

Both compare runs of one apparatus (same suite, metric and every non-identity apparatus field)
with the latest unretracted `band` entry measured on that apparatus. Thresholds and the
reasons behind them: docs/audit.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from logbook.analysis.audit import Context, at, mean_sd
from logbook.analysis.bands import latest_bands
from logbook.analysis.view import RunView, suite_key
from logbook.findings import Finding
from logbook.stats.repeats import RunPrediction, predict_run

A12_Z = 3.5       # A12, A20: z of a run against the prediction from its apparatus's runs
A18_ALPHA = 0.01  # A18: one-sided F-test of an arm's run variance against its band's
EPS = 1e-9


def item_variance(ctx: Context, run: RunView) -> tuple[float, int]:
    """(variance of the run's item scores, items scored), once per run."""
    if run.seq not in ctx._item_var:
        oc = run.body.get("outcomes") or {}
        if oc.get("sample"):
            vals = [v for v in run.item_scores.values() if v is not None]
        else:
            vals = [s for s in oc.get("score") or () if s is not None]
        n = len(vals)
        if n:
            import numpy as np

            from logbook.stats._exact import xsum

            arr = np.asarray(vals, dtype=np.float64)
            d = arr - xsum(arr) / n
            ctx._item_var[run.seq] = (xsum(d * d) / n, n)
        else:
            ctx._item_var[run.seq] = (0.0, 0)
    return ctx._item_var[run.seq]


def sampling_errors(ctx: Context, runs: list[RunView]) -> list[float]:
    """Each run's standard error from the item variance pooled over `runs` (so that a run
    whose items all scored alike still has the sampling error its apparatus shows)."""
    pairs = [item_variance(ctx, r) for r in runs]
    total = sum(n for _v, n in pairs)
    pooled = math.fsum(v * n for v, n in pairs) / total if total else 0.0
    return [math.sqrt(pooled / n) if n else 0.0 for _v, n in pairs]


def apparatus_groups(ctx: Context) -> dict[tuple[Any, ...], list[RunView]]:
    """Usable runs by apparatus (suite, metric, every non-identity field), in ledger order;
    scoped to the groups that hold a run of the scoped plan."""
    runs = ctx.usable(ctx.view.runs)
    if ctx.scope is not None:  # only runs on the scoped plan's suite can share its apparatus
        suite = suite_key(ctx.view.plans[ctx.scope].original)
        runs = [r for r in runs if r.plan and suite_key(ctx.view.plans[r.plan].original) == suite]
    groups: dict[tuple[Any, ...], list[RunView]] = {}
    for r in runs:
        groups.setdefault(ctx.apparatus_key(r), []).append(r)
    return {k: g for k, g in groups.items()
            if ctx.scope is None or any(r.plan == ctx.scope for r in g)}


def judged(ctx: Context, last: RunView, reference: list[RunView]) -> tuple[RunPrediction, float]:
    """The prediction for `last` from `reference`, and the least difference that counts (one
    item's worth of score)."""
    ses = sampling_errors(ctx, [last, *reference])
    xs: list[float] = [ctx.score(r) for r in reference]  # type: ignore[misc]
    pred = predict_run(ctx.score(last), ses[0], xs, ses[1:])  # type: ignore[arg-type]
    return pred, 1 / max(1, item_variance(ctx, last)[1])


def a12_surprise(ctx: Context) -> Iterator[Finding]:
    """The last run of an apparatus lies outside the prediction interval of the earlier runs
    (or of the latest band's runs): its own sampling error plus the spread between runs."""
    bands = latest_bands(ctx.view)
    for key, group in apparatus_groups(ctx).items():
        band, last = bands.get(key), group[-1]
        if band is not None:
            reference = [r for r in map(ctx.view.runs_by_digest.get, band.body["runs"])
                         if r is not None and r.seq in ctx.usable_seqs and r is not last]
            where = f"the {len(reference)} runs of the band measured at @{band.seq}"
        else:  # exactly two runs: which one is the surprise cannot be told (A20)
            reference = group[:-1] if len(group) >= 3 else []
            where = f"the {len(reference)} earlier runs of the same apparatus"
        if len(reference) < (1 if band is not None else 2):
            continue
        pred, one_item = judged(ctx, last, reference)
        x = ctx.score(last)
        assert x is not None
        if abs(pred.z) > A12_Z and abs(x - pred.mean) > one_item + EPS:
            s = ctx.scale(last)
            yield Finding("A12", "warning", f"run @{last.seq} scored {x * s:.4g}, "
                          f"{abs(pred.z):.1f} standard deviations from what {where} predict "
                          f"(mean {pred.mean * s:.4g}, prediction sd {pred.sd * s:.2g}: its "
                          f"sampling error and a spread between runs of {pred.between * s:.2g}"
                          "), and no later run of the same "
                          "apparatus re-measured it", last.seq,
                          [last.digest, *([last.plan] if last.plan else []),
                           *([band.digest] if band is not None else [])])


def a18_beyond_band(ctx: Context) -> Iterator[Finding]:
    """An arm's runs of one banded apparatus vary more than the band's own runs did: the
    F-test of their variances, s² / sd_band², on (k - 1, k_band - 1) degrees of freedom."""
    from logbook.stats._dist import fdtrc

    bands = latest_bands(ctx.view)
    if not bands:
        return
    for plan in ctx.scoped_plans():
        for arm in ctx.body(plan).get("arms", []):
            groups: dict[tuple[Any, ...], list[RunView]] = {}
            for r in ctx.usable(plan.runs, arm.get("name")):
                groups.setdefault(ctx.apparatus_key(r), []).append(r)
            for key, runs in groups.items():
                band = bands.get(key)
                if band is None or len(runs) < 2:
                    continue
                _m, sd = mean_sd([ctx.score(r) for r in runs])  # type: ignore[misc]
                sd_band, k_band = float(band.body["sd"]), int(band.body["k"])
                if sd_band > 0:
                    ratio = sd / sd_band
                    f = ratio * ratio  # not ** 2: a huge ratio gives inf, not OverflowError
                    p = fdtrc(len(runs) - 1, k_band - 1, f)
                    if p >= A18_ALPHA:
                        continue
                    test = f"F = {f:.3g} on {len(runs) - 1} and {k_band - 1} df, p = {p:.2g}"
                elif sd > EPS:
                    test = "the band's runs did not vary at all"
                else:
                    continue
                yield Finding(
                    "A18", "warning",
                    f"plan {plan.slug} arm {arm.get('name')}: runs {at(runs)} vary more "
                    f"(sd {sd * ctx.scale(runs[0]):.2g}) than the band measured at "
                    f"@{band.seq} on the same apparatus allows (sd "
                    f"{sd_band * ctx.scale(runs[0]):.2g} over {k_band} runs; {test}): "
                    "re-measure, or find what changed",
                    max(r.seq for r in runs),
                    [plan.digest, band.digest, *(r.digest for r in runs)])
