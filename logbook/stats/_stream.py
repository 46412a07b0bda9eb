"""logbook's random stream: the same draws on every platform and numpy version.

numpy promises that a bit generator's raw output is stable across versions (NEP 19), but not
the algorithms its ``Generator`` methods use to turn raw bits into integers, binomials or
multinomials (those changed between releases, and with them every bootstrap digit). So the
logbook takes only raw 64-bit words from numpy and maps them with its own code, built from
integer operations and single IEEE-754 operations (+, -, *, / and comparisons, never a
transcendental function), whose results are exact on every conforming platform:

* words: ``numpy.random.PCG64(seed).random_raw()`` (the seed goes through numpy's
  ``SeedSequence``, whose algorithm is fixed), 64-bit unsigned integers, in order;
* indices in ``[0, n)``: the words read as 32-bit values (high half, then low half), each
  mapped by Lemire's multiply-and-reject method, so every index is exactly uniform;
* a uniform in ``[0, 1)`` from a word: ``(w >> 11) * 2**-53``;
* Binomial(N, q): N written in binary, ``N = sum of 2**i`` over its set bits, and one draw
  from a fixed table of Binomial(2**i, q) for each set bit (a sum of independent binomials of
  one q is a binomial), lowest bit first. A table is the inverse CDF of Binomial(2**i, q) built
  from the mode outwards with the ratio pmf(k+1)/pmf(k) = (m-k)q / ((k+1)(1-q)), cut where a
  weight falls below 2**-80 of the mode's (so what is cut weighs less than 1e-20), summed in
  order and normalised; the draw is the first k whose cumulative weight exceeds one uniform.

docs/statistics.md states this stream for auditors who recompute a figure.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

_TWO_53 = 2.0**-53
_CUT = 2.0**-80
_LOW32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_EMPTY = np.empty(0, dtype=np.uint64)


class Stream:
    """The draws of one seed. Not thread-safe; make one per computation."""

    def __init__(self, seed: int | None) -> None:
        self._bits = np.random.PCG64(seed)
        self._halves = _EMPTY
        self._tables: dict[
            tuple[int, float], tuple[int, NDArray[np.float64], NDArray[np.intp]]
        ] = {}

    def words(self, size: int) -> NDArray[np.uint64]:
        self._halves = _EMPTY  # a half-word left over by ``indices`` is skipped
        return np.asarray(self._bits.random_raw(size), dtype=np.uint64)

    def uniforms(self, size: int) -> NDArray[np.float64]:
        return (self.words(size) >> _S11).astype(np.float64) * _TWO_53

    def indices(self, n: int, size: int) -> NDArray[np.intp]:
        """``size`` indices uniform over ``[0, n)``, 1 <= n < 2**32 (Lemire's method).

        The stream is read as 32-bit values, each word's high half then its low half; a
        value v gives (v * n) >> 32 unless the low 32 bits of v * n fall below 2**32 mod n,
        when it is skipped (probability below n / 2**32). So the i-th index is always the
        i-th accepted value, however the draws are split into calls; an unused half-word
        waits for the next call.
        """
        if not 0 < n < 2**32:
            raise ValueError(f"n: must lie in [1, 2**32), got {n}")
        m = np.uint64(n)
        floor = np.uint64((2**32 - n) % n)  # 2**32 mod n
        v = self._take(size) * m
        if floor and ((v & _LOW32) < floor).any():
            parts = [v[(v & _LOW32) >= floor]]
            have = parts[0].size
            while have < size:  # rare: read on until enough values were accepted
                more = self._take(size - have) * m
                parts.append(more[(more & _LOW32) >= floor])
                have += parts[-1].size
            v = np.concatenate(parts)
        v >>= _S32
        return v.view(np.int64).astype(np.intp, copy=False)

    def _take(self, count: int) -> NDArray[np.uint64]:
        """The next ``count`` 32-bit values of the stream (as uint64)."""
        held = self._halves
        if count <= held.size:
            self._halves = held[count:]
            return held[:count].copy()
        w = np.asarray(self._bits.random_raw((count - held.size + 1) // 2), dtype=np.uint64)
        v = np.empty(held.size + 2 * w.size, dtype=np.uint64)
        v[: held.size] = held
        np.right_shift(w, _S32, out=v[held.size :: 2])
        np.bitwise_and(w, _LOW32, out=v[held.size + 1 :: 2])
        self._halves = v[count:]
        return v[:count]

    def binomial(self, trials: NDArray[np.int64], q: float) -> NDArray[np.int64]:
        """One Binomial(trials[r], q) draw per row r (trials >= 0, 0 <= q <= 1).

        Split as Binomial(base, q) + Binomial(d_r, q) with base = min(trials) and
        d_r = trials[r] - base written in binary: one table draw for the base, then one per
        bit of d (lowest first), every row drawing a uniform for every bit and counting it
        where its bit is set, so that the words consumed depend only on the trials' range.
        """
        trials = np.asarray(trials, dtype=np.int64)
        if q <= 0.0 or trials.size == 0:
            return np.zeros(trials.shape, dtype=np.int64)
        if q >= 1.0:
            return trials.copy()
        base = int(trials.min())
        out = self._draw(base, q, trials.size) if base else np.zeros(trials.size, np.int64)
        rest = trials - base
        for i in range(int(rest.max()).bit_length()):
            out += ((rest >> i) & 1) * self._draw(1 << i, q, trials.size)
        return out

    def _draw(self, m: int, q: float, size: int) -> NDArray[np.int64]:
        """``size`` draws of Binomial(m, q): the first k whose cumulative weight exceeds u."""
        lo, cdf, guide = self._table(m, q)
        u = self.uniforms(size)
        # the guide gives, per bucket of width 1/G, how many weights lie at or below its
        # start: the answer or just below it; one step up settles nearly every draw, and the
        # few left (in a tail, where many weights share a bucket, or at a bucket's edge) are
        # searched for directly. The result is the first k with cdf[k] > u in every case.
        k = guide[(u * (guide.size - 1)).astype(np.intp)]
        k += cdf[k] <= u
        bad = np.flatnonzero((cdf[k] <= u) | ((k > 0) & (cdf[k - 1] > u)))
        if bad.size:
            k[bad] = np.searchsorted(cdf, u[bad], side="right")
        return k + lo

    def _table(
        self, m: int, q: float
    ) -> tuple[int, NDArray[np.float64], NDArray[np.intp]]:
        """(lowest k, cumulative weights normalised to end at 1, guide) of Binomial(m, q)."""
        key = (m, q)
        hit = self._tables.get(key)
        if hit is not None:
            return hit
        p = 1.0 - q
        mode = min(m, int((m + 1) * q))
        # upwards: w[k+1] = w[k] * (m-k) q / ((k+1) p), from w[mode] = 1
        k = np.arange(mode, m, dtype=np.float64)
        up = np.cumprod(((m - k) * q) / ((k + 1.0) * p))
        up = up[: int(np.searchsorted(-up, -_CUT, side="right"))]
        # downwards: w[k-1] = w[k] * k p / ((m-k+1) q)
        k = np.arange(mode, 0, -1, dtype=np.float64)
        down = np.cumprod((k * p) / ((m - k + 1.0) * q))
        down = down[: int(np.searchsorted(-down, -_CUT, side="right"))]
        weights = np.concatenate((down[::-1], np.ones(1), up))
        cdf = np.cumsum(weights)
        cdf /= cdf[-1]
        buckets = 2 * cdf.size
        guide = np.searchsorted(cdf, np.arange(buckets + 1) / buckets, side="right")
        table = (mode - down.size, cdf, np.minimum(guide, cdf.size - 1))
        self._tables[key] = table
        return table
