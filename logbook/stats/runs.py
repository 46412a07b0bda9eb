"""Run-level statistics: each value is one whole-suite score from a repeated run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._exact import xmean, xvar
from ._results import MeanEstimate, VarianceBand, WelchEstimate
from ._validate import as_float_array, check_confidence, check_int, check_positive

Values = Sequence[float] | NDArray[np.floating[Any]]


def _var(x: NDArray[np.float64]) -> float:
    """Sample variance (ddof=1), exactly 0 for identical values (not rounding noise)."""
    return 0.0 if bool(np.all(x == x[0])) else xvar(x)


def t_interval(values: Values, confidence: float = 0.95) -> MeanEstimate:
    """Mean over k runs with sample sd (ddof=1), se = sd/sqrt(k) and mean ± t_{k-1}·se.

    With few runs the t quantile (2.776 at k = 5) matters: 1.96 would understate the interval.
    """
    from ._dist import stdtrit  # scipy.special alone costs more than a report computes

    x = as_float_array("values", values, min_len=2)
    confidence = check_confidence(confidence)
    k = int(x.size)
    mean = xmean(x)
    sd = math.sqrt(_var(x))
    se = sd / math.sqrt(k)
    half = float(stdtrit(k - 1, 0.5 + confidence / 2.0)) * se
    return MeanEstimate(mean, se, mean - half, mean + half, confidence, "t", k, sd)


def logit_t_interval(
    values: Values, n_items: Sequence[int], confidence: float = 0.95
) -> MeanEstimate:
    """Mean over k runs of a proportion, with an interval that stays inside (0, 1).

    Each run's score p (over n items) is moved onto the logit scale as the empirical logit
    log((p n + 1/2) / ((1 - p) n + 1/2)) (Cox 1970: finite at p = 0 and 1); the t-interval
    of those logits, mean ± t_{k-1} sd / sqrt(k), is mapped back by the logistic function.
    The point is the plain mean of the runs and ``sd`` their plain sd, as for ``t_interval``;
    the plain t-interval of a proportion can run past 0 or 1 with few runs (two runs at 0.55
    and 0.95 give -1.98 to 3.48), this one cannot.
    """
    from ._dist import stdtrit

    x = as_float_array("values", values, min_len=2)
    confidence = check_confidence(confidence)
    if x.min() < 0.0 or x.max() > 1.0:
        raise ValueError("values: a proportion's run scores must lie in [0, 1]")
    n = np.asarray([check_int("n_items", int(v), minimum=1) for v in n_items], dtype=float)
    if n.size != x.size:
        raise ValueError(f"n_items: has {n.size} counts but values has {x.size}")
    k = int(x.size)
    logits = np.array([math.log(v) for v in ((x * n + 0.5) / ((1.0 - x) * n + 0.5)).tolist()])
    lsd = math.sqrt(_var(logits))
    half = float(stdtrit(k - 1, 0.5 + confidence / 2.0)) * lsd / math.sqrt(k)
    centre = xmean(logits)
    low, high = _expit(centre - half), _expit(centre + half)
    mean = xmean(x)
    sd = math.sqrt(_var(x))
    return MeanEstimate(mean, sd / math.sqrt(k), low, high, confidence, "logit-t", k, sd)


def _expit(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def welch(a: Values, b: Values, confidence: float = 0.95) -> WelchEstimate:
    """Difference of mean run scores b - a, Welch's t with Welch–Satterthwaite df.

    Does not assume equal run-to-run variance. If both sides have zero spread the difference
    is exact: se = 0, df None, and pvalue 1 if the means agree, else 0.
    """
    from ._dist import stdtr, stdtrit

    va = as_float_array("a", a, min_len=2)
    vb = as_float_array("b", b, min_len=2)
    confidence = check_confidence(confidence)
    diff = xmean(vb) - xmean(va)
    qa = _var(va) / va.size
    qb = _var(vb) / vb.size
    se = math.sqrt(qa + qb)
    n = int(va.size + vb.size)
    if se == 0.0:
        diff = float(vb[0] - va[0])  # both sides constant; avoid mean() rounding noise
        stat = 0.0 if diff == 0 else math.copysign(math.inf, diff)
        return WelchEstimate(
            diff, 0.0, diff, diff, confidence, "welch", n, stat, float(diff == 0), None
        )
    df = (qa + qb) ** 2 / (qa**2 / (va.size - 1) + qb**2 / (vb.size - 1))
    stat = diff / se
    half = float(stdtrit(df, 0.5 + confidence / 2.0)) * se
    p = float(2.0 * stdtr(df, -abs(stat)))
    return WelchEstimate(diff, se, diff - half, diff + half, confidence, "welch", n, stat, p, df)


def variance_band(run_scores: Values, z: float = 2.0) -> VarianceBand:
    """Run-to-run band: mean, sample sd, band = z·sd, observed range over k >= 2 runs.

    ``sd_rel_uncertainty`` = 1/sqrt(2(k-1)) is the approximate relative standard error of the
    sd (normal runs): about 24% at k = 10, so a band from few runs is itself vague.
    """
    x = as_float_array("run_scores", run_scores, min_len=2)
    z = check_positive("z", z)
    k = int(x.size)
    sd = math.sqrt(_var(x))
    return VarianceBand(
        k=k,
        mean=xmean(x),
        sd=sd,
        band=z * sd,
        z=z,
        observed_range=float(x.max() - x.min()),
        sd_rel_uncertainty=1.0 / math.sqrt(2.0 * (k - 1)),
    )


def pass_at_k_items(
    n: Sequence[int] | NDArray[np.integer[Any]],
    c: Sequence[int] | NDArray[np.integer[Any]],
    k: int,
) -> NDArray[np.float64]:
    """``pass_at_k`` for each item at once: item i drew n[i] samples of which c[i] passed.

    An item with fewer than k samples has no pass@k estimate (NaN).
    """
    k = check_int("k", k, minimum=1)
    nn = np.asarray(n, dtype=np.int64)
    cc = np.asarray(c, dtype=np.int64)
    if nn.shape != cc.shape:
        raise ValueError(f"c: has {cc.size} counts but n has {nn.size}")
    if (cc < 0).any() or (cc > nn).any():
        raise ValueError("c: every item needs 0 <= c <= n")
    out = np.full(nn.shape, np.nan)
    for i in range(nn.size):
        if nn[i] >= k:
            out[i] = pass_at_k(int(nn[i]), int(cc[i]), k)
    return out


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021) from n samples of which c pass.

    1 - C(n-c, k)/C(n, k), computed as 1 - prod(1 - k/i for i in n-c+1..n) so large n does not
    overflow the binomial coefficients.
    """
    n = check_int("n", n, minimum=1)
    c = check_int("c", c, minimum=0)
    k = check_int("k", k, minimum=1)
    if c > n:
        raise ValueError(f"c: must be <= n ({n}), got {c}")
    if k > n:
        raise ValueError(f"k: must be <= n ({n}), got {k}")
    if n - c < k:  # every k-subset contains a passing sample
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
