"""Item-level bootstrap (Efron 1979) with percentile and BCa (Efron 1987) intervals.

Resampling is done in bounded memory: a mean over data with few distinct values is
resampled as multinomial counts over those values (O(resamples x distinct values)); any
other case draws indices in chunks of at most ``_MAX_CELLS`` cells.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ._multinomial import multinomial_counts
from ._results import Estimate
from ._stream import Stream
from ._validate import as_float_array, as_labels, check_confidence, check_int

Reducer = Callable[[NDArray[np.float64]], NDArray[np.float64]]
StatisticArg = Literal["mean", "median"] | Callable[..., Any]

_MAX_CELLS = 4_000_000  # ~32 MB of float64 per chunk of resamples
_MAX_DISTINCT = 64  # multinomial draws cost O(distinct values) per resample; beyond this, index


@dataclass(frozen=True, slots=True)
class _Dist:
    """A bootstrap distribution (sorted) with the BCa constants; percentile has z0 = a = 0."""

    theta_hat: float
    boot: NDArray[np.float64]
    z0: float
    accel: float
    method: str


def _reducer(statistic: StatisticArg) -> Reducer:
    if statistic == "mean":
        return lambda m: np.mean(m, axis=-1)
    if statistic == "median":
        return lambda m: np.median(m, axis=-1)
    if callable(statistic):
        f = statistic

        def reduce(m: NDArray[np.float64]) -> NDArray[np.float64]:
            out = np.asarray(f(m, axis=-1), dtype=np.float64)
            if out.shape != m.shape[:-1]:
                raise ValueError("statistic: a callable must reduce along axis=-1 (numpy style)")
            return out

        return reduce
    raise ValueError(f"statistic: expected 'mean', 'median' or a callable, got {statistic!r}")


def _cluster_codes(clusters: Sequence[Any], n: int) -> NDArray[np.intp]:
    labels = as_labels("clusters", clusters, n, "values")
    index: dict[Any, int] = {}
    codes = np.fromiter((index.setdefault(c, len(index)) for c in labels), np.intp, count=n)
    if len(index) < 2:
        raise ValueError("clusters: need at least 2 distinct clusters to resample")
    return codes


def _resample_indices(
    n: int,
    n_resamples: int,
    stream: Stream,
    reduce_idx: Callable[[NDArray[np.intp]], Any],
) -> NDArray[np.float64]:
    """Apply reduce_idx to chunks of (m, n) index draws so that m * n <= _MAX_CELLS."""
    chunk = max(1, _MAX_CELLS // n)
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        m = min(chunk, n_resamples - start)
        out[start : start + m] = reduce_idx(stream.indices(n, m * n).reshape(m, n))
    return out


def _jackknife_general(
    x: NDArray[np.float64], reduce: Reducer
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Leave-one-out values, one per distinct value (a symmetric statistic cannot tell
    which copy was left out), with multiplicities as weights."""
    uniq, first, counts = np.unique(x, return_index=True, return_counts=True)
    n = x.size
    out = np.empty(uniq.size)
    base = np.arange(n - 1)
    chunk = max(1, _MAX_CELLS // (n - 1))
    for s in range(0, uniq.size, chunk):
        pos = first[s : s + chunk]
        idx = base[None, :] + (base[None, :] >= pos[:, None])
        out[s : s + pos.size] = reduce(x[idx])
    return out, counts


def _distribution(
    x: NDArray[np.float64],
    statistic: StatisticArg,
    n_resamples: int,
    stream: Stream,
    codes: NDArray[np.intp] | None,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """theta_hat, bootstrap values, jackknife values and their weights."""
    n = x.size
    if codes is not None:
        # Cluster bootstrap of the item mean: a resample is a multiset of whole clusters,
        # and its item mean is (sum of cluster sums) / (sum of cluster sizes).
        sums = np.bincount(codes, weights=x)
        sizes = np.bincount(codes).astype(np.float64)
        total, count = sums.sum(), sizes.sum()
        boot = _resample_indices(
            sums.size, n_resamples, stream, lambda i: sums[i].sum(axis=1) / sizes[i].sum(axis=1)
        )
        jack = (total - sums) / (count - sizes)
        return float(total / count), boot, jack, np.ones_like(jack)
    if statistic == "mean":
        uniq, counts = np.unique(x, return_counts=True)
        jack = (x.sum() - uniq) / (n - 1)
        if uniq.size <= _MAX_DISTINCT and uniq.size * 4 <= n:
            draws = multinomial_counts(counts, n_resamples, stream, _MAX_CELLS)
            # theta_hat by the same arithmetic as the resamples, so that resamples equal to
            # the data compare equal to it (this matters for the BCa bias correction).
            return float(counts @ uniq) / n, draws @ uniq / n, jack, counts.astype(np.float64)
        boot = _resample_indices(n, n_resamples, stream, lambda i: x[i].mean(axis=1))
        return float(x.mean()), boot, jack, counts.astype(np.float64)
    reduce = _reducer(statistic)
    theta_hat = float(reduce(x[None, :])[0])
    boot = _resample_indices(n, n_resamples, stream, lambda i: reduce(x[i]))
    jack, weights = _jackknife_general(x, reduce)
    return theta_hat, boot, jack, weights.astype(np.float64)


def _bca_constants(
    theta_hat: float, boot: NDArray[np.float64], jack: NDArray[np.float64], w: NDArray[np.float64]
) -> tuple[float, float] | None:
    """(z0, a) per Efron (1987); None when z0 is infinite (theta_hat outside the resamples)."""
    from ._dist import ndtri

    # Mid-rank for ties, as scipy does: discrete data put many resamples exactly on theta_hat.
    prop = (np.count_nonzero(boot < theta_hat) + np.count_nonzero(boot <= theta_hat)) / (
        2 * boot.size
    )
    if prop <= 0.0 or prop >= 1.0:
        return None
    d = np.average(jack, weights=w) - jack
    with np.errstate(over="ignore", invalid="ignore"):  # numpy scalars: inf, not an error
        den = 6.0 * np.float64(w @ d**2) ** 1.5
        accel = float(np.float64(w @ d**3) / den) if den > 0 else 0.0
    if not math.isfinite(accel):  # values so large their cubes overflow: no acceleration
        return None
    return float(ndtri(prop)), accel


def _build(
    x: NDArray[np.float64],
    statistic: StatisticArg,
    method: str,
    n_resamples: int,
    seed: int | None,
    codes: NDArray[np.intp] | None,
    stream: Stream | None = None,
) -> _Dist:
    if method not in ("bca", "percentile"):
        raise ValueError(f"method: expected 'bca' or 'percentile', got {method!r}")
    prefix = "cluster-bootstrap" if codes is not None else "bootstrap"
    if np.all(x == x[0]):
        # Every resample equals the data: a zero-width interval is the bootstrap's answer.
        theta = (
            float(x[0])
            if statistic in ("mean", "median")
            else float(_reducer(statistic)(x[None, :])[0])
        )
        return _Dist(theta, np.full(1, theta), 0.0, 0.0, f"{prefix}-{method}")
    theta_hat, boot, jack, w = _distribution(
        x, statistic, n_resamples, Stream(seed) if stream is None else stream, codes
    )
    if not np.isfinite(boot).all() or not math.isfinite(theta_hat):
        raise ValueError("statistic: returned a non-finite value on the data or a resample")
    boot = np.sort(boot)
    if method == "percentile":
        return _Dist(theta_hat, boot, 0.0, 0.0, f"{prefix}-percentile")
    consts = _bca_constants(theta_hat, boot, jack, w)
    if consts is None:
        return _Dist(theta_hat, boot, 0.0, 0.0, f"{prefix}-percentile (bca undefined)")
    return _Dist(theta_hat, boot, consts[0], consts[1], f"{prefix}-bca")


def _levels(confidence: float, z0: float, a: float) -> tuple[float, float]:
    """Quantile levels of the interval; (alpha/2, 1 - alpha/2) when z0 = a = 0."""
    from ._dist import ndtr, ndtri

    z = float(ndtri((1.0 - confidence) / 2.0))
    lo, hi = z0 + z, z0 - z
    return float(ndtr(z0 + lo / (1 - a * lo))), float(ndtr(z0 + hi / (1 - a * hi)))


def _interval(dist: _Dist, confidence: float) -> tuple[float, float]:
    lo_level, hi_level = _levels(confidence, dist.z0, dist.accel)
    return _quantile(dist.boot, lo_level), _quantile(dist.boot, hi_level)


def _quantile(ordered: NDArray[np.float64], q: float) -> float:
    """The linear (type 7) quantile of sorted values, as np.quantile and scipy compute it
    (and the same two-sided lerp), without np.quantile's partition and its numpy.ma import."""
    h = (ordered.size - 1) * q
    i = min(math.floor(h), ordered.size - 1)
    t = h - i
    if t == 0.0 or i + 1 >= ordered.size:
        return float(ordered[i])
    a, b = float(ordered[i]), float(ordered[i + 1])
    return b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t


def _crossing(boot: NDArray[np.float64], side: str) -> float:
    """Level q where the linear quantile function of sorted ``boot`` crosses 0.

    side="le": sup{q: Q(q) <= 0}; side="ge": inf{q: Q(q) >= 0}.  Returns -inf/inf when the
    set is empty or everything (see callers).
    """
    b = boot.size
    j = int(np.searchsorted(boot, 0.0, side="right" if side == "le" else "left"))
    if j == 0:
        return -math.inf if side == "le" else 0.0
    if j == b:
        return 1.0 if side == "le" else math.inf
    lo, hi = float(boot[j - 1]), float(boot[j])
    return ((j - 1) + (0.0 - lo) / (hi - lo)) / (b - 1)


def _pvalue(dist: _Dist) -> float:
    """Two-sided p-value by inverting the interval: the smallest alpha at which the
    (1 - alpha) interval, built from the same resamples, z0 and a, excludes 0.

    The interval is [Q(L(alpha)), Q(U(alpha))] with Q the linear quantile of the resamples,
    L(alpha) = Phi(z0 + w/(1 - a w)), w = z0 + z_{alpha/2}, and U the mirror image. It lies
    above 0 iff L(alpha) > q0 = sup{q: Q(q) <= 0}; solving L(alpha) = q0 in closed form gives
    the threshold, likewise below 0. So the interval excludes 0 iff p < alpha. For the
    percentile interval this is p = 2 min(q0, 1 - q1).
    """
    from ._dist import ndtr, ndtri

    z0, a = dist.z0, dist.accel

    def alpha_at(q: float, lower: bool) -> float:
        # lower: smallest alpha with L(alpha) > q; upper: smallest alpha with U(alpha) < q.
        if q <= 0.0:
            return 0.0 if lower else 1.0
        if q >= 1.0:
            return 1.0 if lower else 0.0
        g = float(ndtri(q)) - z0
        if 1.0 + a * g <= 0.0:  # level outside the range the BCa map reaches
            return float(lower == (a < 0))
        w = g / (1.0 + a * g)
        return min(1.0, 2.0 * float(ndtr(w - z0 if lower else z0 - w)))

    q0 = _crossing(dist.boot, "le")
    q1 = _crossing(dist.boot, "ge")
    p_above = alpha_at(max(q0, 0.0), lower=True) if q0 > -math.inf else 0.0
    p_below = alpha_at(min(q1, 1.0), lower=False) if q1 < math.inf else 0.0
    return min(p_above, p_below, 1.0)


def _se(dist: _Dist) -> float:
    return float(np.std(dist.boot, ddof=1)) if dist.boot.size > 1 else 0.0


def bootstrap(
    values: Sequence[float] | NDArray[np.floating[Any]],
    statistic: StatisticArg = "mean",
    method: Literal["bca", "percentile"] = "bca",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
    clusters: Sequence[Any] | None = None,
) -> Estimate:
    """Bootstrap interval for ``statistic`` over item-level ``values``.

    ``statistic``: "mean", "median", or a symmetric numpy-style reduction ``f(x, axis=-1)``.
    ``clusters``: one label per value; whole clusters are resampled (mean only), the unit
    that was sampled independently. ``se`` is the sd of the bootstrap distribution. Data whose
    values are all equal give a zero-width interval. Deterministic for a given ``seed``.
    """
    x = as_float_array("values", values, min_len=2)
    confidence = check_confidence(confidence)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    if seed is not None:
        seed = check_int("seed", seed)
    _reducer(statistic)  # validates the argument before any work
    codes = None
    if clusters is not None:
        if statistic != "mean":
            raise ValueError("statistic: the cluster bootstrap supports 'mean' only")
        codes = _cluster_codes(clusters, x.size)
    dist = _build(x, statistic, method, n_resamples, seed, codes)
    low, high = _interval(dist, confidence)
    return Estimate(dist.theta_hat, _se(dist), low, high, confidence, dist.method, int(x.size))
