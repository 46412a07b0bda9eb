"""The bootstrap's index path in cache-sized blocks (logbook/stats/_blocks.py): whatever the
block, segment, lane and draw sizes, and with or without the drawing thread, every resample
is the documented one (indices r*n ... r*n + n-1 of the stream) summed left to right; and the
path (counts or indices) is chosen by cost, never by a count of distinct values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import logbook.stats._blocks as blocks
import logbook.stats._exact as exact
import logbook.stats._lanes as lanes
import logbook.stats.resampling as resampling
from logbook.stats import bootstrap, paired
from logbook.stats._exact import column_sums, lane_sums, row_sums
from logbook.stats._stream import Stream


def _reference(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The definition: all indices in one call, each row summed left to right."""
    n = x.size
    idx = Stream(seed).indices(n, n_resamples * n).reshape(n_resamples, n)
    return row_sums(x[idx])


SIZES = [(2, 1), (3, 5), (97, 130), (1000, 67), (5000, 9), (70_001, 3)]


@pytest.mark.parametrize("n,n_resamples", SIZES)
def test_block_sums_are_the_sequential_sums_of_the_documented_resamples(
        n: int, n_resamples: int) -> None:
    x = np.random.default_rng(n).normal(size=n) * 10.0 ** np.random.default_rng(1).integers(
        -8, 8, size=n)  # magnitudes far apart: any other order of addition shows
    got = blocks.resample(n, n_resamples, Stream(7), blocks.sums_of(x))
    assert np.array_equal(got, _reference(x, n_resamples, 7))


@pytest.mark.parametrize("draw,segment,lanes,pipeline", [
    (1, 1, 2, 1), (7, 13, 3, 1), (64, 5, 64, 2), (1 << 16, 1 << 16, 64, 10**9),
    (1000, 97, 1, 1)])
def test_no_block_layout_and_no_thread_changes_a_digit(
        monkeypatch: pytest.MonkeyPatch, draw: int, segment: int, lanes: int,
        pipeline: int) -> None:
    x = np.random.default_rng(3).random(211) ** 3
    want = _reference(x, 150, 11)
    monkeypatch.setattr(blocks, "DRAW_CELLS", draw)
    monkeypatch.setattr(blocks, "SEGMENT_CELLS", segment)
    monkeypatch.setattr(blocks, "LANES", lanes)
    monkeypatch.setattr(blocks, "PIPELINE_BLOCKS", pipeline)
    for cpus in (1, 2):  # the drawing thread off, then on
        monkeypatch.setattr(blocks, "cores", lambda cpus=cpus: cpus)
        assert np.array_equal(blocks.resample(x.size, 150, Stream(11), blocks.sums_of(x)),
                              want)


def test_the_threaded_path_gives_the_same_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    a = np.random.default_rng(4).random(3000)
    b = np.clip(a + np.random.default_rng(5).normal(0.01, 0.1, 3000), 0, 1)
    monkeypatch.setattr(blocks, "cores", lambda: 1)
    alone = paired(a, b, n_resamples=2000)
    monkeypatch.setattr(blocks, "cores", lambda: 2)
    monkeypatch.setattr(blocks, "PIPELINE_BLOCKS", 2)
    assert paired(a, b, n_resamples=2000) == alone


def test_lane_sums_add_each_column_top_to_bottom(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    for shape in [(1, 1), (2001, 1), (5, 2), (2001, 3), (300, 64), (17, 257)]:
        m = rng.normal(size=shape) * 10.0 ** rng.integers(-12, 12, size=shape)
        assert np.array_equal(lane_sums(m), column_sums(m)), shape
        monkeypatch.setattr(exact, "_SEQUENTIAL", [False])  # as if numpy summed otherwise
        assert np.array_equal(lane_sums(m), column_sums(m)), shape
        monkeypatch.setattr(exact, "_SEQUENTIAL", [])


def test_the_probe_tells_sequential_from_pairwise_sums() -> None:
    col = np.full(2001, 2.0**-53)
    col[0] = 1.0
    assert np.add.reduce(col) != 1.0  # numpy sums a contiguous axis pairwise: the probe sees it
    assert exact._reduce_is_sequential()


def _path(monkeypatch: pytest.MonkeyPatch, values: np.ndarray) -> str:
    """Which path the mean's bootstrap takes (the real functions, wrapped to record)."""
    taken: list[str] = []
    counts_draw, index_draw = resampling.multinomial_counts, resampling.resample_sums
    monkeypatch.setattr(resampling, "multinomial_counts",
                        lambda *a: taken.append("counts") or counts_draw(*a))
    monkeypatch.setattr(resampling, "resample_sums",
                        lambda *a: taken.append("indices") or index_draw(*a))
    bootstrap(values, n_resamples=50)
    return taken[0]


def test_the_path_is_chosen_by_cost_not_by_the_number_of_distinct_values(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 200 distinct values over 100,000 items (500 each): past any cap of 64 values, but
    # counts over 200 values cost far less than drawing 100,000 items per resample
    many_items = np.repeat(np.arange(200) / 200, 500)
    assert _path(monkeypatch, many_items) == "counts"
    # 200 distinct values over 400 items: drawing the items is cheaper
    few_items = np.repeat(np.arange(200) / 200, 2)
    assert _path(monkeypatch, few_items) == "indices"
    # binary scores: counts, whatever n
    assert _path(monkeypatch, (np.arange(1000) % 3 == 0).astype(float)) == "counts"


def test_the_statistics_doc_states_the_constants_the_code_uses() -> None:
    from pathlib import Path

    from logbook.stats import _multinomial as mm

    doc = " ".join((Path(__file__).parents[2] / "docs" / "statistics.md").read_text().split())
    assert (mm.LEVEL_NS, mm.RARE_NS, mm.INDEX_NS, mm.RARE) == (800.0, 10.0, 40.0, 25)
    for text in ("800 ns per common value", "10 ns per rare item", "below 40 ns per item",
                 "fewer than 25 items"):
        assert text in doc, text
    assert (blocks.LANES, blocks.DRAW_CELLS, blocks.SEGMENT_CELLS) == (64, 65536, 65536)
    assert blocks.MAX_BLOCK_CELLS == 1 << 20 and blocks.PIPELINE_BLOCKS == 4
    for text in ("blocks of up to 64 resamples", "in calls of 65,536", "at least four blocks",
                 "(at most about a million indices)"):
        assert text in doc, text
    assert (lanes.TASK_LANES, lanes.TASK_CELLS, lanes.READ_CELLS, lanes.SUM_CELLS,
            lanes.MAX_THREADS) == (256, 1 << 21, 1 << 18, 1 << 18, 8)
    for text in ("tasks of up to 256 resamples", "at most about two million indices",
                 "from the stream 262,144 at a time", "sums them 262,144 values at a time",
                 "one per core, at most 8"):
        assert text in doc, text


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 3000).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, 2**32 - 1), st.integers(-40, 40), st.integers(0, 60),
    st.sampled_from(["normal", "lattice", "centred", "binary", "signed zeros", "extreme"]))))
def test_xsum_is_fsum_to_the_last_bit(case: tuple[int, int, int, int, str]) -> None:
    n, seed, shift, spread, shape = case
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n) * 2.0 ** (shift + rng.integers(-spread, spread + 1, size=n))
    if shape == "lattice":
        x = np.round(x, 2)
    elif shape == "centred":
        x = x - x.mean()  # heavy cancellation
    elif shape == "binary":
        x = (x > 0).astype(float)
    elif shape == "signed zeros":
        x = np.where(x > 0, -0.0, x * 0.0)
    elif shape == "extreme":
        x[rng.integers(0, n)] = rng.choice([1e300, -1e300, 5e-324, 1e-310, np.inf])
    want = math.fsum(x.tolist())
    got = exact.xsum(x)
    assert got == want or (math.isnan(got) and math.isnan(want))
    assert math.copysign(1.0, got) == math.copysign(1.0, want)


def test_xsum_takes_the_extraction_on_large_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(2).random(100_000) ** 5
    assert exact.xsum(x) == math.fsum(x.tolist())
    monkeypatch.setattr(exact, "_EXTRACT_MIN", 1)
    y = np.array([1.0] + [2.0**-53] * 2000)  # in order: 1; pairwise: more; exactly: more
    assert exact.xsum(y) == math.fsum(y.tolist()) == 1.0 + 2000 * 2.0**-53
