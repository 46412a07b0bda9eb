"""The logbook's random stream (docs/statistics.md, "The random stream"): the same draws on
every platform and numpy version, exactly the documented rules, and the right laws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from logbook.stats import bootstrap, paired
from logbook.stats._multinomial import multinomial_counts
from logbook.stats._stream import Stream

# --- an independent implementation of the documented rules, in plain Python integers -------


class _Reference:
    def __init__(self, seed: int) -> None:
        self.words = iter(int(w) for w in np.random.PCG64(seed).random_raw(1 << 16))
        self.half: int | None = None

    def value32(self) -> int:
        if self.half is not None:
            v, self.half = self.half, None
            return v
        w = next(self.words)
        self.half = w & 0xFFFFFFFF
        return w >> 32

    def index(self, n: int) -> int:
        while True:
            p = self.value32() * n
            if p & 0xFFFFFFFF >= (2**32 - n) % n:
                return p >> 32

    def uniform(self) -> float:
        self.half = None
        return (next(self.words) >> 11) / 2**53


def test_indices_follow_the_documented_rule() -> None:
    for n in (1, 2, 7, 200, 3 * 2**30 + 5, 2**32 - 1):  # the last two reject often
        ref = _Reference(42)
        want = [ref.index(n) for _ in range(3001)]
        s = Stream(42)
        got = np.concatenate([s.indices(n, 1), s.indices(n, 1000), s.indices(n, 2000)])
        assert got.tolist() == want, n


def test_uniforms_follow_the_documented_rule() -> None:
    ref = _Reference(9)
    assert Stream(9).uniforms(500).tolist() == [ref.uniform() for _ in range(500)]


def _reference_binomial_table(m: int, q: float) -> tuple[int, list[float]]:
    # the documented construction, one float operation at a time
    p = 1.0 - q
    mode = min(m, int((m + 1) * q))
    up, w = [], 1.0
    for k in range(mode, m):
        w *= ((m - k) * q) / ((k + 1) * p)
        if w < 2.0**-80:
            break
        up.append(w)
    down, w = [], 1.0
    for k in range(mode, 0, -1):
        w *= (k * p) / ((m - k + 1) * q)
        if w < 2.0**-80:
            break
        down.append(w)
    weights = [*down[::-1], 1.0, *up]
    cdf, total = [], 0.0
    for x in weights:
        total += x
        cdf.append(total)
    return mode - len(down), [c / total for c in cdf]


@pytest.mark.parametrize(("m", "q"), [(1, 0.3), (64, 0.5), (1000, 0.013), (4096, 0.97)])
def test_binomial_tables_follow_the_documented_rule(m: int, q: float) -> None:
    lo, cdf, _ = Stream(0)._table(m, q)
    ref_lo, ref_cdf = _reference_binomial_table(m, q)
    assert lo == ref_lo and cdf.tolist() == ref_cdf
    # and a draw is the first k whose cumulative weight exceeds the uniform
    s, ref = Stream(3), _Reference(3)
    got = s._draw(m, q, 2000)
    want = []
    for _ in range(2000):
        u = ref.uniform()
        want.append(ref_lo + next(i for i, c in enumerate(ref_cdf) if c > u))
    assert got.tolist() == want


def test_binomial_splits_trials_by_their_bits() -> None:
    trials = np.array([5, 9, 12, 5, 8], dtype=np.int64)  # min 5, rest 0..7: bits 0, 1, 2
    s, t = Stream(8), Stream(8)
    got = s.binomial(trials, 0.4)
    base = t._draw(5, 0.4, 5)
    rest = trials - 5
    want = base + sum(((rest >> i) & 1) * t._draw(1 << i, 0.4, 5) for i in range(3))
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize(("n", "q"), [(37, 0.3), (1000, 0.01), (513, 0.5), (20_000, 0.9)])
def test_binomial_draws_follow_the_binomial_law(n: int, q: float) -> None:
    # chi-square over cells with at least 5 expected draws; at p = 1e-6 a true law fails
    # one time in a million
    draws = Stream(1).binomial(np.full(200_000, n, dtype=np.int64), q)
    obs = np.bincount(draws, minlength=n + 1)
    exp = sps.binom.pmf(np.arange(n + 1), n, q) * draws.size
    keep = exp >= 5
    chi2 = float((((obs - exp) ** 2)[keep] / exp[keep]).sum())
    assert sps.chi2.sf(chi2, int(keep.sum()) - 1) > 1e-6, chi2


def test_binomial_with_varying_trials_has_the_binomial_moments() -> None:
    trials = Stream(2).indices(400, 200_000).astype(np.int64) + 900
    draws = Stream(3).binomial(trials, 0.37)
    z = (draws - trials * 0.37) / np.sqrt(trials * 0.37 * 0.63)
    assert abs(z.mean()) < 5 / math.sqrt(z.size)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / z.size)


def test_indices_are_uniform() -> None:
    for n in (7, 3 * 2**30 + 5):
        cells = Stream(5).indices(n, 700_000) * 7 // n
        exp = 100_000
        chi2 = float(((np.bincount(cells, minlength=7) - exp) ** 2).sum() / exp)
        assert sps.chi2.sf(chi2, 6) > 1e-6, (n, chi2)


def test_multinomial_counts_pin() -> None:
    # Pinned draws: these digits must be the same on every platform and numpy version that
    # the project supports (CI runs this file under the oldest and the newest numpy).
    counts = np.array([3, 40, 500, 30, 2], dtype=np.int64)
    draws = multinomial_counts(counts, 4, Stream(0), 4_000_000)
    assert (draws.sum(axis=1) == counts.sum()).all()
    assert draws.tolist() == PINNED_COUNTS


PINNED_COUNTS = [[4, 45, 484, 40, 2], [3, 48, 487, 36, 1], [1, 41, 505, 27, 1],
                 [1, 44, 503, 27, 0]]


def test_report_figures_pin() -> None:
    # One bootstrap of each path, pinned to its last digit (see test_multinomial_counts_pin).
    binary = (np.arange(200) % 7 < 5).astype(float)
    cont = np.array([math.sin(i * 1.3) + i / 50 for i in range(150)])
    figures = [
        bootstrap(binary, n_resamples=2000),
        bootstrap(cont, n_resamples=2000),
        bootstrap(cont, clusters=[i // 5 for i in range(150)], n_resamples=2000),
        paired(binary, np.roll(binary, 3)),
    ]
    got = [(f.low.hex(), f.high.hex()) for f in figures]
    assert got == PINNED_FIGURES


PINNED_FIGURES = [
    ("0x1.4f5c28f5c28f6p-1", "0x1.8f5c28f5c28f6p-1"),
    ("0x1.521fb874acd30p+0", "0x1.ab727ca1490d8p+0"),
    ("0x1.2c69bb3a2622bp+0", "0x1.cb0406efbffbfp+0"),
    ("-0x1.ae147ae147ae1p-4", "0x1.ae147ae147ae1p-4"),
]

