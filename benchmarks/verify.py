"""Speed budget for `logbook verify`: a 10,000-entry ledger against raw Ed25519 verification.

Builds, in a temporary folder and through the Python API (batches of 500 drafts per
transaction), a ledger of 10,000 entries: the genesis, then exploratory runs of 100 items and
notes, half and half. Then times, each as a subprocess and as the median of 3:

* `logbook verify` (the installed console script): every check, derived tables included;
* a Python process that loads the same 10,000 (signature, message) pairs from a file and
  verifies them in one loop with cryptography's Ed25519PublicKey.verify: the floor, since
  verify must at least check every signature.

The headline ratio is logbook's wall time over the raw process's wall time (budget <= 1.5).
For fairness it also prints both without interpreter startup: the raw loop as timed inside
its process, and each wall time minus a cold `python -c "import cryptography's ed25519"`.
Always exits 0: CI reports the figure, it does not fail on it.

Run: python benchmarks/verify.py [--profile]   (--profile: cProfile of one verify, by cumtime)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from logbook.crypto.signing import SigningKey
from logbook.format.canonical import SIGNATURE_DOMAIN
from logbook.ledger.service import Ledger

N_ENTRIES = 10_000
N_ITEMS = 100
BATCH = 500
REPEATS = 3
BUDGET = 1.5

# The raw floor: read the public key and the (signature, digest) pairs, verify in one loop.
RAW_VERIFY = """
import sys, time
t0 = time.perf_counter()
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
data = open(sys.argv[1], "rb").read()
key = Ed25519PublicKey.from_public_bytes(data[:32])
domain = DOMAIN
pairs = [(data[i:i + 64], domain + data[i + 64:i + 96]) for i in range(32, len(data), 96)]
t1 = time.perf_counter()
for sig, msg in pairs:
    key.verify(sig, msg)
t2 = time.perf_counter()
print(len(pairs), t1 - t0, t2 - t1)
"""
RAW_VERIFY = RAW_VERIFY.replace("DOMAIN", repr(SIGNATURE_DOMAIN))  # the same message as verify
COLD_START = "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey"


def run_body(i: int) -> dict[str, Any]:
    """An exploratory run of N_ITEMS items; scores vary with i so no two entries are alike."""
    ids = [f"item-{j:04d}" for j in range(N_ITEMS)]
    scores: list[float | None] = [float((i * 31 + j * 17) % 7 < 5) for j in range(N_ITEMS)]
    return {"plan": None, "arm": None, "status": "completed",
            "apparatus": {"model": "m-7b", "engine": "llama.cpp", "seed": i},
            "outcomes": {"metric": "acc", "id": ids, "score": scores}}


def build(folder: Path, n: int = N_ENTRIES) -> tuple[Path, SigningKey]:
    key = SigningKey.generate()
    with Ledger.init(folder, "bench", key) as ledger:
        drafts: list[tuple[str, dict[str, Any]]] = []
        for i in range(1, n):
            drafts.append(("run", run_body(i)) if i % 2 else
                          ("note", {"text": f"note {i}", "refs": []}))
            if len(drafts) == BATCH:
                ledger.append_many(drafts, key)
                drafts = []
        if drafts:
            ledger.append_many(drafts, key)
        assert ledger.size() == n
        return ledger.path, key


def write_pairs(db: Path, key: SigningKey, out: Path) -> None:
    """public key, then per entry: 64-byte signature and 32-byte digest, from the stored rows."""
    import base64

    with Ledger.open(db) as ledger, out.open("wb") as fh:
        fh.write(key.public.raw)
        for e in ledger.entries():
            fh.write(base64.b64decode(e.signature) + bytes.fromhex(e.digest))


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def medians(cmds: list[list[str]], cwd: Path) -> list[tuple[float, str]]:
    """Median wall time of each command over REPEATS rounds, interleaved so that a burst of
    load on a shared machine hits every command alike; with the median run's stdout."""
    rounds = [[timed(cmd, cwd) for cmd in cmds] for _ in range(REPEATS)]
    out = []
    for i in range(len(cmds)):
        runs = sorted((r[i] for r in rounds), key=lambda r: r[0])
        out.append(runs[len(runs) // 2])
    return out


def main() -> int:
    logbook = shutil.which("logbook")
    if logbook is None:
        print("verify: the `logbook` console script is not installed; nothing timed")
        return 0
    with tempfile.TemporaryDirectory(prefix="logbook-bench-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        db, key = build(folder)
        print(f"built {N_ENTRIES} entries in {time.perf_counter() - t0:.1f} s", flush=True)
        pairs = folder / "pairs.bin"
        write_pairs(db, key, pairs)

        (ours, out), (raw, raw_out), (cold, _) = medians(
            [[logbook, "verify", "--json"], [sys.executable, "-c", RAW_VERIFY, str(pairs)],
             [sys.executable, "-c", COLD_START]], folder)
        assert '"ok": true' in out, out[:500]
        n, _load, loop = raw_out.split()
        assert int(n) == N_ENTRIES

        ratio = ours / raw
        print(f"verify: {N_ENTRIES} entries, logbook {ours:.2f} s, raw ed25519 {raw:.2f} s, "
              f"ratio {ratio:.2f} (budget <= {BUDGET})")
        print(f"  without interpreter startup ({cold:.2f} s cold python + cryptography): "
              f"logbook {ours - cold:.2f} s, raw ed25519 loop {float(loop):.2f} s, "
              f"ratio {(ours - cold) / float(loop):.2f}")
        if "--profile" in sys.argv[1:]:
            # where verify's time goes, in-process, sorted by cumulative time
            prof = subprocess.run([sys.executable, "-m", "cProfile", "-s", "cumtime", logbook,
                                   "verify"], cwd=folder, capture_output=True, text=True,
                                  check=False)
            print("\n".join(prof.stdout.splitlines()[:45]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
