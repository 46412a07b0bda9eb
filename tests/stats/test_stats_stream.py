"""The logbook's random stream (docs/statistics.md, "The random stream"): the same draws on
every platform and numpy version, exactly the documented rules, and the right laws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from logbook.stats import bootstrap, paired
from logbook.stats._multinomial import multinomial_counts
from logbook.stats._stream import Stream, _Tables

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
        self.half = w >> 32
        return w & 0xFFFFFFFF

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


def _first_above(cdf: list[float], lo: int, u: float) -> int:
    return lo + next(i for i, c in enumerate(cdf) if c > u)


@pytest.mark.parametrize("q", [0.3, 0.013, 0.97, 0.5])
def test_stacked_tables_are_the_documented_tables(q: float) -> None:
    # the tables a draw uses are built many at once; each must be the documented table
    for ms in [(1,), (7,), (64,), (1000,), (4096,), tuple(h << 5 for h in range(32)),
               tuple(range(32))]:
        tab = _Tables.build(ms, q)
        for t, m in enumerate(ms):
            ref_lo, ref_cdf = _reference_binomial_table(m, q)
            row = tab.thresholds[t * tab.width:(t + 1) * tab.width] - t * 2**54
            offset = ref_lo - int(tab.lowest[t])
            kept = row[offset:offset + len(ref_cdf)]
            assert kept.tolist() == [math.ceil(c * 2**53) for c in ref_cdf], (m, q)
            assert (row[:offset] == 0).all() and (row[offset + len(ref_cdf):] == 2**53).all()


def test_a_draw_is_the_first_cumulative_weight_above_the_uniform() -> None:
    ms = tuple(h << 5 for h in range(32))
    which = Stream(4).indices(32, 3000)
    got = Stream(3)._draw(_Tables.build(ms, 0.37), which)
    ref = _Reference(3)
    tables = [_reference_binomial_table(m, 0.37) for m in ms]
    want = [_first_above(tables[t][1], tables[t][0], ref.uniform()) for t in which.tolist()]
    assert got.tolist() == want


def test_binomial_splits_trials_into_a_base_and_five_bit_groups() -> None:
    trials = np.array([50, 1100, 97, 50, 400, 1123], dtype=np.int64)  # base 50, d up to 1073
    got = Stream(8).binomial(trials, 0.4)
    ref = _Reference(8)
    base = _reference_binomial_table(50, 0.4)
    want = [_first_above(base[1], base[0], ref.uniform()) for _ in trials]
    rest = (trials - 50).tolist()
    for shift in (0, 5, 10):  # 1073 needs three groups of five bits
        for r, d in enumerate(rest):
            m = ((d >> shift) & 31) << shift
            table = _reference_binomial_table(m, 0.4) if m else (0, [1.0])
            want[r] += _first_above(table[1], table[0], ref.uniform())
    assert got.tolist() == want


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


PINNED_COUNTS = [[5, 45, 500, 24, 1], [2, 49, 482, 40, 2], [1, 42, 504, 27, 1],
                 [1, 44, 496, 34, 0]]


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
    ("0x1.2c69bb3a2622bp+0", "0x1.cb0406efbffc0p+0"),
    ("-0x1.ae147ae147ae1p-4", "0x1.999999999999ap-4"),
]

