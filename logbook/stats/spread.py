"""The spread of a few values: mean and sample sd, an items' population variance, standard
errors pooled over runs. Pure; sums that feed a printed figure go through `_exact`."""

from __future__ import annotations

import math
from collections.abc import Sequence


def mean_sd(xs: Sequence[float]) -> tuple[float, float]:
    """The mean and sample standard deviation (0 for one value) of a non-empty sequence."""
    m = sum(xs) / len(xs)
    # d * d, not d ** 2: a huge score gives inf, where ** raises OverflowError
    var = sum((x - m) * (x - m) for x in xs) / (len(xs) - 1) if len(xs) > 1 else 0.0
    return m, math.sqrt(var)


def margin_of_mean(xs: Sequence[float], z: float) -> float:
    """`z` standard errors of the mean of `xs` (sample sd / sqrt(n)); 0 when there are none."""
    return z * mean_sd(xs)[1] / math.sqrt(len(xs)) if xs else 0.0


def population_variance(values: Sequence[float]) -> tuple[float, int]:
    """(the population variance of `values`, how many); (0, 0) when there are none."""
    n = len(values)
    if not n:
        return 0.0, 0
    from ._exact import xvar

    return xvar(values, ddof=0), n


def pooled_standard_errors(variances: Sequence[tuple[float, int]]) -> list[float]:
    """Each mean's standard error from the variance pooled over every (variance, n) pair, so
    that a mean whose values all agree still has the spread its neighbours show."""
    total = sum(n for _v, n in variances)
    pooled = math.fsum(v * n for v, n in variances) / total if total else 0.0
    return [math.sqrt(pooled / n) if n else 0.0 for _v, n in variances]
