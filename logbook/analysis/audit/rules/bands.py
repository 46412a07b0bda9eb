"""The audit's rules about run-to-run agreement against what was measured: A12 (a surprising
run not re-measured) and A18 (a plan's runs vary more than their pipeline's measured band);
A20 and A21, about repeats, are in `repeats`.

Both compare runs of one apparatus (same suite, metric and every non-identity apparatus field)
with the latest unretracted `band` entry measured on that apparatus. Thresholds and the
reasons behind them: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logbook.analysis.audit.agreement import EPS, Z, apparatus_groups, judged, pooled_between
from logbook.analysis.audit.context import Context, at
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import RunView
from logbook.findings import Finding
from logbook.stats.significance import variance_ratio_test
from logbook.stats.spread import mean_sd

A18_ALPHA = 0.01  # A18: one-sided F-test of an arm's run variance against its band's


@rule("A12", severity="warning", title="surprise not re-measured",
      finds="the last run of an apparatus lies outside the prediction interval of its earlier "
      "runs or band, and was not re-run")
def surprise(ctx: Context) -> Iterator[Finding]:
    """The last run of an apparatus lies outside the prediction interval of the earlier runs
    (or of the latest band's runs): its own sampling error plus the spread between runs."""
    groups = apparatus_groups(ctx)
    for key, group in groups.items():
        band, last = ctx.bands.get(key), group[-1]
        if band is not None:
            reference = [r for r in map(ctx.view.runs_by_digest.get, band.body["runs"])
                         if r is not None and ctx.counts(r) and r is not last]
            where = f"the {len(reference)} runs of the band measured at @{band.seq}"
        else:  # exactly two runs: which one is the surprise cannot be told (A20)
            reference = group[:-1] if len(group) >= 3 else []
            where = f"the {len(reference)} earlier runs of the same apparatus"
        if len(reference) < (1 if band is not None else 2):
            continue
        pooled = pooled_between(ctx, groups, key) if band is None else None
        pred, one_item = judged(ctx, last, reference, pooled)
        x = ctx.score(last)
        assert x is not None
        if abs(pred.z) > Z and abs(x - pred.mean) > one_item + EPS:
            s = ctx.scale(last)
            yield Finding("A12", "warning", f"run @{last.seq} scored {x * s:.4g}, "
                          f"{abs(pred.z):.1f} standard deviations from what {where} predict "
                          f"(mean {pred.mean * s:.4g}, prediction sd {pred.sd * s:.2g}: its "
                          f"sampling error and a spread between runs of {pred.between * s:.2g}"
                          "), and no later run of the same "
                          "apparatus re-measured it", last.seq,
                          [last.digest, *([last.plan] if last.plan else []),
                           *([band.digest] if band is not None else [])])


@rule("A18", severity="warning", title="runs beyond their band",
      finds="an arm's runs of one apparatus vary more than the band measured on it allows "
      "(F-test, p < 0.01)")
def beyond_band(ctx: Context) -> Iterator[Finding]:
    """An arm's runs of one banded apparatus vary more than the band's own runs did: the
    F-test of their variances, s² / sd_band², on (k - 1, k_band - 1) degrees of freedom."""
    if not ctx.bands:
        return
    for plan in ctx.scoped_plans():
        for arm in ctx.body(plan).get("arms", []):
            groups: dict[tuple[Any, ...], list[RunView]] = {}
            for r in ctx.usable(plan.runs, arm.get("name")):
                groups.setdefault(ctx.apparatus_key(r), []).append(r)
            for key, runs in groups.items():
                band = ctx.bands.get(key)
                if band is None or len(runs) < 2:
                    continue
                _m, sd = mean_sd(ctx.scores(runs))
                sd_band, k_band = float(band.body["sd"]), int(band.body["k"])
                if sd_band > 0:
                    f, p = variance_ratio_test(sd, len(runs), sd_band, k_band)
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
