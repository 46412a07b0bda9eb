"""Bootstrap counts of a mean over few distinct values, drawn fast and exactly."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ._stream import Stream

RARE = 25  # values held by fewer items than this are drawn item by item
# Costs per resample, measured on this project's machines (benchmarks/bootstrap.py): a common
# value's conditional binomial (three table draws), a rare item's index, an item's index and
# gather on the index path. Only the choice of path depends on them, never a result's law.
LEVEL_NS, RARE_NS, INDEX_NS = 800.0, 10.0, 40.0


def counts_path_is_cheaper(counts: NDArray[np.int64], n: int) -> bool:
    """Whether drawing counts over the distinct values costs less than drawing n items."""
    rare = counts < RARE
    common = int(np.count_nonzero(~rare))
    if common == 0 or common == counts.size:  # one conditional binomial per value
        return LEVEL_NS * (counts.size - 1) < INDEX_NS * n
    return LEVEL_NS * common + RARE_NS * float(counts[rare].sum()) < INDEX_NS * n
CACHE_CELLS = 1 << 18  # rare draws per chunk (measured: 4M-cell chunks cost 2-4x on first use)


def conditional_multinomial(
    trials: NDArray[np.int64], counts: NDArray[np.int64], stream: Stream
) -> NDArray[np.int64]:
    """One row per entry of ``trials``: Multinomial(trials[r], counts / counts.sum()), drawn
    value by value in the order given as Binomial(remaining trials, c_j / remaining count),
    the last value taking what remains."""
    out = np.empty((trials.size, counts.size), dtype=np.int64)
    left = np.asarray(trials, dtype=np.int64).copy()
    mass = int(counts.sum())
    for j in range(counts.size - 1):
        c = int(counts[j])
        out[:, j] = stream.binomial(left, c / mass)
        left -= out[:, j]
        mass -= c
    out[:, -1] = left
    return out


def multinomial_counts(
    counts: NDArray[np.int64], n_resamples: int, stream: Stream, max_cells: int
) -> NDArray[np.int64]:
    """One row per resample of how often each distinct value was drawn: each row is
    Multinomial(n, counts / n), the counts of n draws with replacement from the n items.

    A multinomial row costs one binomial per value (the cost of the whole bootstrap).
    Values held by fewer than ``RARE`` items are drawn as items instead: how many of the n
    draws land on the m rare items is Binomial(n, m / n), each of those is uniform over the m
    rare items, and the rest are Multinomial over the common values. By the multinomial's
    grouping property this is the same joint law, at a few ns per rare draw.

    Order of the draws (the stream is part of the result, docs/statistics.md): the rare
    totals of every row, then the common values' conditional binomials for every row, then
    the rare items, row by row.
    """
    n = int(counts.sum())
    rare = counts < RARE
    m = int(counts[rare].sum())
    if m == 0 or m == n:
        return conditional_multinomial(np.full(n_resamples, n, dtype=np.int64), counts, stream)
    common = ~rare
    k_rare = int(rare.sum())
    codes = np.repeat(np.arange(k_rare, dtype=np.intp), counts[rare])  # each rare item's value
    out = np.empty((n_resamples, counts.size), dtype=np.int64)
    on_rare = stream.binomial(np.full(n_resamples, n, dtype=np.int64), m / n)
    out[:, common] = conditional_multinomial(n - on_rare, counts[common], stream)
    # rows per chunk: ~m rare draws per row; small chunks keep the temporaries in cache
    chunk = max(1, min(max_cells, CACHE_CELLS) // m)
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        hits = on_rare[start : start + rows]
        cells = codes[stream.indices(m, int(hits.sum()))]  # the rare values drawn
        cells += np.repeat(np.arange(0, rows * k_rare, k_rare), hits)  # in its row
        out[start : start + rows, rare] = np.bincount(
            cells, minlength=rows * k_rare
        ).reshape(rows, k_rare)
    return out
