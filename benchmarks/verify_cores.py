"""Budget (issue 22): `logbook verify` at the signature limit, on every core.

Builds the verify benchmark's ledger (exploratory runs of 100 items and notes, half and half)
at 100,000 entries (LOGBOOK_BENCH_ENTRIES sets another size) and times, as subprocesses,
medians of 3 interleaved rounds:
* `logbook verify` held to one core (sched_setaffinity), and on every core the machine gives;
* raw: a Python process verifying the same (signature, message) pairs in one loop with
  libsodium (PyNaCl's crypto_sign_open), on one core: the peer of the budgets;
* the reading floor, on one core and split over every core: processes that do the least any
  verifier of the stored ledger must do per entry, and nothing else: read its row from the
  database, hash its bytes (the digest is recomputed), parse them (its fields are checked) and
  check its signature with the raw loop's call. Split: each of `cores` processes takes a
  contiguous range of the entries, with no coordination at all (the best a pool can do).
Budgets: one core <= 1.1x raw; all cores (2 here) <= 0.65x raw. The floors show how much of
each budget is left for the checks themselves: a floor above its budget means no verifier of
this shape can meet it. Also prints each command's peak memory (the issue's 1M-entry memory
budget is checked by hand at that size). Always exits 0.
"""

from __future__ import annotations

import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import shared_ledger
from verify import build, write_pairs

from logbook.crypto.signing import SigningKey
from logbook.format.canonical import SIGNATURE_DOMAIN
from logbook.ledger.service import Ledger

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
# the reading floor: entries [lo, hi) read, hashed, parsed and their signatures checked
FLOOR = """
import binascii, hashlib, sqlite3, sys
import orjson
from nacl.bindings import crypto_sign_open
db, lo, hi, key = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), bytes.fromhex(sys.argv[4])
conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
cur = conn.execute("SELECT seq, digest, entry, signature FROM entries WHERE seq >= ? AND seq < ?"
                   " ORDER BY seq", (lo, hi))
sha, loads, b64, domain, n = hashlib.sha256, orjson.loads, binascii.a2b_base64, DOMAIN, 0
while rows := cur.fetchmany(1000):
    for _seq, _digest, raw, signature in rows:
        digest = sha(raw).digest()
        loads(raw)
        crypto_sign_open(b64(signature) + domain + digest, key)
        n += 1
print(n)
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


def floors(db: Path, key: str, n: int, parts: int, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of the reading floor over ``n`` entries in ``parts``
    concurrent processes, each a contiguous range (parts=1: held to one core)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)

    def pin() -> None:
        if parts == 1:
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    bounds = [n * i // parts for i in range(parts + 1)]
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", FLOOR, str(db), str(lo), str(hi), key],
                              cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              preexec_fn=pin)
             for lo, hi in itertools.pairwise(bounds)]
    done = 0
    for proc in procs:
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"the reading floor failed ({proc.returncode}): "
                             f"{err.decode()[-2000:]}")
        done += int(out)
    elapsed = time.perf_counter() - t0
    assert done == n, (done, n)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


KEY_FILE = "bench-signing.key"  # beside the ledger's own files: the pairs need its public key


def make(dest: Path) -> int:
    """The benchmark's ledger of N entries in ``dest``, with the key that signed it; its size."""
    dest.mkdir(parents=True, exist_ok=True)
    _, key = build(dest, N)
    key.write(dest / KEY_FILE)
    return N


def main() -> int:
    logbook = shutil.which("logbook")
    if logbook is None:
        print("verify_cores: the `logbook` console script is not installed; nothing timed")
        return 0
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="logbook-bench-cores-") as tmp:
        folder = Path(tmp)
        ledger = folder / "ledger"
        t0 = time.perf_counter()
        shared_ledger(f"verify-cores-{N}", ledger, make)
        print(f"{N:,} entries ready in {time.perf_counter() - t0:.1f} s (built once a run of "
              "the benchmarks: benchmarks/_prebuild.py)", flush=True)
        key = SigningKey.read(ledger / KEY_FILE)
        with Ledger.open(ledger, write=False) as opened:
            db = opened.path
        pairs = folder / "pairs.bin"
        write_pairs(db, key, pairs)
        cmds = [([logbook, "verify", "--json"], True), ([logbook, "verify", "--json"], False),
                ([sys.executable, "-c", RAW, str(pairs)], True)]
        load = os.getloadavg()[0]
        public = key.public.raw.hex()
        rounds, floor_rounds = [], []
        for _ in range(3):  # interleaved, so that a burst of load hits every command alike
            rounds.append([run(c, ledger, one) for c, one in cmds])
            floor_rounds.append([floors(db, public, N, parts, ledger) for parts in (1, cores)])
        one, every, raw = (statistics.median(r[i][0] for r in rounds) for i in range(3))
        floor_one, floor_every = (statistics.median(r[i][0] for r in floor_rounds)
                                  for i in range(2))
        cpu = [statistics.median(r[i][3] for r in rounds) for i in range(3)]
        assert all('"ok": true' in r[i][2] for r in rounds for i in (0, 1))
        peak = max(r[i][1] for r in rounds for i in (0, 1))
        print(f"verify, {N:,} entries: one core {one:.2f} s, {cores} cores {every:.2f} s, "
              f"raw libsodium (one core) {raw:.2f} s")
        print(f"  one core / raw = {one / raw:.2f} (budget <= 1.1); {cores} cores / raw = "
              f"{every / raw:.2f} (budget <= 0.65); peak memory of a verify <= {peak // 1024} MB")
        print(f"  the reading floor (read, hash, parse, check the signature; nothing else): one "
              f"core {floor_one:.2f} s = {floor_one / raw:.2f} of raw, {cores} processes "
              f"{floor_every:.2f} s = {floor_every / raw:.2f} of raw; left for every other "
              f"check within the budgets: one core {1.1 * raw - floor_one:+.2f} s "
              f"({(1.1 * raw - floor_one) / N * 1e6:+.1f} us an entry), {cores} cores "
              f"{0.65 * raw - floor_every:+.2f} s of wall")
        if floor_one > 1.1 * raw:
            print("  one core: the floor alone is past 1.1x raw: no verifier that reads, hashes "
                  "and parses each entry in Python meets that budget")
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
