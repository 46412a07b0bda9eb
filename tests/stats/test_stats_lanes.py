"""The mean's index path on every core (logbook/stats/_lanes.py, ``resample_sums``): whatever
the task size, the thread count, the read and sum steps and the slack, every resample is the
documented one (indices r*n ... r*n + n-1 of the stream) summed left to right, and the stream
goes on exactly where those indices end."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import logbook.stats._blocks as blocks
import logbook.stats._lanes as lanes
from logbook.stats import bootstrap, paired
from logbook.stats._exact import row_sums
from logbook.stats._stream import Reader, Stream


@pytest.fixture(autouse=True)
def _threads_at_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread path at these tests' sizes (below THREAD_CELLS indices one thread runs)."""
    monkeypatch.setattr(lanes, "THREAD_CELLS", 0)


def _reference(x: np.ndarray, n_resamples: int, stream: Stream) -> np.ndarray:
    """The definition: all indices in one call, each row summed left to right."""
    n = x.size
    idx = stream.indices(n, n_resamples * n).reshape(n_resamples, n)
    return row_sums(x[idx])


def _spread(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)  # magnitudes far apart: any other order of addition shows
    return rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, size=n)


def _rejections(n: int, values: int, seed: int) -> int:
    """How many of the stream's first ``values`` 32-bit values Lemire's method rejects."""
    v = np.random.PCG64(seed).random_raw((values + 1) // 2).view("<u4")[:values]
    return int(np.count_nonzero(np.multiply(v, np.uint32(n)) < np.uint32((2**32 - n) % n)))


N_REJECTING = 79_300  # 2**32 mod n = 79,296: about one value in 54,000 is rejected


@pytest.mark.parametrize("n,n_resamples", [
    (2, 1), (2, 2), (3, 5), (97, 130), (1000, 257), (5000, 9), (70_001, 3), (10_000, 210)])
def test_the_sums_are_the_sequential_sums_of_the_documented_resamples(
        n: int, n_resamples: int) -> None:
    x, y = _spread(n), _spread(n, 1)
    got = lanes.resample_sums([x, y], n_resamples, Stream(7))
    assert np.array_equal(got[0], _reference(x, n_resamples, Stream(7)))
    assert np.array_equal(got[1], _reference(y, n_resamples, Stream(7)))


@pytest.mark.parametrize("cpus", [1, 2, 3, 5])
@pytest.mark.parametrize("per_task,read,cells,slack", [
    (2, 1 << 16, 1 << 16, 64), (3, 1000, 7, 0), (7, 79_301, 1 << 10, 1), (256, 333, 1, 5)])
def test_no_thread_count_task_size_or_step_changes_a_digit(
        monkeypatch: pytest.MonkeyPatch, cpus: int, per_task: int, read: int, cells: int,
        slack: int) -> None:
    n, n_resamples = N_REJECTING, 23
    assert _rejections(n, n * n_resamples, 3) > 10  # the rejections are exercised
    x = _spread(n, 2)
    want = _reference(x, n_resamples, Stream(3))
    monkeypatch.setattr(blocks, "cores", lambda: cpus)
    monkeypatch.setattr(lanes, "TASK_LANES", per_task)
    monkeypatch.setattr(lanes, "READ_CELLS", read)
    monkeypatch.setattr(lanes, "SUM_CELLS", cells)
    monkeypatch.setattr(lanes, "SLACK", slack)
    assert np.array_equal(lanes.resample_sums([x], n_resamples, Stream(3))[0], want)


def test_the_digits_do_not_depend_on_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    a = np.random.default_rng(4).random(3000)
    b = np.clip(a + np.random.default_rng(5).normal(0.01, 0.1, 3000), 0, 1)
    figures = []
    for cpus in (1, 2, 4):
        monkeypatch.setattr(blocks, "cores", lambda cpus=cpus: cpus)
        monkeypatch.setattr(lanes, "TASK_LANES", 16)  # many tasks: every thread takes some
        figures.append((paired(a, b, n_resamples=2000),
                        bootstrap(a, clusters=np.arange(3000) // 7, n_resamples=500)))
    assert figures[0] == figures[1] == figures[2]


@pytest.mark.parametrize("before", [0, 1, 2, 5])
def test_the_stream_goes_on_where_the_resamples_stopped(before: int) -> None:
    # ``before`` values drawn first: an odd count leaves a half-word held for the resamples
    n = N_REJECTING
    ours, ref = Stream(11), Stream(11)
    ours.indices(5, before)
    ref.indices(5, before)
    x = _spread(n, 3)
    assert np.array_equal(lanes.resample_sums([x], 9, ours)[0], _reference(x, 9, ref))
    assert np.array_equal(ours.indices(7, 3), ref.indices(7, 3))  # values, then half-words
    assert np.array_equal(ours.uniforms(4), ref.uniforms(4))  # words


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_task_reads_on_when_its_slack_is_short(monkeypatch: pytest.MonkeyPatch,
                                                  cpus: int) -> None:
    # no slack: every task with a rejection reads on past its share
    n, n_resamples = N_REJECTING, 30
    monkeypatch.setattr(blocks, "cores", lambda: cpus)
    monkeypatch.setattr(lanes, "SLACK", 0)
    monkeypatch.setattr(lanes, "SLACK_SHARE", 0.0)
    monkeypatch.setattr(lanes, "TASK_LANES", 4)
    reads: list[int] = []
    real = Reader.values
    monkeypatch.setattr(Reader, "values",
                        lambda self, start, count: reads.append(count) or real(self, start, count))
    x = _spread(n, 5)
    assert np.array_equal(lanes.resample_sums([x], n_resamples, Stream(6))[0],
                          _reference(x, n_resamples, Stream(6)))
    assert reads  # the read-on path ran


def test_a_rejection_inside_a_lane_packs_that_lane_only(monkeypatch: pytest.MonkeyPatch) -> None:
    n, n_resamples = N_REJECTING, 40
    monkeypatch.setattr(blocks, "cores", lambda: 1)
    monkeypatch.setattr(lanes, "TASK_LANES", 20)
    monkeypatch.setattr(lanes, "TASK_CELLS", 20 * n)
    packed: list[int] = []
    real = lanes._Worker.pieces

    def pieces(self: lanes._Worker, *a: object) -> list[tuple[int, np.ndarray]]:
        out = real(self, *a)  # type: ignore[arg-type]
        packed.extend(lane for lane, values in out if values.base is self.packed)
        return out

    monkeypatch.setattr(lanes._Worker, "pieces", pieces)
    x = _spread(n, 4)
    assert np.array_equal(lanes.resample_sums([x], n_resamples, Stream(8))[0],
                          _reference(x, n_resamples, Stream(8)))
    assert 0 < len(packed) <= _rejections(n, n * n_resamples + 200, 8)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 1), st.lists(st.tuples(st.integers(0, 300), st.integers(0, 40)),
                                   min_size=1, max_size=8))
def test_a_reader_gives_the_streams_values_at_any_offset(
        held: int, reads: list[tuple[int, int]]) -> None:
    halves = np.random.PCG64(5).random_raw(200).view("<u4")
    stream = Stream(5)
    stream.indices(2**31, held)  # one value read: its word's high half is held
    reader = Reader(stream.mark())
    for start, count in reads:
        assert reader.values(start, count).tolist() == halves[held + start:][:count].tolist()


def test_a_failing_task_stops_every_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocks, "cores", lambda: 2)
    monkeypatch.setattr(lanes, "TASK_LANES", 2)
    real = lanes._Worker.sums

    def sums(self: lanes._Worker, pieces: list, start: int, m: int) -> None:
        if start == 6:
            raise RuntimeError("task 3 failed")
        real(self, pieces, start, m)

    monkeypatch.setattr(lanes._Worker, "sums", sums)
    with pytest.raises(RuntimeError, match="task 3 failed"):
        lanes.resample_sums([np.arange(50.0)], 40, Stream(0))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([2, 3, 31, 500, 2048, N_REJECTING]), st.integers(1, 40),
       st.integers(1, 4), st.integers(2, 50), st.integers(1, 1 << 16), st.integers(1, 1 << 16),
       st.integers(0, 2))
def test_any_layout_on_any_thread_count_gives_the_definitions_digits(
        n: int, n_resamples: int, cpus: int, per_task: int, read: int, cells: int,
        seed: int) -> None:
    # the mean's gather runs with mode="wrap": every index is below n, so the values are the
    # definition's; a rejection or a task boundary anywhere in a lane changes no digit either
    x = _spread(n, seed)
    want = _reference(x, n_resamples, Stream(seed))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocks, "cores", lambda: cpus)
        mp.setattr(lanes, "TASK_LANES", per_task)
        mp.setattr(lanes, "READ_CELLS", read)
        mp.setattr(lanes, "SUM_CELLS", cells)
        assert np.array_equal(lanes.resample_sums([x], n_resamples, Stream(seed))[0], want)


def test_a_small_bootstrap_runs_on_one_thread_with_the_same_digits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lanes, "THREAD_CELLS", 1 << 22)
    monkeypatch.setattr(blocks, "cores", lambda: 2)
    assert lanes.threads(1000, 2000) == 1  # 2M indices: starting threads costs more
    assert lanes.threads(10_000, 1000) == 2
    x = _spread(1000, 6)
    alone = lanes.resample_sums([x], 2000, Stream(9))[0]
    monkeypatch.setattr(lanes, "THREAD_CELLS", 0)
    assert lanes.threads(1000, 2000) == 2
    assert np.array_equal(lanes.resample_sums([x], 2000, Stream(9))[0], alone)
