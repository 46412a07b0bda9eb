"""Sums of values at the stream's indices, on every core (issue 22: no cliffs): the index path
of a mean and of the cluster bootstrap's sums.

Resample r of n items is the stream's indices r*n ... r*n + n-1 (docs/statistics.md, "The
random stream"), its sum added left to right: the digits of ``_blocks.sums_of`` over
``_blocks.blocks``, whatever the task size and the number of threads. A task is a few
hundred whole resamples; it reads its 32-bit values where the task before it stopped (a
``Reader`` per thread, on a bit generator of its own), so the offset is all that passes from
task to task, known as soon as a task has checked its values for Lemire's rejections.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
from numpy.typing import NDArray

from . import _blocks
from ._exact import lane_sums
from ._stream import Mark, Reader, Stream

TASK_CELLS = 1 << 21  # indices per task at most (its 32-bit values: 8 MB)
TASK_LANES = 256  # resamples per task at most: the width of its adds
# values read from the stream and checked per step, and gathered and added per step of a
# task's sums: a few MB, in the cache, and long enough that two threads overlap (numpy holds
# the interpreter for part of every call: at 2**16 a step, two threads ran no faster than one;
# at 2**18, 1.3x faster, measured on this project's 2-core machines)
READ_CELLS = 1 << 18
SUM_CELLS = 1 << 18
SLACK = 64  # values read past a task's share for Lemire's rejections, and
SLACK_SHARE = 1.5  # ... this many times the rejections expected (2**32 mod n in 2**32)
MAX_THREADS = 8
# indices below which one thread does it all: starting threads and handing offsets between
# them cost more than they save on a small bootstrap (a cluster bootstrap of 1,000 items and
# 2,000 resamples, 2M indices: 4.3 ms on one thread, 5.3 ms on two, on this project's 2-core
# machines); the digits are the same either way
THREAD_CELLS = 1 << 22


_NONE = np.empty(0, dtype=np.intp)


def task_lanes(n: int, n_resamples: int) -> int:
    """Resamples per task: TASK_LANES, fewer when n is large (at least 2)."""
    return max(2, min(TASK_LANES, TASK_CELLS // n))


def tasks_of(n_resamples: int, lanes: int) -> list[tuple[int, int]]:
    """(first resample, resamples) of each task; a last task of one lane joins the one before
    (one lane cannot be added as a lane: numpy would sum it pairwise)."""
    spans = [[s, min(lanes, n_resamples - s)] for s in range(0, n_resamples, lanes)]
    if len(spans) > 1 and spans[-1][1] == 1:
        spans[-2][1] += spans.pop()[1]
    return [(s, m) for s, m in spans]


def threads(n: int, n_resamples: int) -> int:
    """Threads ``resample_sums`` runs on for ``n_resamples`` resamples of ``n`` items."""
    if n * n_resamples < THREAD_CELLS:
        return 1
    return min(_blocks.cores(), MAX_THREADS, len(tasks_of(n_resamples, task_lanes(n, n_resamples))))


def resample_sums(columns: Sequence[NDArray[np.float64]], n_resamples: int,
                  stream: Stream) -> list[NDArray[np.float64]]:
    """For each column, every resample's sum of its values at the resample's indices (the
    stream's indices r*n ... r*n + n-1, n the columns' length), added left to right: the
    digits of ``sums_of(column)`` over ``blocks``, whatever the task size and thread count.

    The resamples are split into tasks of a few lanes. A task reads its 32-bit values from
    the stream at the offset where the task before it stopped (a ``Reader`` per thread), drops
    those Lemire's method rejects, and says where it stopped; then it turns the values into
    indices and sums, in the transposed layout where each resample is one lane of an add.
    With more than one core, threads take the tasks in turn: each waits only for the
    previous task's offset, known as soon as that task has checked its values.
    """
    n = columns[0].size
    cols = [np.ascontiguousarray(c, dtype=np.float64) for c in columns]
    out = [np.empty(n_resamples) for _ in cols]
    tasks = tasks_of(n_resamples, task_lanes(n, n_resamples))
    mark = stream.mark()
    workers = threads(n, n_resamples)
    offsets: list[int | None] = [0] + [None] * len(tasks)
    if workers < 2:
        work = _Worker(mark, n, cols, out)
        for t, (start, m) in enumerate(tasks):
            offsets[t + 1] = work.run(start, m, cast(int, offsets[t]), lambda end: None)
    else:
        _threaded(tasks, workers, offsets, lambda: _Worker(mark, n, cols, out))
    stream.skip(cast(int, offsets[-1]))
    return out


def _threaded(tasks: list[tuple[int, int]], workers: int, offsets: list[int | None],
              make: Callable[[], _Worker]) -> None:
    """Worker k runs tasks k, k + workers, ...; task t starts once offsets[t] is known."""
    import threading
    from concurrent.futures import ThreadPoolExecutor
    from functools import partial

    ready = threading.Condition()
    failed: list[bool] = []

    def known(t: int) -> bool:
        return offsets[t] is not None or bool(failed)

    def publish(t: int, end: int) -> None:
        with ready:
            offsets[t + 1] = end
            ready.notify_all()

    def loop(k: int) -> None:
        try:
            work = make()
            for t in range(k, len(tasks), workers):
                with ready:
                    ready.wait_for(partial(known, t))
                    if failed:
                        return
                    begin = cast(int, offsets[t])
                work.run(*tasks[t], begin, partial(publish, t))
        except BaseException:
            with ready:
                failed.append(True)
                ready.notify_all()
            raise

    with ThreadPoolExecutor(workers, thread_name_prefix="logbook-sums") as pool:
        for f in [pool.submit(loop, k) for k in range(workers)]:
            f.result()


class _Worker:
    """One thread's share of ``resample_sums``, with buffers reused from task to task."""

    def __init__(self, mark: Mark, n: int, cols: list[NDArray[np.float64]],
                 out: list[NDArray[np.float64]]) -> None:
        self.reader, self.n, self.cols, self.out = Reader(mark), n, cols, out
        self.floor = np.uint32((2**32 - n) % n)  # 2**32 mod n: Lemire's method rejects below
        self.block = np.empty(0, dtype=np.uint32)  # a task's values, reused task to task
        self.packed = np.empty(0, dtype=np.uint32)  # its lanes with a rejection, packed
        self.low = np.empty(READ_CELLS, dtype=np.uint32)
        self.idx = self.buf = np.empty((0, 0))  # a task's indices and values, step by step

    def run(self, start: int, m: int, begin: int, publish: Callable[[int], None]) -> int:
        """Sums of resamples start ... start + m - 1, whose values begin at ``begin``; calls
        ``publish`` with the offset after them as soon as it is known, and returns it."""
        n = self.n
        raw, rej = self.read(begin, m * n)
        while raw.size - rej.size < m * n:  # more rejections than the slack: read on
            more = self.reader.values(begin + raw.size, m * n - raw.size + rej.size + SLACK)
            rej = np.concatenate((rej, *self.rejected(more, raw.size)))
            raw = np.concatenate((raw, more))
        # rejection i comes before accepted value q iff ranks[i] <= q (rej[i] - i values were
        # accepted before it): accepted value q is raw value q + (rejections before it)
        ranks = rej - np.arange(rej.size)
        end = begin + m * n + int(np.searchsorted(ranks, m * n - 1, side="right"))
        publish(end)
        self.sums(self.pieces(raw, rej, ranks, m), start, m)
        return end

    def read(self, begin: int, count: int) -> tuple[NDArray[np.uint32], NDArray[np.intp]]:
        """The values from ``begin`` on, ``count`` and a slack for rejections, into the
        task's buffer, and the positions of the rejected ones; READ_CELLS at a time, each
        checked while it is in the cache."""
        total = count + SLACK + int(count * SLACK_SHARE * int(self.floor) / 2**32)
        if self.block.size < total:
            self.block = np.empty(total, dtype=np.uint32)
            self.packed = np.empty(total, dtype=np.uint32)
        raw = self.block[:total]
        rejected: list[NDArray[np.intp]] = []
        for s in range(0, total, READ_CELLS):
            e = min(total, s + READ_CELLS)
            self.reader.fill(raw[s:e], begin + s)
            if self.floor:
                rejected.extend(self.rejected(raw[s:e], s))
        return raw, np.concatenate(rejected) if rejected else _NONE

    def pieces(self, raw: NDArray[np.uint32], rej: NDArray[np.intp], ranks: NDArray[np.intp],
               m: int) -> list[tuple[int, NDArray[np.uint32]]]:
        """The task's m lanes of n accepted values, as (first lane, (lanes, n) values): runs of
        lanes without a rejection are views of the raw values, shifted by the rejections
        before them; a lane with a rejection inside is packed (its values copied around it)."""
        n, out, lane = self.n, [], 0
        while lane < m:
            q = lane * n
            shift = int(np.searchsorted(ranks, q, side="right"))
            clean = m if shift == ranks.size else min(m, int(ranks[shift]) // n)
            if clean > lane:
                out.append((lane, raw[q + shift : clean * n + shift].reshape(clean - lane, n)))
                lane = clean
                continue
            dst, src, i = q, q + shift, shift  # pack this lane: copy the runs between rejections
            while dst < q + n:
                step = min((int(rej[i]) if i < rej.size else raw.size) - src, q + n - dst)
                self.packed[dst : dst + step] = raw[src : src + step]
                dst, src, i = dst + step, src + step + 1, i + 1
            out.append((lane, self.packed[q : q + n].reshape(1, n)))
            lane += 1
        return out

    def rejected(self, raw: NDArray[np.uint32], offset: int) -> list[NDArray[np.intp]]:
        """Positions (+ offset) of the values Lemire's method rejects, in order: the low 32
        bits of v * n below 2**32 mod n ([] when there are none, the usual case)."""
        found = []
        for s in range(0, raw.size, READ_CELLS):
            part = raw[s : s + READ_CELLS]
            low = np.multiply(part, np.uint32(self.n), out=self.low[: part.size])
            if low.min() < self.floor:
                found.append(np.flatnonzero(low < self.floor) + (offset + s))
        return found

    def sums(self, pieces: list[tuple[int, NDArray[np.uint32]]], start: int, m: int) -> None:
        """Each lane's sums, SUM_CELLS values at a time: a segment of the values, transposed,
        becomes indices ((v * n) >> 32), then each column's values at them, added to the
        running sums below them (row 0 of the buffer; -0.0 to begin, which adds exactly)."""
        n = self.n
        width = max(1, min(n, SUM_CELLS // m))
        if self.idx.shape != (width, m):
            self.idx = np.empty((width, m), dtype=np.uint64)
            self.buf = np.empty((width + 1, m))
        idx, buf = self.idx, self.buf
        acc = [np.full(m, -0.0) for _ in self.cols]
        nn, s32 = np.uint64(n), np.uint64(32)
        for j in range(0, n, width):
            w = min(width, n - j)
            seg = idx[:w]
            for lane, values in pieces:
                np.copyto(seg[:, lane : lane + values.shape[0]], values[:, j : j + w].T)
            np.multiply(seg, nn, out=seg)
            np.right_shift(seg, s32, out=seg)
            at = seg.view(np.int64).astype(np.intp, copy=False)
            for c, col in enumerate(self.cols):
                buf[0] = acc[c]
                # every index is < n, so no mode changes a value; "wrap" checks the bounds
                # fastest (about a tenth off the gather next to "clip", half next to "raise")
                np.take(col, at, out=buf[1 : w + 1], mode="wrap")
                acc[c] = lane_sums(buf[: w + 1])
        for c in range(len(self.cols)):
            self.out[c][start : start + m] = acc[c]
