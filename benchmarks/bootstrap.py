"""Speed budget for the paired bootstrap: logbook.stats.paired vs scipy.stats.bootstrap.

10,000 resamples over 10,000 items with binary outcomes, percentile interval on both sides.
Prints the speed ratio (scipy time / ours) against the budget of >= 20x and both intervals,
and checks the endpoints agree within the Monte Carlo tolerance. Always exits 0: CI reports
the figure, it does not fail on it.

Run: python benchmarks/bootstrap.py
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats
from scipy.special import ndtri

from logbook.stats import paired

N_ITEMS = 10_000
N_RESAMPLES = 10_000
CONFIDENCE = 0.95
BUDGET = 20.0
REPEATS = 5  # ours is timed best-of-REPEATS; scipy (seconds per call) once


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two systems on the same items: b agrees with a except on ~12% of items."""
    rng = np.random.default_rng(seed)
    a = (rng.random(N_ITEMS) < 0.70).astype(np.float64)
    flip = rng.random(N_ITEMS) < 0.12
    b = np.where(flip, (rng.random(N_ITEMS) < 0.75).astype(np.float64), a)
    return a, b


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


def compare(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float, float]:
    """Time both on the same data; returns ratio, endpoint gap, tolerance and the times."""
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        ours = paired(
            a, b, n_resamples=N_RESAMPLES, confidence=CONFIDENCE, bootstrap_method="percentile"
        )
        times.append(time.perf_counter() - t0)
    t_ours = min(times)

    t0 = time.perf_counter()
    ref = stats.bootstrap(
        (a, b),
        statistic=lambda x, y, axis: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=N_RESAMPLES,
        confidence_level=CONFIDENCE,
        rng=np.random.default_rng(0),
    )
    t_scipy = time.perf_counter() - t0
    lo_s, hi_s = float(ref.confidence_interval.low), float(ref.confidence_interval.high)
    gap = max(abs(ours.low - lo_s), abs(ours.high - hi_s))
    compare.last = (ours.low, ours.high, lo_s, hi_s, ours.point)  # type: ignore[attr-defined]
    return t_scipy / t_ours, gap, mc_tolerance(ours.se or 0.0), t_ours, t_scipy


def main() -> None:
    a, b = make_data()
    ratio, gap, tol, t_ours, t_scipy = compare(a, b)
    lo, hi, lo_s, hi_s, point = compare.last  # type: ignore[attr-defined]
    status = "ok" if ratio >= BUDGET else "UNDER BUDGET"
    print(
        f"bootstrap: ratio {ratio:.1f}x (budget >= {BUDGET:.0f}x, {status}) "
        f"ours [{lo:+.4f}, {hi:+.4f}] scipy [{lo_s:+.4f}, {hi_s:+.4f}]"
    )
    print(
        f"  binary: n={N_ITEMS} items, {N_RESAMPLES} resamples; ours {t_ours * 1e3:.1f} ms "
        f"(best of {REPEATS}), scipy {t_scipy:.2f} s; effect {point:+.4f}; max endpoint gap "
        f"{gap:.5f} {'within' if gap <= tol else 'OUTSIDE'} MC tolerance {tol:.5f}"
    )
    # For information (no budget): continuous scores take the general chunked-index path.
    rng = np.random.default_rng(1)
    a = rng.random(N_ITEMS)
    b = np.clip(a + rng.normal(0.01, 0.1, N_ITEMS), 0.0, 1.0)
    ratio, gap, tol, t_ours, t_scipy = compare(a, b)
    print(
        f"  continuous (info, general path): ratio {ratio:.1f}x; ours {t_ours:.2f} s, "
        f"scipy {t_scipy:.2f} s; max endpoint gap {gap:.5f} "
        f"{'within' if gap <= tol else 'OUTSIDE'} MC tolerance {tol:.5f}"
    )


if __name__ == "__main__":
    main()
