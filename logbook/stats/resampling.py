"""Item-level bootstrap (Efron 1979) with percentile and BCa (Efron 1987) intervals.

Resampling is done in bounded memory: a mean is resampled as multinomial counts over its
distinct values when that costs less than drawing every item (few distinct values, or many
items per value; ``_multinomial.counts_path_is_cheaper``), in blocks of resamples of at most
``_MAX_CELLS`` counts; any other case draws indices in cache-sized blocks (``_blocks``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ._blocks import blocks, resample, sums_of
from ._exact import row_sums, weighted_counts, xdot, xmean, xsum
from ._intervals import _Dist, _interval, _se
from ._lanes import resample_sums
from ._multinomial import counts_path_is_cheaper, multinomial_counts
from ._results import Estimate
from ._stream import Stream
from ._validate import as_float_array, as_labels, check_confidence, check_int

Reducer = Callable[[NDArray[np.float64]], NDArray[np.float64]]
StatisticArg = Literal["mean", "median"] | Callable[..., Any]

_MAX_CELLS = 4_000_000  # ~32 MB of float64 per chunk of resamples


def _reducer(statistic: StatisticArg) -> Reducer:
    if statistic == "mean":
        return lambda m: row_sums(m.reshape(-1, m.shape[-1])).reshape(m.shape[:-1]) / m.shape[-1]
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


def _sums(columns: tuple[NDArray[np.float64], ...], n_resamples: int,
          stream: Stream) -> list[NDArray[np.float64]]:
    """Each column's sums over the resamples' indices: on every core for the logbook's
    stream; block by block for any other source of indices (the tests' scipy draws)."""
    if isinstance(stream, Stream):
        return resample_sums(columns, n_resamples, stream)
    of = [sums_of(c) for c in columns]
    out = [np.empty(n_resamples) for _ in columns]
    for start, block in blocks(columns[0].size, n_resamples, stream):
        for f, o in zip(of, out, strict=True):
            o[start : start + block.shape[0]] = f(block)
    return out


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
        sums = np.asarray(np.bincount(codes, weights=x), dtype=np.float64)
        sizes = np.bincount(codes).astype(np.float64)
        total, count = xsum(sums), xsum(sizes)
        top, bottom = _sums((sums, sizes), n_resamples, stream)
        boot = top / bottom
        jack = (total - sums) / (count - sizes)
        return float(total / count), boot, jack, np.ones_like(jack)
    if statistic == "mean":
        uniq, counts = np.unique(x, return_counts=True)
        jack = (xsum(x) - uniq) / (n - 1)
        if counts_path_is_cheaper(counts, n):
            # theta_hat by the same arithmetic as the resamples, so that resamples equal to
            # the data compare equal to it (this matters for the BCa bias correction).
            theta = float(weighted_counts(counts[None, :], uniq)[0]) / n
            boot = np.empty(n_resamples)
            rows = max(1, _MAX_CELLS // uniq.size)  # blocks of resamples in bounded memory
            for start in range(0, n_resamples, rows):
                m = min(rows, n_resamples - start)
                draws = multinomial_counts(counts, m, stream, _MAX_CELLS)
                boot[start : start + m] = weighted_counts(draws, uniq) / n
            return theta, boot, jack, counts.astype(np.float64)
        boot = _sums((x,), n_resamples, stream)[0] / n
        return xmean(x), boot, jack, counts.astype(np.float64)
    reduce = _reducer(statistic)
    theta_hat = float(reduce(x[None, :])[0])
    boot = resample(n, n_resamples, stream, lambda i: reduce(x[i]))
    jack, weights = _jackknife_general(x, reduce)
    return theta_hat, boot, jack, weights.astype(np.float64)


def _snap(boot: NDArray[np.float64], theta_hat: float,
          x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Resamples within rounding of the estimate or of 0 become exactly that.

    Data on a lattice (accuracies, their differences, means over a few runs) put many
    resamples on the estimate and on 0 in exact arithmetic, but a sum in floating point can
    land one ulp either side, and the BCa bias correction (which counts resamples below the
    estimate) and the p-value (which finds where 0 falls) would then move with rounding:
    0.09 points on a documented example. Distinct resample values differ by at least
    (smallest gap between data values) / n, far above the tolerance, 1e-12 of the data's range.
    """
    tol = 1e-12 * max(float(np.max(np.abs(x))), abs(theta_hat), 1e-300)
    boot = np.where(np.abs(boot - theta_hat) <= tol, theta_hat, boot)
    return np.where(np.abs(boot) <= tol, 0.0, boot)


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
    d = xdot(w, jack) / xsum(w) - jack
    with np.errstate(over="ignore", invalid="ignore"):  # numpy scalars: inf, not an error
        den = 6.0 * np.float64(xdot(w, d * d)) ** 1.5
        accel = float(np.float64(xdot(w, d * d * d)) / den) if den > 0 else 0.0
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
    boot = np.sort(_snap(boot, theta_hat, x))
    if method == "percentile":
        return _Dist(theta_hat, boot, 0.0, 0.0, f"{prefix}-percentile")
    consts = _bca_constants(theta_hat, boot, jack, w)
    if consts is None:
        return _Dist(theta_hat, boot, 0.0, 0.0, f"{prefix}-percentile (bca undefined)")
    return _Dist(theta_hat, boot, consts[0], consts[1], f"{prefix}-bca")


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
