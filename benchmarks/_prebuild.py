"""Builds the ledgers several benchmarks read (``_common.kept_ledger``) before any benchmark
runs, as many at a time as the machine has cores: each build is one process's work (about
100 s for the audit's and the brief's 100,000 entries, 50 s for verify_cores'), and none is
timed against a budget, so two builds side by side take the time of the longer. .ci/run runs
this first, with LOGBOOK_BENCH_LEDGERS set; each benchmark then copies its ledger and times
its commands on a quiet machine. Without LOGBOOK_BENCH_LEDGERS it builds nothing.

    python benchmarks/_prebuild.py
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# kept ledger -> (benchmark module, its build); the names each benchmark passes to shared_ledger
SHARED = {
    "audit": ("audit", "make"),
    "brief": ("brief", "build"),
}


def _shared() -> dict[str, tuple[str, str]]:
    import verify_cores

    return {**SHARED, f"verify-cores-{verify_cores.N}": ("verify_cores", "make")}


def _build(name: str, module: str, function: str) -> tuple[str, float, int]:
    sys.path.insert(0, str(Path(__file__).parent))
    from _common import kept_ledger

    started = time.perf_counter()
    kept = kept_ledger(name, getattr(importlib.import_module(module), function))
    assert kept is not None
    return name, time.perf_counter() - started, int((kept / "size").read_text())


def main() -> None:
    if not os.environ.get("LOGBOOK_BENCH_LEDGERS"):
        print("prebuild: LOGBOOK_BENCH_LEDGERS is not set; each benchmark builds its own ledger")
        return
    shared = _shared()
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(len(os.sched_getaffinity(0)), mp_context=context) as pool:
        done = list(pool.map(_build, shared, *zip(*shared.values(), strict=True)))
    each = ", ".join(f"{name} {size:,} entries in {secs:.0f} s" for name, secs, size in done)
    print(f"prebuilt the shared ledgers ({each}) in {time.perf_counter() - started:.0f} s "
          "of wall time")


if __name__ == "__main__":
    main()
