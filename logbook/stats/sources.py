"""Run-to-run spread by its source (issue 36 item 6; 000 ch.2, 003): the spread pooled within
groups of runs that differ only in one thing (execution: nothing but the run; decoding: the
seed), and the one-way random-effects decomposition of run scores by a factor (prompt
variants). Pure numpy/scipy; sums that feed a printed figure go through `_exact`."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from ._exact import xmean, xsum


@dataclass(frozen=True, slots=True)
class PooledSpread:
    """The standard deviation pooled within groups (each group's sum of squares about its own
    mean, over the groups' degrees of freedom): the spread the groups' common source gives,
    their differences in level left out. ``runs`` counts the values of groups of two or more,
    ``groups`` those groups."""

    sd: float
    runs: int
    groups: int
    df: int


def pooled_sd(groups: Sequence[Sequence[float]]) -> PooledSpread | None:
    """The pooled within-group sd over the groups of two or more values; None when none has
    two (the source cannot be estimated)."""
    kept = [[float(x) for x in g] for g in groups if len(g) >= 2]
    if not kept:
        return None
    ss = 0.0
    for g in kept:
        m = xmean(g)
        ss += xsum([(x - m) * (x - m) for x in g])
    df = sum(len(g) - 1 for g in kept)
    return PooledSpread(sd=math.sqrt(ss / df), runs=sum(len(g) for g in kept),
                        groups=len(kept), df=df)


@dataclass(frozen=True, slots=True)
class OneWayRandom:
    """One-way random-effects ANOVA of values by group (a factor's levels, e.g. prompt
    variants): the mean squares between and within, the F test of no variance between
    groups, and the variance components: ``within`` = MSW, ``between`` = (MSB − MSW) / n0
    with n0 = (N − Σnᵢ²/N) / (k − 1) (the ANOVA estimator, unbiased for unbalanced groups too;
    left unclipped, so it can fall below 0, read as no variance between groups seen)."""

    k: int          # groups
    n: int          # values
    means: dict[str, float]
    counts: dict[str, int]
    ms_between: float
    ms_within: float
    df_between: int
    df_within: int
    f: float
    p: float
    n0: float
    between: float
    within: float


def one_way_random(values: Sequence[float], groups: Sequence[Hashable]) -> OneWayRandom | None:
    """The decomposition (OneWayRandom) of ``values`` by ``groups``; None when there are fewer
    than two groups or no group holds two values (nothing within to compare with)."""
    from scipy.stats import f as f_dist

    if len(values) != len(groups):
        raise ValueError(f"groups: {len(groups)} labels for {len(values)} values")
    by: dict[str, list[float]] = {}
    for v, g in zip(values, groups, strict=True):
        by.setdefault(str(g), []).append(float(v))
    k, n = len(by), len(values)
    df_w = n - k
    if k < 2 or df_w < 1:
        return None
    means = {g: xmean(xs) for g, xs in by.items()}
    grand = xmean([float(v) for v in values])
    ssb = xsum([len(xs) * (means[g] - grand) ** 2 for g, xs in by.items()])
    ssw = xsum([(x - means[g]) ** 2 for g, xs in by.items() for x in xs])
    msb, msw = ssb / (k - 1), ssw / df_w
    n0 = (n - sum(len(xs) ** 2 for xs in by.values()) / n) / (k - 1)
    if msw > 0:
        f = msb / msw
        p = float(f_dist.sf(f, k - 1, df_w))
    else:  # every group's values agree within: any difference between them is all there is
        f, p = (math.inf, 0.0) if msb > 0 else (math.nan, 1.0)
    return OneWayRandom(k=k, n=n, means=means, counts={g: len(xs) for g, xs in by.items()},
                        ms_between=msb, ms_within=msw, df_between=k - 1, df_within=df_w,
                        f=f, p=p, n0=n0, between=(msb - msw) / n0, within=msw)
