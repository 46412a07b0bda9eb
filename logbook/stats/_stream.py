"""logbook's random stream: the same draws on every platform and numpy version.

numpy promises that a bit generator's raw output is stable across versions (NEP 19), but not
the algorithms its ``Generator`` methods use to turn raw bits into integers, binomials or
multinomials (those changed between releases, and with them every bootstrap digit). So the
logbook takes only raw 64-bit words from numpy and maps them with its own code, built from
integer operations and single IEEE-754 operations (+, -, *, / and comparisons, never a
transcendental function), whose results are exact on every conforming platform:

* words: ``numpy.random.PCG64(seed).random_raw()`` (the seed goes through numpy's
  ``SeedSequence``, whose algorithm is fixed), 64-bit unsigned integers, in order;
* indices in ``[0, n)``: the words read as 32-bit values (low half, then high half), each
  mapped by Lemire's multiply-and-reject method, so every index is exactly uniform;
* a uniform in ``[0, 1)`` from a word: ``(w >> 11) * 2**-53``;
* Binomial(N, q) for a batch: Binomial(min N, q) plus, for each 5-bit group h of
  N - min N, Binomial(h * 32**t, q) (a sum of independent binomials of one q is a binomial),
  every row drawing once per group. A table is the inverse CDF of Binomial(m, q) built from
  the mode outwards with the ratio pmf(k+1)/pmf(k) = (m-k)q / ((k+1)(1-q)), cut where a
  weight falls below 2**-80 of the mode's (what is cut weighs less than 1e-20), summed in
  order and normalised; the draw is the first k whose cumulative weight exceeds one uniform
  (tested in integers: ceil(cdf * 2**53) > w >> 11).

docs/statistics.md states this stream for auditors who recompute a figure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

_TWO_53 = 2.0**-53
_CUT = 2.0**-80
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_EMPTY = np.empty(0, dtype="<u4")


class Stream:
    """The draws of one seed. Not thread-safe; make one per computation."""

    def __init__(self, seed: int | None) -> None:
        self._bits = np.random.PCG64(seed)
        self._halves = _EMPTY

    def words(self, size: int) -> NDArray[np.uint64]:
        self._halves = _EMPTY  # a half-word left over by ``indices`` is skipped
        return np.asarray(self._bits.random_raw(size), dtype=np.uint64)

    def uniforms(self, size: int) -> NDArray[np.float64]:
        return (self.words(size) >> _S11).astype(np.float64) * _TWO_53

    def indices(self, n: int, size: int) -> NDArray[np.intp]:
        """``size`` indices uniform over ``[0, n)``, 1 <= n < 2**32 (Lemire's method).

        The stream is read as 32-bit values, each word's low half then its high half; a
        value v gives (v * n) >> 32 unless the low 32 bits of v * n fall below 2**32 mod n,
        when it is skipped (probability below n / 2**32). So the i-th index is always the
        i-th accepted value, however the draws are split into calls; an unused half-word
        waits for the next call.
        """
        if not 0 < n < 2**32:
            raise ValueError(f"n: must lie in [1, 2**32), got {n}")
        m = np.uint64(n)
        floor = (2**32 - n) % n  # 2**32 mod n
        v = np.multiply(self._take(size), m, dtype=np.uint64)
        if floor:
            keep = v.astype(np.uint32) >= np.uint32(floor)  # the low 32 bits of v * n
            if not keep.all():
                v = v[keep]
                while v.size < size:  # rare: read on until enough values were accepted
                    more = np.multiply(self._take(size - v.size), m, dtype=np.uint64)
                    v = np.concatenate((v, more[more.astype(np.uint32) >= np.uint32(floor)]))
        np.right_shift(v, _S32, out=v)
        return v.view(np.int64).astype(np.intp, copy=False)

    def _take(self, count: int) -> NDArray[np.uint32]:
        """The next ``count`` 32-bit values of the stream: each word's low half, then its
        high half (read as little-endian halves on every platform)."""
        held = self._halves
        if count <= held.size:
            self._halves = held[count:]
            return held[:count]
        w = np.asarray(self._bits.random_raw((count - held.size + 1) // 2), dtype=np.uint64)
        halves = w.astype("<u8", copy=False).view("<u4")
        if held.size:
            halves = np.concatenate((held, halves))
        self._halves = halves[count:].copy()  # at most one value: not a view of the block
        return halves[:count]

    def mark(self) -> Mark:
        """The stream's position, from which a ``Reader`` reads ahead (in any thread)."""
        return Mark(self._bits.state, self._halves.copy())

    def skip(self, count: int) -> None:
        """Move past the next ``count`` 32-bit values, as reading them would (a half-word left
        unused waits for the next call)."""
        held = self._halves
        if count <= held.size:
            self._halves = held[count:]
            return
        rest = count - held.size
        self._bits.advance(rest // 2)
        self._halves = _EMPTY
        if rest % 2:
            self._halves = self._take(2)[1:].copy()

    def binomial(self, trials: NDArray[np.int64], q: float) -> NDArray[np.int64]:
        """One Binomial(trials[r], q) draw per row r (trials >= 0, 0 <= q <= 1).

        Split as Binomial(b, q) + the sum over the 5-bit groups of d_r = trials[r] - b
        (b = min(trials)) of Binomial(h * 32**t, q), h the group's value: one draw for the
        base, then one per group (lowest first), every row drawing for every group (h = 0
        draws 0), so the words consumed depend only on the trials' range.
        """
        trials = np.asarray(trials, dtype=np.int64)
        if q <= 0.0 or trials.size == 0:
            return np.zeros(trials.shape, dtype=np.int64)
        if q >= 1.0:
            return trials.copy()
        base = int(trials.min())
        zero = np.zeros(trials.size, dtype=np.intp)
        out = self._draw(self._tables_of((base,), q), zero) if base else zero.astype(np.int64)
        rest = trials - base
        top, shift = int(rest.max()), 0
        while top >> shift:
            # the top group's values reach only top >> shift: its other tables are never drawn
            # from (and a table's draws do not depend on which others are built with it)
            ms = tuple(h << shift for h in range(min(1 << _GROUP, (top >> shift) + 1)))
            out += self._draw(self._tables_of(ms, q), (rest >> shift) & ((1 << _GROUP) - 1))
            shift += _GROUP
        return out

    def _draw(self, tab: _Tables, which: NDArray[np.intp]) -> NDArray[np.int64]:
        """One draw per row from table ``which[r]``: the first k whose cumulative weight
        exceeds the row's uniform u, found as the first threshold ceil(cdf * 2**53) above
        w >> 11 (the same test in integers: u = (w >> 11) * 2**-53)."""
        w53 = (self.words(which.size) >> _S11).view(np.int64)
        single = tab.lowest.size == 1  # one table: which is all 0, and its terms drop out
        key = w53 if single else which * _ROW + w53
        k = tab.guide[w53 >> tab.shift] if single else (
            tab.guide[which * tab.buckets + (w53 >> tab.shift)] + which * tab.width)
        for _ in range(2):  # the guide is a lower bound; a step or two finishes nearly all
            k += tab.thresholds[k] <= key
        bad = np.flatnonzero(tab.thresholds[k] <= key)
        if bad.size:  # many thresholds in one bucket (a far tail): search for those
            k[bad] = np.searchsorted(tab.thresholds, key[bad], side="right")
        if single:
            return (k + int(tab.lowest[0])).astype(np.int64)
        return (k - which * tab.width + tab.lowest[which]).astype(np.int64)

    def _tables_of(self, ms: tuple[int, ...], q: float) -> _Tables:
        return _tables(ms, q)


@dataclass(frozen=True)
class Mark:
    """A position in a stream: its bit generator's state and the half-word it holds."""

    state: Any  # numpy's PCG64 state (a dict)
    held: NDArray[np.uint32]


class Reader:
    """The 32-bit values after a mark, read at any offset on a bit generator of its own: the
    value ``held.size + 2k`` is word k's low half, the next its high half (``Stream._take``'s
    order), so that readers in several threads give the values one stream gives in turn.
    One per thread; reading on from where the last read stopped costs no seek."""

    def __init__(self, mark: Mark) -> None:
        self._mark = mark
        self._bits = np.random.PCG64(0)
        self._word = -1  # the word the bit generator gives next (-1: not yet placed)
        self._spare = (-1, 0)  # (value, its 32 bits): the high half of the last word read

    def fill(self, out: NDArray[np.uint32], start: int) -> None:
        """out[:] = the values start ... start + out.size - 1."""
        held, i = self._mark.held, 0
        if start < held.size:
            i = min(held.size - start, out.size)
            out[:i] = held[start : start + i]
        v = start + i - held.size  # the first value to come from words
        if i < out.size and self._spare[0] == v:
            out[i] = self._spare[1]
            i, v = i + 1, v + 1
        if i == out.size:
            return
        if v // 2 != self._word:
            self._bits.state = self._mark.state
            self._bits.advance(v // 2)
            self._word = v // 2
        rest = out.size - i
        if v % 2:  # begins with a high half: the word's low half is skipped
            out[i] = self._halves(1)[1]
            i, rest = i + 1, rest - 1
        if rest // 2:
            out[i : i + rest - rest % 2] = self._halves(rest // 2)
        if rest % 2:
            last = self._halves(1)
            out[-1] = last[0]
            self._spare = (2 * self._word - 1, int(last[1]))

    def values(self, start: int, count: int) -> NDArray[np.uint32]:
        out = np.empty(count, dtype=np.uint32)
        self.fill(out, start)
        return out

    def _halves(self, words: int) -> NDArray[np.uint32]:
        w = np.asarray(self._bits.random_raw(words), dtype=np.uint64)
        self._word += words
        return w.astype("<u8", copy=False).view("<u4")


_GROUP = 5  # bits of d per table draw: 32 stacked tables per group
_ROW = np.int64(1) << np.int64(54)  # thresholds of table t lie in [t * 2**54, t * 2**54 + 2**53]


@dataclass(frozen=True)
class _Tables:
    """Inverse-CDF tables of Binomial(m, q) for several m, stacked row by row.

    Row t holds table t over k = lowest[t] ... lowest[t] + width - 1 (padded with weight 0
    outside the weights kept, which changes no cumulative sum). thresholds[t * width + c] =
    t * 2**54 + ceil(cdf[t, c] * 2**53); guide[t * buckets + b] counts row t's thresholds
    below bucket b's start (a lower bound for any key in the bucket).
    """

    lowest: NDArray[np.int64]
    width: int
    thresholds: NDArray[np.int64]
    guide: NDArray[np.intp]
    buckets: int
    shift: int

    @staticmethod
    def build(ms: tuple[int, ...], q: float) -> _Tables:
        p = 1.0 - q
        m = np.asarray(ms, dtype=np.float64)[:, None]
        mode = np.minimum(m, np.floor((m + 1) * q))
        up = _ratios(mode, m, lambda k: np.where(k < m, ((m - k) * q) / ((k + 1.0) * p), 0.0),
                     +1, float(np.sqrt(m.max() * q * p)))
        down = _ratios(mode, m, lambda k: np.where(k >= 1, (k * p) / ((m - k + 1.0) * q), 0.0),
                       -1, float(np.sqrt(m.max() * q * p)))
        # columns no table needs (beyond every kept weight) are dropped
        down = down[:, : int(np.count_nonzero(down.any(axis=0)))]
        up = up[:, : int(np.count_nonzero(up.any(axis=0)))]
        weights = np.concatenate((down[:, ::-1], np.ones((m.size, 1)), up), axis=1)
        cdf = np.cumsum(weights, axis=1)
        cdf /= cdf[:, -1:]
        width = weights.shape[1]
        thresholds = np.ceil(cdf * 2.0**53).astype(np.int64)
        bits = max(1, int(width - 1).bit_length())  # at least one bucket per entry
        buckets = 1 << bits
        shift = 53 - bits
        rows = np.repeat(np.arange(m.size, dtype=np.int64), width)
        cells = rows * (buckets + 1) + np.minimum(thresholds.ravel() >> shift, buckets)
        counts = np.bincount(cells, minlength=m.size * (buckets + 1)).reshape(m.size, -1)
        guide = np.zeros((m.size, buckets), dtype=np.intp)
        np.cumsum(counts[:, :-2], axis=1, out=guide[:, 1:])
        thresholds += rows.reshape(m.size, width) * _ROW
        lowest = (mode[:, 0] - down.shape[1]).astype(np.int64)
        return _Tables(lowest, width, thresholds.ravel(), guide.ravel(), buckets, shift)


def _ratios(mode: NDArray[np.float64], m: NDArray[np.float64],
            ratio: Callable[[NDArray[np.float64]], NDArray[np.float64]], step: int,
            sd: float) -> NDArray[np.float64]:
    """Weights w[mode + step * (j + 1)] relative to w[mode] = 1 for j = 0, 1, ...: the
    running product of ``ratio`` from the mode, kept while at least 2**-80 (0 after)."""
    width = int(13 * sd) + 24
    while True:
        k = mode + step * np.arange(width, dtype=np.float64)[None, :]
        w = np.cumprod(ratio(k), axis=1)
        if not (w[:, -1] >= _CUT).any():
            return np.where(w >= _CUT, w, 0.0)
        width *= 2


@lru_cache(maxsize=512)
def _tables(ms: tuple[int, ...], q: float) -> _Tables:
    """``_Tables.build(ms, q)``, built once a process: a pure function of its arguments (a
    coverage simulation or an audit draws from thousands of streams with the same tables);
    the arrays are read-only, so every stream may share them."""
    tables = _Tables.build(ms, q)
    for a in (tables.lowest, tables.thresholds, tables.guide):
        a.flags.writeable = False
    return tables
