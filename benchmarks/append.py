"""Budget (issue 2): a cold `logbook append` of a 2,000-item run against `sqlite-utils insert`
of the same JSON into a fresh table (ratio <= 1.0); in-process appends against SQLite's own
one-transaction-per-row insert rate with the same durability settings (ratio >= 0.5).

Prints ratios and never fails on them: CI machines are noisy.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from _common import median_time, report, run_checked

BIN = Path(sys.executable).parent


def run_draft(n: int, seed: int) -> dict:
    rng = random.Random(seed)
    ids = [f"item-{i:05d}" for i in range(n)]
    score = [None if rng.random() < 0.01 else float(rng.random() < 0.7) for _ in ids]
    error = [None if s is not None else "timeout" for s in score]
    return {"kind": "run", "body": {
        "plan": None, "status": "completed",
        "apparatus": {"model": "m-7b", "engine": "vllm", "engine_build": "0.6.3",
                      "decoding": {"temperature": 0.0, "seed": seed}},
        "outcomes": {"metric": "acc", "id": ids, "score": score, "error": error}}}


def cold_append(tmp: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "cfg")}
    env.pop("LOGBOOK_DIR", None)
    env.pop("LOGBOOK_KEY", None)
    ledger = tmp / "ledger"
    ledger.mkdir()
    run_checked([str(BIN / "logbook"), "init", str(ledger), "--name", "bench"], env=env)
    draft = tmp / "run.json"
    draft.write_bytes(orjson.dumps(run_draft(2000, 1)))
    # sqlite-utils inserts the same JSON (the draft object as one row) into a fresh table
    n = [0]

    def ours() -> None:
        run_checked([str(BIN / "logbook"), "append", str(draft)], env=env, cwd=ledger)

    def peer() -> None:
        n[0] += 1
        run_checked([str(BIN / "sqlite-utils"), "insert", str(tmp / f"peer{n[0]}.db"), "runs",
                     str(draft)])

    ours()
    peer()  # warm the page cache for both
    t_ours = median_time(ours, 7)
    t_peer = median_time(peer, 7)
    report("append (cold CLI, 2,000 items)", t_ours / t_peer, "<= 1.0",
           f"logbook append {t_ours * 1000:.0f} ms, sqlite-utils insert {t_peer * 1000:.0f} ms "
           "(median of 7)")


def in_process(tmp: Path, count: int = 200) -> None:
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.service import Ledger

    key = SigningKey.generate()
    folder = tmp / "inproc"
    folder.mkdir()
    ledger = Ledger.init(folder, "bench", key)
    bodies = [{"text": f"note {i}", "refs": []} for i in range(count)]
    t = time.perf_counter()
    for body in bodies:
        ledger.append("note", body, key)
    ours = count / (time.perf_counter() - t)
    raw = [ledger.entry_at(i + 1) for i in range(count)]
    ledger.close()

    conn = sqlite3.connect(str(tmp / "peer.db"), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, digest TEXT UNIQUE, entry BLOB, "
                 "signature TEXT)")
    t = time.perf_counter()
    for r in raw:
        assert r is not None
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES (?,?,?,?)", (r.seq, r.digest, r.raw, r.signature))
        conn.execute("COMMIT")
    peer = count / (time.perf_counter() - t)
    conn.close()
    report("append (in-process rate)", ours / peer, ">= 0.5",
           f"logbook {ours:.0f} appends/s, sqlite one-transaction-per-row {peer:.0f} rows/s")


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-append-"))
    try:
        cold_append(tmp)
        in_process(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
