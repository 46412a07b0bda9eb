"""The audit's rules about run-to-run agreement: A12 (a surprising run not re-measured) and
A18 (a plan's runs vary more than their pipeline's measured band).

Both compare runs of one apparatus (same suite, metric and every non-identity apparatus field)
with the latest unretracted `band` entry measured on that apparatus. Thresholds and the
reasons behind them: docs/audit.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from logbook.analysis.audit import Context, at, mean_sd, scored_items
from logbook.analysis.bands import latest_bands
from logbook.analysis.view import RunView, suite_key
from logbook.findings import Finding

A12_SE = 3.0      # A12: standard errors of a new run predicted from the earlier ones
A12_MIN_EARLIER = 2
A18_ALPHA = 0.01  # A18: one-sided F-test of an arm's run variance against its band's
EPS = 1e-9


def a12_surprise(ctx: Context) -> Iterator[Finding]:
    runs = ctx.usable(ctx.view.runs)
    if ctx.scope is not None:  # only runs on the scoped plan's suite can share its apparatus
        suite = suite_key(ctx.view.plans[ctx.scope].original)
        runs = [r for r in runs if r.plan and suite_key(ctx.view.plans[r.plan].original) == suite]
    groups: dict[tuple[Any, ...], list[RunView]] = {}
    for r in runs:
        groups.setdefault(ctx.apparatus_key(r), []).append(r)
    bands = latest_bands(ctx.view)
    for key, group in groups.items():
        if ctx.scope is not None and all(r.plan != ctx.scope for r in group):
            continue
        last, earlier = group[-1], [ctx.score(r) for r in group[:-1]]
        x, band, why = ctx.score(last), bands.get(key), ""
        assert x is not None
        if band is not None and abs(x - band.body["mean"]) > band.body["band"] + EPS:
            why = (f"outside the band {band.body['mean']:.4g} ± {band.body['band']:.4g} "
                   f"measured at @{band.seq}")
        elif len(earlier) >= A12_MIN_EARLIER:
            m, sd = mean_sd(earlier)  # type: ignore[arg-type]
            one_item = 1 / max(1, scored_items(last))  # never less than one item's worth
            if abs(x - m) > max(A12_SE * sd * math.sqrt(1 + 1 / len(earlier)), one_item) + EPS:
                why = (f"more than {A12_SE:g} standard errors from the {len(earlier)} earlier "
                       f"runs of the same apparatus (mean {m:.4g}, sd {sd:.2g})")
        if why:
            yield Finding("A12", "warning", f"run @{last.seq} scored {x:.4g}, {why}, and no "
                          "later run of the same apparatus re-measured it", last.seq,
                          [last.digest, *([last.plan] if last.plan else []),
                           *([band.digest] if band is not None and why.startswith("outside")
                             else [])])


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
                    f"(sd {sd:.2g}) than the band measured at @{band.seq} on the same "
                    f"apparatus allows (sd {sd_band:.2g} over {k_band} runs; {test}): "
                    "re-measure, or find what changed",
                    max(r.seq for r in runs),
                    [plan.digest, band.digest, *(r.digest for r in runs)])
