"""Memory of the commands that pass over a whole ledger: `logbook clone`, `logbook export
--sqlite` and `logbook export --format csv` read every entry, and must hold one at a time, not
the ledger. Each is run on the audit benchmark's kind of ledger (plans of 2 arms x 12 runs of
100 items, claims, 200 suites) at two sizes, 200 and 800 plans (about 5,000 and 20,000
entries), as a subprocess of its own whose peak resident memory is read back
(getrusage of the one child), beside `logbook verify` of the same ledger.

Prints, for each command, how much its peak grew when the ledger grew fourfold, and its peak at
the larger size against verify's there; budget: growth <= 1.5 (memory that does not follow the
ledger). Before the commands read entry by entry (commit b1f29bf), the growths were 2.58
(clone), 3.19 (export --sqlite, 1.2 GB at 20,101 entries) and 2.19 (export --format csv); after,
1.24, 1.32 and 1.58. What still grows is each run's facts (logbook.format.runfacts, a few KB a
run), which the check keeps for the analysis instead of the runs' bodies. Never fails.

Run: python benchmarks/memory.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import audit
from _common import report

from logbook.crypto.signing import SigningKey

SIZES = (200, 800)  # plans: about 5,000 and 20,000 entries
BUDGET = 1.5  # peak at the larger size over the peak at the smaller one
PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
        "sys.stderr.buffer.write(r.stderr); "
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def peak_kib(args: list[str], env: dict[str, str]) -> int:
    """The peak resident memory (KiB) of one command, run as the only child of a fresh
    process (so that no other child's peak is counted)."""
    r = subprocess.run([sys.executable, "-c", PEAK, *args], env=env, capture_output=True,
                       text=True)
    code, kib = r.stdout.split()
    if int(code) != 0:
        raise SystemExit(f"benchmark step failed: {' '.join(args)}\n{r.stderr}")
    return int(kib)


def peaks(tmp: Path, plans: int, env: dict[str, str]) -> tuple[int, dict[str, int]]:
    """(entries, {command: peak KiB}) for a ledger of ``plans`` plans."""
    audit.PLANS, audit.CLAIMS = plans, plans // 8
    folder = tmp / f"ledger-{plans}"
    with audit.build(folder, SigningKey.generate()) as ledger:
        size = ledger.size()
    logbook = str(Path(sys.executable).parent / "logbook")
    at = ["--ledger", str(folder)]
    out = tmp / f"out-{plans}"
    out.mkdir()
    commands = {
        "verify": [logbook, *at, "verify"],
        "clone": [logbook, "clone", str(folder), str(out / "clone.db")],
        "export --sqlite": [logbook, *at, "export", "--sqlite", str(out / "flat.db")],
        "export --format csv": [logbook, *at, "export", "--format", "csv", "--out",
                                str(out / "runs.csv")],
    }
    found = {name: peak_kib(args, env) for name, args in commands.items()}
    shutil.rmtree(out, ignore_errors=True)
    return size, found


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-memory-"))
    try:
        # a machine's first look at the ledger: checked in full, nothing kept
        env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "cfg"), "LOGBOOK_STATE_DIR": "off"}
        env.pop("LOGBOOK_DIR", None)
        (small, at_small), (large, at_large) = (peaks(tmp, n, env) for n in SIZES)
        for name in at_large:
            if name == "verify":
                continue
            growth = at_large[name] / at_small[name]
            report(f"memory of {name}", growth, f"<= {BUDGET} as the ledger grows 4x",
                   f"peak {at_small[name] / 1024:.0f} MiB at {small:,} entries, "
                   f"{at_large[name] / 1024:.0f} MiB at {large:,} "
                   f"({at_large[name] / at_large['verify']:.2f}x verify's "
                   f"{at_large['verify'] / 1024:.0f} MiB there)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
