"""Budget (issue 22): `logbook verify` at the signature limit, on every core.

Builds the verify benchmark's ledger (exploratory runs of 100 items and notes, half and half)
at 100,000 entries (LOGBOOK_BENCH_ENTRIES sets another size) and times, as subprocesses,
medians of 3 interleaved rounds:
* `logbook verify` held to one core (sched_setaffinity), and on every core the machine gives;
* the floor: a Python process verifying the same (signature, message) pairs in one loop with
  libsodium (PyNaCl's crypto_sign_open), on one core.
Budgets: one core <= 1.1x the floor; all cores (2 here) <= 0.65x the floor. Also prints each
command's peak memory (the issue's 1M-entry memory budget is checked by hand at that size).
Always exits 0.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from verify import build, write_pairs

from logbook.format.canonical import SIGNATURE_DOMAIN

N = int(os.environ.get("LOGBOOK_BENCH_ENTRIES", "100000"))
RAW = """
import sys, time
from nacl.bindings import crypto_sign_open
data = open(sys.argv[1], "rb").read()
key, domain = data[:32], DOMAIN
pairs = [(data[i:i + 64], domain + data[i + 64:i + 96]) for i in range(32, len(data), 96)]
for sig, msg in pairs:
    crypto_sign_open(sig + msg, key)
print(len(pairs))
""".replace("DOMAIN", repr(SIGNATURE_DOMAIN))


def run(cmd: list[str], cwd: Path, one_core: bool) -> tuple[float, int, str, float]:
    """(wall seconds, peak resident KiB, stdout, CPU seconds of it and its workers) of one
    run."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}

    def pin() -> None:
        if one_core:
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=pin)
    out, err = proc.communicate()
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed ({proc.returncode}): {err.decode()[-2000:]}")
    # the children's peak: the largest resident set of any child so far (ours are sequential)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return elapsed, after.ru_maxrss, out.decode(), cpu


def main() -> int:
    logbook = shutil.which("logbook")
    if logbook is None:
        print("verify_cores: the `logbook` console script is not installed; nothing timed")
        return 0
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="logbook-bench-cores-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        db, key = build(folder, N)
        print(f"built {N} entries in {time.perf_counter() - t0:.1f} s", flush=True)
        pairs = folder / "pairs.bin"
        write_pairs(db, key, pairs)
        cmds = [([logbook, "verify", "--json"], True), ([logbook, "verify", "--json"], False),
                ([sys.executable, "-c", RAW, str(pairs)], True)]
        load = os.getloadavg()[0]
        rounds = [[run(c, folder, one) for c, one in cmds] for _ in range(3)]
        one, every, raw = (statistics.median(r[i][0] for r in rounds) for i in range(3))
        cpu = [statistics.median(r[i][3] for r in rounds) for i in range(3)]
        assert all('"ok": true' in r[i][2] for r in rounds for i in (0, 1))
        peak = max(r[i][1] for r in rounds for i in (0, 1))
        print(f"verify, {N:,} entries: one core {one:.2f} s, {cores} cores {every:.2f} s, "
              f"raw libsodium (one core) {raw:.2f} s")
        print(f"  one core / raw = {one / raw:.2f} (budget <= 1.1); {cores} cores / raw = "
              f"{every / raw:.2f} (budget <= 0.65); peak memory of a verify <= {peak // 1024} MB")
        # the detail: CPU time (a verify's workers included) and what is not signatures
        print(f"  CPU: one core {cpu[0]:.2f} s, {cores} cores {cpu[1]:.2f} s, raw {cpu[2]:.2f} s; "
              f"beyond the signatures: {one - raw:.2f} s on one core "
              f"({(one - raw) / N * 1e6:.1f} us an entry)")
        # what no scheduling can beat: the CPU a verify spends, shared by every core at best
        print(f"  with that CPU, {cores} cores can do no better than {cpu[1] / cores:.2f} s "
              f"({cpu[1] / cores / raw:.2f} of raw); one core has {cpu[0] - cpu[2]:.2f} s of CPU "
              "beyond the raw loop's")
        print(f"  each round (one core, {cores} cores, raw; wall s): "
              + "; ".join(", ".join(f"{r[i][0]:.2f}" for i in range(3)) for r in rounds)
              + f"; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after "
              "(a shared machine: the figures are only as good as the load allows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
