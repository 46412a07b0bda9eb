"""Writing behind reading (logbook.exports.behind), which the CSV and Parquet exports write
through: blocks are written in the order given, a failure of the writing is raised in the
caller as it was raised (so a full disk is still exit 3), and nothing is written after a
failure on either side."""

from __future__ import annotations

import threading
import time

import pytest

from logbook.errors import EnvironmentProblem
from logbook.exports.behind import writing_behind


def test_blocks_are_written_in_order_on_another_thread() -> None:
    written: list[int] = []
    threads: set[str] = set()

    def write(block: int) -> None:
        time.sleep(0.001 * (block % 3))  # uneven, as real writes are
        threads.add(threading.current_thread().name)
        written.append(block)

    with writing_behind(write, depth=2) as behind:
        for block in range(50):
            behind.put(block)
    assert written == list(range(50))
    assert threading.current_thread().name not in threads


def test_a_failed_write_is_raised_in_the_caller_and_the_rest_is_not_written() -> None:
    written: list[int] = []

    def write(block: int) -> None:
        if block == 3:
            raise EnvironmentProblem("--out x cannot be written: the disk is full")
        written.append(block)

    with pytest.raises(EnvironmentProblem, match="disk is full"), \
            writing_behind(write, depth=1) as behind:
        for block in range(10):
            behind.put(block)
    assert written == [0, 1, 2]


def test_a_failure_of_the_caller_stops_the_writing() -> None:
    written: list[int] = []

    def write(block: int) -> None:
        time.sleep(0.3)  # the first block is still being written when the caller fails
        written.append(block)

    with pytest.raises(ValueError, match="bad run"), \
            writing_behind(write, depth=3) as behind:
        behind.put(0)
        behind.put(1)
        behind.put(2)
        raise ValueError("bad run")
    assert written in ([], [0])  # what was still queued is dropped, not written
    assert not [t for t in threading.enumerate() if t.name == "logbook-export-writer"]
