"""Speed budgets for the paired bootstrap (issue 22): logbook.stats.paired vs
scipy.stats.bootstrap, 10,000 resamples over 10,000 items, percentile interval on both sides:
binary outcomes (the counts path) >= 500x, continuous scores (the index path, in cache-sized
blocks) >= 10x, at equal accuracy: the endpoints must agree within the Monte Carlo tolerance.
Prints each speed ratio (scipy time / ours) against its budget and both intervals. Both sides
are timed best-of-N on warm memory (scipy's first call pays ~3 GB of page faults). Always
exits 0: CI reports the figures, it does not fail on them.

After the continuous comparison it prints where our time goes (``index_path``): the mean's
index path (logbook/stats/_lanes.py) on every core and on one thread, the CPU it burns, and,
on one thread, reading the stream's values (the words and Lemire's check, which no layout
removes) against the rest (indices, gather, add). Medians of interleaved runs.

Run: python benchmarks/bootstrap.py
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from scipy import stats
from scipy.special import ndtri

from logbook.stats import paired

N_ITEMS = 10_000
N_RESAMPLES = 10_000
CONFIDENCE = 0.95
BUDGET = 500.0  # binary items
BUDGET_CONTINUOUS = 10.0
REPEATS_OURS = 5
REPEATS_SCIPY = 2  # the first call warms memory; each costs seconds, keep the script short


class Comparison(NamedTuple):
    ratio: float
    t_ours: float
    t_scipy: float
    ours: tuple[float, float]
    scipy: tuple[float, float]
    point: float
    gap: float
    tolerance: float


def make_binary(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two systems on the same items: b agrees with a except on ~12% of items."""
    rng = np.random.default_rng(seed)
    a = (rng.random(N_ITEMS) < 0.70).astype(np.float64)
    flip = rng.random(N_ITEMS) < 0.12
    b = np.where(flip, (rng.random(N_ITEMS) < 0.75).astype(np.float64), a)
    return a, b


def make_continuous(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(N_ITEMS)
    return a, np.clip(a + rng.normal(0.01, 0.1, N_ITEMS), 0.0, 1.0)


def mc_tolerance(boot_se: float) -> float:
    """Allowed gap between two independent percentile endpoints, each from N_RESAMPLES draws.

    A sample quantile at level q has sd ≈ sqrt(q(1-q)/B) / f(x_q); for a near-normal
    bootstrap distribution with sd s, f(x_q) = phi(z_q)/s. The gap of two independent
    estimates has sqrt(2) times that sd; allow 4 of them, plus one grid step (1/n) because a
    mean of binary differences moves in steps of 1/n.
    """
    q = (1.0 - CONFIDENCE) / 2.0
    z = float(ndtri(q))
    phi = math.exp(-z * z / 2.0) / math.sqrt(2.0 * math.pi)
    sd = boot_se * math.sqrt(q * (1.0 - q) / N_RESAMPLES) / phi
    return 4.0 * math.sqrt(2.0) * sd + 1.0 / N_ITEMS


def best_of(repeats: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    best, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def compare(a: np.ndarray, b: np.ndarray) -> Comparison:
    t_ours, ours = best_of(
        REPEATS_OURS,
        lambda: paired(
            a, b, n_resamples=N_RESAMPLES, confidence=CONFIDENCE, bootstrap_method="percentile"
        ),
    )
    t_scipy, ref = best_of(
        REPEATS_SCIPY,
        lambda: stats.bootstrap(
            (a, b),
            statistic=lambda x, y, axis: np.mean(y - x, axis=axis),
            paired=True,
            vectorized=True,
            method="percentile",
            n_resamples=N_RESAMPLES,
            confidence_level=CONFIDENCE,
            # A different seed from ours (0): on the general path the two would otherwise
            # draw the very same indices, and the tolerance check would prove nothing.
            rng=np.random.default_rng(1),
        ),
    )
    lo_s, hi_s = float(ref.confidence_interval.low), float(ref.confidence_interval.high)
    gap = max(abs(ours.low - lo_s), abs(ours.high - hi_s))
    return Comparison(
        t_scipy / t_ours,
        t_ours,
        t_scipy,
        (ours.low, ours.high),
        (lo_s, hi_s),
        ours.point,
        gap,
        mc_tolerance(ours.se or 0.0),
    )


def verdict(c: Comparison) -> str:
    inside = "within" if c.gap <= c.tolerance else "OUTSIDE"
    return f"max endpoint gap {c.gap:.5f} {inside} MC tolerance {c.tolerance:.5f}"


def machine() -> str:
    """The cores this process may use and the load on them: the index path takes every core,
    so its figure is only as good as the cores that were free (compare interleaved runs)."""
    import os

    from logbook.stats._blocks import cores

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return f"  machine: {cores()} cores for this process, load average {load} (1, 5, 15 min)"


def main() -> None:
    print(machine())
    c = compare(*make_binary())
    status = "ok" if c.ratio >= BUDGET else "UNDER BUDGET"
    print(
        f"bootstrap: ratio {c.ratio:.1f}x (budget >= {BUDGET:.0f}x, {status}) "
        f"ours [{c.ours[0]:+.4f}, {c.ours[1]:+.4f}] scipy [{c.scipy[0]:+.4f}, {c.scipy[1]:+.4f}]"
    )
    print(
        f"  binary: {N_ITEMS} items, {N_RESAMPLES} resamples, effect {c.point:+.4f}; "
        f"ours {c.t_ours * 1e3:.1f} ms (best of {REPEATS_OURS}), scipy {c.t_scipy:.2f} s "
        f"(best of {REPEATS_SCIPY}); {verdict(c)}"
    )
    c = compare(*make_continuous())
    status = "ok" if c.ratio >= BUDGET_CONTINUOUS else "UNDER BUDGET"
    print(
        f"bootstrap (continuous): ratio {c.ratio:.1f}x (budget >= {BUDGET_CONTINUOUS:.0f}x, "
        f"{status}) ours [{c.ours[0]:+.4f}, {c.ours[1]:+.4f}] "
        f"scipy [{c.scipy[0]:+.4f}, {c.scipy[1]:+.4f}]"
    )
    print(
        f"  continuous: {N_ITEMS} items, {N_RESAMPLES} resamples, the index path; ours "
        f"{c.t_ours:.2f} s (best of {REPEATS_OURS}), scipy {c.t_scipy:.2f} s (best of "
        f"{REPEATS_SCIPY}); {verdict(c)}"
    )
    a, b = make_continuous()
    for line in describe(index_path(b - a, N_RESAMPLES, REPEATS_OURS), c.t_scipy):
        print(line)


class PathTimes(NamedTuple):
    """Medians of interleaved runs, in seconds: the index path's sums on every core (wall and
    process CPU), on one thread, and on one thread its reads (words and check) alone and the
    stream's words alone."""

    wall: float
    cpu: float
    one_thread: float
    reads: float
    words: float
    workers: int
    indices: int


def index_path(d: np.ndarray, n_resamples: int, repeats: int) -> PathTimes:
    """Times the sums ``paired`` asks of logbook/stats/_lanes.py for the differences ``d``:
    ``resample_sums`` as it runs, its single-core loop (the same tasks on one ``_Worker``),
    that worker's ``read`` of every task's values, and a ``Reader`` filling as many values."""
    from logbook.stats import _lanes
    from logbook.stats._stream import Reader, Stream

    n = d.size
    tasks = _lanes.tasks_of(n_resamples, _lanes.task_lanes(n, n_resamples))
    begins: list[int] = []  # where each task's values begin in the stream

    def worker() -> Any:
        return _lanes._Worker(Stream(0).mark(), n, [d], [np.empty(n_resamples)])

    def one_thread() -> None:
        work, begin = worker(), 0
        begins.clear()
        for start, m in tasks:
            begins.append(begin)
            begin = work.run(start, m, begin, lambda end: None)

    def reads() -> None:
        work = worker()
        for (_, m), begin in zip(tasks, begins, strict=True):
            work.read(begin, m * n)

    def words() -> None:
        reader, step = Reader(Stream(0).mark()), _lanes.READ_CELLS
        out = np.empty(step, dtype=np.uint32)
        total = n * n_resamples
        for s in range(0, total, step):
            reader.fill(out[: min(step, total - s)], s)

    def all_cores() -> None:
        _lanes.resample_sums([d], n_resamples, Stream(0))

    runs: dict[str, list[float]] = {k: [] for k in ("wall", "cpu", "one", "reads", "words")}
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        all_cores()
        runs["wall"].append(time.perf_counter() - t0)
        runs["cpu"].append(time.process_time() - c0)
        for key, fn in (("one", one_thread), ("reads", reads), ("words", words)):
            t0 = time.perf_counter()
            fn()
            runs[key].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in runs.items()}
    workers = _lanes.threads(n, n_resamples)
    return PathTimes(med["wall"], med["cpu"], med["one"], med["reads"], med["words"], workers,
                     n * n_resamples)


def describe(p: PathTimes, t_scipy: float) -> list[str]:
    rest = p.one_thread - p.reads
    return [
        f"  index path (the sums of {p.indices:,} indices): "
        f"{p.wall:.3f} s on {p.workers} thread(s), {p.cpu:.3f} s of CPU "
        f"({p.cpu / p.wall:.2f} cores busy); one thread {p.one_thread:.3f} s "
        f"(threads give {p.one_thread / p.wall:.2f}x)",
        f"  one thread: reading the values {p.reads:.3f} s (of which the stream's words "
        f"{p.words:.3f} s, Lemire's check and copies {p.reads - p.words:.3f} s), indices + "
        f"gather + add {rest:.3f} s; the budget asks {t_scipy / BUDGET_CONTINUOUS:.3f} s in all",
    ]


if __name__ == "__main__":
    main()
