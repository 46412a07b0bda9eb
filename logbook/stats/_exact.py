"""Sums whose digits do not depend on the numpy (or BLAS) build.

numpy's reductions (``sum``, ``mean``, ``var``, ``@``) add in an order that depends on the
build: pairwise blocks, SIMD lanes, BLAS kernels with or without fused multiply-add. The
results agree to rounding, not to the last bit, and a report's JSON showed it (a worst case
of -0.01103 under one numpy, -0.011029999999999998 under another). Every reduction that feeds
a printed figure goes through here instead:

* ``xsum``: ``math.fsum``, the correctly rounded sum, which no order can change;
* ``row_sums``: ``np.cumsum`` along each row, whose last column is the sequential sum (an
  accumulation is defined term by term, so no build may reorder it);
* ``column_sums``: the rows added one after another (for few rows);
* ``lane_sums``: the same for many rows, in one call: ``np.add.reduce`` over axis 0 of a
  C-ordered array adds row after row, each column being one lane of the elementwise add
  loop (numpy sums pairwise only along the contiguous axis), used only once a probe has
  seen this numpy do exactly that, else ``np.cumsum`` over axis 0, sequential by definition.

Elementwise operations (+, -, *, /) are single IEEE operations and already exact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray


def xsum(a: Any) -> float:
    """math.fsum of ``a``: the correctly rounded sum, the same float whatever the order.

    Large arrays are first reduced, exactly, to a few floats with the same exact sum (Rump,
    Ogita and Oishi's extraction: with sigma a power of two above 4n times every |p|,
    q = (p + sigma) - sigma is p on a grid of 2^-53 sigma, so any order of adding the q is
    exact, and p - q is exact too); fsum of those few and of what is left gives the very
    float fsum gives for the whole array, at a fraction of its cost (no Python float per
    item). Zeros, non-finite values and extreme magnitudes go to fsum as they are.
    """
    p = np.asarray(a, dtype=np.float64).ravel()
    if p.size < _EXTRACT_MIN:
        return math.fsum(p.tolist())
    parts: list[float] = []
    grid = (p.size - 1).bit_length() + 2  # 2**grid >= 4n
    for _ in range(3):
        big = float(np.max(np.abs(p)))
        if not 2.0**-900 < big < 2.0**900:  # 0, inf, nan or extreme: fsum, as it is
            break
        sigma = math.ldexp(1.0, math.frexp(big)[1] + grid)
        q = (p + sigma) - sigma
        parts.append(float(np.sum(q)))  # exact in any order
        p = p - q  # exact: the bits below q's grid
        nonzero = np.flatnonzero(p)
        if nonzero.size * 8 < p.size:
            p = p[nonzero]
            break
    return math.fsum([*parts, *p.tolist()])


_EXTRACT_MIN = 256  # below this, fsum alone is as fast


def xmean(a: Any) -> float:
    arr = np.asarray(a, dtype=np.float64)
    return xsum(arr) / arr.size


def xvar(a: Any, ddof: int = 1) -> float:
    """Sample variance from the correctly rounded mean and sum of squares."""
    arr = np.asarray(a, dtype=np.float64).ravel()
    m = xsum(arr) / arr.size
    d = arr - m
    return xsum(d * d) / (arr.size - ddof)


def xdot(a: Any, b: Any) -> float:
    return xsum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64))


def row_sums(m: NDArray[Any]) -> NDArray[np.float64]:
    """Sum of each row of a 2-D array, added left to right."""
    if m.shape[1] == 0:
        return np.zeros(m.shape[0])
    return np.asarray(np.cumsum(m, axis=1, dtype=np.float64)[:, -1])


def column_sums(m: NDArray[Any]) -> NDArray[np.float64]:
    """Sum of each column of a 2-D array, the rows added top to bottom."""
    out = np.zeros(m.shape[1])
    for row in np.asarray(m, dtype=np.float64):
        out += row
    return out


def column_means(stack: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each column's mean over the rows that score it (a runs x items stack: each item's
    mean over the runs that scored it), its sum exact; NaN where no row does."""
    present = ~np.isnan(stack)
    counts = present.sum(axis=0)
    sums = column_sums(np.where(present, stack, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def lane_sums(m: NDArray[Any]) -> NDArray[np.float64]:
    """Sum of each column of a 2-D array, the rows added top to bottom (as column_sums)."""
    m = np.ascontiguousarray(m, dtype=np.float64)
    if m.shape[0] == 0:
        return np.zeros(m.shape[1])
    if m.shape[1] >= 2 and _reduce_is_sequential():
        return np.asarray(np.add.reduce(m, axis=0))
    return np.asarray(np.cumsum(m, axis=0)[-1])


_SEQUENTIAL: list[bool] = []


def _reduce_is_sequential() -> bool:
    """Whether np.add.reduce over axis 0 adds the rows in order, for every lane count a
    caller uses: a column of 1 followed by 2,000 halves of an ulp sums to exactly 1 in order
    (each half rounds away, to even) and to more in any other order (pairwise, blocks)."""
    if not _SEQUENTIAL:
        col = np.full(2001, 2.0**-53)
        col[0] = 1.0
        ok = True
        for lanes in (2, 3, 4, 7, 8, 16, 64, 257):
            m = np.repeat(col[:, None], lanes, axis=1)
            ok = ok and bool((np.add.reduce(m, axis=0) == 1.0).all())
        _SEQUENTIAL.append(ok)
    return _SEQUENTIAL[0]


def weighted_counts(counts: NDArray[Any], values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each row's sum of count * value over the columns, columns added in order."""
    out = np.zeros(counts.shape[0])
    for j in range(counts.shape[1]):
        out += counts[:, j] * values[j]
    return out
