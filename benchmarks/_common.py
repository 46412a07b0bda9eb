"""Shared helpers for the benchmark scripts: timing and printing a ratio against a peer."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def paired_medians(ours: Callable[[], object], peer: Callable[[], object],
                   repeat: int = 7) -> tuple[float, float]:
    """Median times of ``ours`` and ``peer``, run alternately after one untimed run of each,
    so that both see the same warm caches and the same drift in machine load."""
    ours()
    peer()
    a, b = [], []
    for _ in range(repeat):
        for fn, times in ((ours, a), (peer, b)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return statistics.median(a), statistics.median(b)


def run_checked(args: list[str], **kw: object) -> None:
    r = subprocess.run(args, capture_output=True, **kw)  # type: ignore[call-overload]
    if r.returncode != 0:
        raise SystemExit(f"benchmark step failed: {' '.join(args)}\n{r.stderr.decode()}")


def report(name: str, ratio: float, budget: str, detail: str) -> None:
    print(f"{name}: ratio {ratio:.2f} (budget {budget}); {detail}", flush=True)
