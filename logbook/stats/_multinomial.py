"""Bootstrap counts of a mean over few distinct values, drawn fast and exactly."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

RARE = 25  # values held by fewer items than this are drawn item by item
CACHE_CELLS = 1 << 18  # rare draws per chunk (measured: 4M-cell chunks cost 2-4x on first use)


def multinomial_counts(
    counts: NDArray[np.int64], n_resamples: int, rng: np.random.Generator, max_cells: int
) -> NDArray[np.int64]:
    """One row per resample of how often each distinct value was drawn: each row is
    Multinomial(n, counts / n), the counts of n draws with replacement from the n items.

    numpy draws a multinomial row as one binomial per value (~75 ns each, the cost of the
    whole bootstrap). Values held by fewer than ``RARE`` items are drawn as items instead:
    how many of the n draws land on the m rare items is Binomial(n, m / n), each of those is
    uniform over the m rare items, and the rest are Multinomial over the common values. By
    the multinomial's grouping property this is the same joint law, at a few ns per rare draw.
    """
    n = int(counts.sum())
    rare = counts < RARE
    m = int(counts[rare].sum())
    if m == 0 or m == n:
        return rng.multinomial(n, counts / n, size=n_resamples)
    common = ~rare
    k_rare = int(rare.sum())
    codes = np.repeat(np.arange(k_rare, dtype=np.intp), counts[rare])  # each rare item's value
    p_common = counts[common] / (n - m)
    out = np.empty((n_resamples, counts.size), dtype=np.int64)
    # rows per chunk: ~m rare draws per row; small chunks keep the temporaries in cache
    chunk = max(1, min(max_cells, CACHE_CELLS) // m)
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        on_rare = rng.binomial(n, m / n, size=rows)
        block = out[start : start + rows]
        block[:, common] = rng.multinomial(n - on_rare, p_common)
        cells = codes[rng.integers(0, m, size=int(on_rare.sum()), dtype=np.int32)]  # values drawn
        cells += np.repeat(np.arange(0, rows * k_rare, k_rare), on_rare)  # in its row
        block[:, rare] = np.bincount(cells, minlength=rows * k_rare).reshape(rows, k_rare)
    return out
