"""benchmarks/bootstrap.py's account of the index path (``index_path``, ``describe``): CI runs
the script and a failure there fails the run, so its use of logbook/stats/_lanes.py is held
here, at a size that takes milliseconds."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bootstrap as bench

import logbook.stats._blocks as blocks
import logbook.stats._lanes as lanes


@pytest.fixture(autouse=True)
def _threads_at_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thread path at these tests' sizes (below THREAD_CELLS indices one thread runs)."""
    monkeypatch.setattr(lanes, "THREAD_CELLS", 0)


@pytest.mark.parametrize("cpus", [1, 2])
def test_the_index_path_account_runs_the_lanes_sums(monkeypatch: pytest.MonkeyPatch,
                                                      cpus: int) -> None:
    monkeypatch.setattr(blocks, "cores", lambda: cpus)
    d = np.random.default_rng(0).normal(size=3001)
    times = bench.index_path(d, 700, 2)
    assert times.indices == 3001 * 700
    assert times.workers == cpus  # 700 resamples of 3,001 items are several tasks
    assert min(times.wall, times.cpu, times.one_thread, times.reads, times.words) > 0
    lines = bench.describe(times, 1.0)
    assert "2,100,700 indices" in lines[0] and f"on {cpus} thread(s)" in lines[0]
    assert "the budget asks 0.100 s" in lines[1]
