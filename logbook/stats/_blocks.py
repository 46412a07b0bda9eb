"""The bootstrap's index path, in pieces that fit the cache (issue 22: no cliffs).

Resample r of n items is the stream's indices r*n ... r*n + n-1 (docs/statistics.md, "The
random stream"); a mean's resample is the sum of its items' values added left to right,
divided by n. Neither the blocks nor the thread change a digit:

* the i-th index is the stream's i-th accepted value however the draws are split into calls
  (Stream.indices, and a Reader at any offset);
* sums are taken over the columns of a transposed block, a segment at a time: each resample
  is one lane of an elementwise add, so each is still added left to right
  (``_exact.lane_sums``), the running sums carried from one segment into the next.

Here, ``resample`` (any statistic): blocks of (m, n) indices in stream order, one thread
drawing block k+1 while block k is reduced. Means and cluster sums take ``_lanes`` instead
(tasks of whole resamples on every core); ``sums_of`` over these blocks is its reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._exact import lane_sums
from ._stream import Stream

DRAW_CELLS = 1 << 16  # indices per call to the stream (its temporaries: ~1 MB)
SEGMENT_CELLS = 1 << 16  # values gathered and added per step of a block's sums
LANES = 64  # resamples per block: the width of the add (wider adds cost less per value)
MAX_BLOCK_CELLS = 1 << 20  # ... but a block's indices stay within 8 MB
PIPELINE_BLOCKS = 4  # fewer blocks than this are not worth a thread


def block_rows(n: int, n_resamples: int) -> int:
    """Resamples per block: LANES, fewer when n is large (at least 2, at most all)."""
    return max(1, min(n_resamples, max(2, min(LANES, MAX_BLOCK_CELLS // n))))


def blocks(n: int, n_resamples: int, stream: Stream) -> Iterator[tuple[int, NDArray[np.intp]]]:
    """(first resample, its block of (m, n) indices) in stream order."""
    rows = block_rows(n, n_resamples)
    spans = [(s, min(rows, n_resamples - s)) for s in range(0, n_resamples, rows)]

    def draw(m: int) -> NDArray[np.intp]:
        cells = m * n
        if cells <= DRAW_CELLS:
            return stream.indices(n, cells).reshape(m, n)
        out = np.empty(cells, dtype=np.intp)
        for s in range(0, cells, DRAW_CELLS):
            e = min(cells, s + DRAW_CELLS)
            out[s:e] = stream.indices(n, e - s)
        return out.reshape(m, n)

    if len(spans) < PIPELINE_BLOCKS or cores() < 2:
        for start, m in spans:
            yield start, draw(m)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="logbook-draws") as pool:
        ahead = pool.submit(draw, spans[0][1])
        for k, (start, _) in enumerate(spans):
            block = ahead.result()
            if k + 1 < len(spans):
                ahead = pool.submit(draw, spans[k + 1][1])
            yield start, block


def resample(n: int, n_resamples: int, stream: Stream,
             reduce_idx: Callable[[NDArray[np.intp]], Any]) -> NDArray[np.float64]:
    """reduce_idx of every block of (m, n) index draws, one value per resample."""
    out = np.empty(n_resamples)
    for start, block in blocks(n, n_resamples, stream):
        out[start : start + block.shape[0]] = reduce_idx(block)
    return out


def sums_of(values: NDArray[np.float64]) -> Callable[[NDArray[np.intp]], NDArray[np.float64]]:
    """Each row's sum of ``values`` at a block's indices, added left to right (the digits of
    ``_exact.row_sums(values[idx])``)."""

    def sums(idx: NDArray[np.intp]) -> NDArray[np.float64]:
        m, n = idx.shape
        if m < 2:  # one lane: np.add.reduce would sum pairwise; cumsum is sequential
            return np.asarray(np.cumsum(values[idx], axis=1)[:, -1])
        width = max(1, SEGMENT_CELLS // m)  # columns per segment
        buf = np.empty((min(width, n) + 1, m))
        acc: NDArray[np.float64] | None = None
        for j in range(0, n, width):
            w = min(width, n - j)
            cols = idx[:, j : j + w].T
            if acc is None:
                np.take(values, cols, out=buf[:w])
                acc = lane_sums(buf[:w])
            else:
                buf[0] = acc  # the running sums, then this segment's values, in order
                np.take(values, cols, out=buf[1 : w + 1])
                acc = lane_sums(buf[: w + 1])
        assert acc is not None
        return acc

    return sums


def cores() -> int:
    """CPUs this process may run on."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
