"""Shared helpers for the benchmark scripts: timing and printing a ratio against a peer."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def median_time(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def paired_medians(ours: Callable[[], object], peer: Callable[[], object],
                   repeat: int = 7) -> tuple[float, float]:
    """Median times of ``ours`` and ``peer``, run alternately after one untimed run of each,
    so that both see the same warm caches and the same drift in machine load."""
    ours()
    peer()
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        for fn, times in ((ours, a), (peer, b)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return statistics.median(a), statistics.median(b)


def run_checked(args: list[str], **kw: object) -> None:
    r = subprocess.run(args, capture_output=True, **kw)  # type: ignore[call-overload]
    if r.returncode != 0:
        raise SystemExit(f"benchmark step failed: {' '.join(args)}\n{r.stderr.decode()}")


def report(name: str, ratio: float, budget: str, detail: str) -> None:
    print(f"{name}: ratio {ratio:.2f} (budget {budget}); {detail}", flush=True)


def compare_commands(name: str, ours: list[str], peer: list[str], budget: str,
                     env: dict[str, str], repeat: int = 7) -> None:
    """Time `logbook OURS` against `logbook PEER` on the same ledger (alternating, after a
    warm-up; see paired_medians) and print the ratio."""
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).parent / "logbook")
    t_ours, t_peer = paired_medians(lambda: run_checked([exe, *ours], env=env),
                                    lambda: run_checked([exe, *peer], env=env), repeat)
    report(name, t_ours / t_peer, budget,
           f"logbook {' '.join(ours)} {t_ours:.2f} s, logbook {' '.join(peer)} {t_peer:.2f} s "
           f"(medians of {repeat}, alternating)")


def top_level_imports(stderr: str) -> dict[str, float]:
    """-X importtime's report of the command's own imports: microseconds per top-level module
    (those the interpreter's start imports come before `logbook`'s first line and are left
    out)."""
    out: dict[str, float] = {}
    started = False
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if name.startswith("  ") or not cumulative.strip().isdigit():
            continue  # nested, or the header
        name = name.strip()
        started = started or name.startswith("logbook")
        if started:
            out[name] = out.get(name, 0.0) + float(cumulative)
    return out


def kept_ledger(name: str, build: Callable[[Path], int]) -> Path | None:
    """The folder where this run of the benchmarks keeps the ledger ``name`` (its ``ledger``
    and ``size``), built with ``build`` by the first to ask: .ci/run sets LOGBOOK_BENCH_LEDGERS
    to a folder of its own and builds them all first (benchmarks/_prebuild.py). None without
    the variable."""
    import os
    import shutil

    cache = os.environ.get("LOGBOOK_BENCH_LEDGERS")
    if not cache:
        return None
    kept = Path(cache) / name
    if not (kept / "size").exists():
        part = Path(cache) / f"{name}.part"
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        size = build(part / "ledger")
        (part / "size").write_text(str(size))
        shutil.rmtree(kept, ignore_errors=True)
        part.rename(kept)
    return kept


def shared_ledger(name: str, dest: Path, build: Callable[[Path], int]) -> int:
    """Make the ledger ``name`` in the folder ``dest`` (which holds no ledger yet) with
    ``build``, which returns its size, or copy it there when another benchmark of this run
    built it (``kept_ledger``): each such ledger is built once a run, and each benchmark
    reads its own copy (its checked copy and state are its own); without
    LOGBOOK_BENCH_LEDGERS, ``build`` makes it in ``dest``, as before."""
    import shutil

    kept = kept_ledger(name, build)
    if kept is None:
        return build(dest)
    shutil.copytree(kept / "ledger", dest, dirs_exist_ok=True)
    return int((kept / "size").read_text())
