"""Coverage of every interval the report uses (issue 15): nominal 95% intervals against known
truths at n in {30, 100, 1000} and p in {0.05, 0.5, 0.9}; and (issue 33) the paired effect's
interval on ledgers with persistent item difficulty, run shifts, missing rates that vary by
run and clusters, with the wrong-verdict rate of each scenario.

Prints the tables of `python -m logbook.stats.coverage` and
`python -m logbook.stats.effect_coverage`: where a method is meant to work its coverage must
lie in 93.5-96.5% (Clopper-Pearson: at least 95%); the slow tests
tests/stats/test_stats_coverage.py and tests/stats/test_stats_effect_coverage.py hold those
bounds at the same fixed seeds. This script never fails the build (it prints)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor

from logbook.stats import coverage, effect_coverage


def main() -> None:
    start = time.perf_counter()
    # the cells on every core: each draws from a stream of its own, so the table is the one
    # `python -m logbook.stats.coverage` prints in one process
    with ProcessPoolExecutor(max_workers=len(os.sched_getaffinity(0))) as pool:
        status = coverage.main([], cells_map=pool.map)
        print(f"coverage table in {time.perf_counter() - start:.0f} s; "
              f"{'every cell within its bounds' if status == 0 else 'SOME CELLS OUT OF BOUNDS'}")
        start = time.perf_counter()
        status = effect_coverage.main([], cells_map=pool.map)
    said = "every scenario within its bounds" if status == 0 else "SOME SCENARIOS OUT OF BOUNDS"
    print(f"effect table in {time.perf_counter() - start:.0f} s; {said}")


if __name__ == "__main__":
    main()
