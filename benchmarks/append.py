"""Budgets (issue 22): a cold `logbook append` of a 2,000-item run against `sqlite-utils
insert` of the same JSON into a fresh table (ratio <= 0.75, goal 0.5), and against the floor:
a bare Python process inserting the same JSON with sqlite3 in one WAL, synchronous=FULL
transaction (ratio <= 4); in-process appends against SQLite's own one-transaction-per-row
insert rate with the same durability settings (ratio >= 0.5). The cold runs are timed
alternately (binary scores, then continuous ones, which take canonical JSON's float path).

Prints ratios and never fails on them: CI machines are noisy.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from _common import paired_medians, report, run_checked, top_level_imports

BIN = Path(sys.executable).parent


# the floor: what any Python program pays to put the JSON into SQLite durably
FLOOR = """
import sqlite3, sys
data = open(sys.argv[1], "rb").read()
conn = sqlite3.connect(sys.argv[2], isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA synchronous=FULL")
conn.execute("CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, entry BLOB)")
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO runs (entry) VALUES (?)", (data,))
conn.execute("COMMIT")
conn.close()
"""


def run_draft(n: int, seed: int, continuous: bool = False) -> dict:
    rng = random.Random(seed)
    ids = [f"item-{i:05d}" for i in range(n)]
    score = [None if rng.random() < 0.01 else rng.random() if continuous
             else float(rng.random() < 0.7) for _ in ids]
    error = [None if s is not None else "timeout" for s in score]
    return {"kind": "run", "body": {
        "plan": None, "status": "completed",
        "apparatus": {"model": "m-7b", "engine": "vllm", "engine_build": "0.6.3",
                      "decoding": {"temperature": 0.0, "seed": seed}},
        "outcomes": {"metric": "acc", "id": ids, "score": score, "error": error}}}


def cold_append(tmp: Path, continuous: bool) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "cfg")}
    env.pop("LOGBOOK_DIR", None)
    env.pop("LOGBOOK_KEY", None)
    what = "continuous" if continuous else "binary"
    ledger = tmp / f"ledger-{what}"
    ledger.mkdir()
    run_checked([str(BIN / "logbook"), "init", str(ledger), "--name", "bench"], env=env)
    draft = tmp / f"run-{what}.json"
    draft.write_bytes(orjson.dumps(run_draft(2000, 1, continuous)))
    n = [0]

    def ours() -> None:
        run_checked([str(BIN / "logbook"), "append", str(draft)], env=env, cwd=ledger)

    def peer() -> None:  # sqlite-utils inserts the draft object as one row of a fresh table
        n[0] += 1
        run_checked([str(BIN / "sqlite-utils"), "insert", str(tmp / f"peer{n[0]}.db"), "runs",
                     str(draft)])

    def floor() -> None:
        n[0] += 1
        run_checked([sys.executable, "-c", FLOOR, str(draft), str(tmp / f"floor{n[0]}.db")])

    repeat = 9
    t_ours, t_peer = paired_medians(ours, peer, repeat)
    t_ours2, t_floor = paired_medians(ours, floor, repeat)
    label = f"append (cold CLI, 2,000 {what} items)"
    report(label + " vs sqlite-utils", t_ours / t_peer, "<= 0.75, goal 0.5",
           f"logbook append {t_ours * 1000:.0f} ms, sqlite-utils insert {t_peer * 1000:.0f} ms "
           f"(medians of {repeat}, alternating)")
    report(label + " vs bare sqlite3", t_ours2 / t_floor, "<= 4",
           f"logbook append {t_ours2 * 1000:.0f} ms, a bare Python sqlite3 insert in one WAL, "
           f"synchronous=FULL transaction {t_floor * 1000:.0f} ms (medians of {repeat}, "
           "alternating)")
    breakdown(draft, env, ledger)


# one cold append in a process of its own, timed from inside: how long the command took and
# which of the heavy packages it loaded (-X importtime, on stderr, says what its imports cost)
PROBE = """
import sys, time
t = time.perf_counter()
from logbook.cli.main import run
code = run(sys.argv[1:])
took = time.perf_counter() - t
heavy = ("typer", "pydantic", "rich", "numpy", "scipy", "cryptography")
print(repr((code, took, sorted(m for m in heavy if m in sys.modules))))
"""


def breakdown(draft: Path, env: dict[str, str], ledger: Path, repeat: int = 5) -> None:
    """Where a cold append's time goes (medians of ``repeat``): the interpreter's start, the
    imports the command made (-X importtime's top-level modules, the largest named), and the
    rest of the command, its work; and which heavy packages it loaded."""
    import ast

    def start() -> float:
        t = time.perf_counter()
        run_checked([sys.executable, "-c", "pass"], env=env, cwd=ledger)
        return time.perf_counter() - t

    starts, tooks, imports, loaded = [], [], [], []
    tops: dict[str, list[float]] = {}
    for _ in range(repeat):
        starts.append(start())
        r = subprocess.run([sys.executable, "-X", "importtime", "-c", PROBE, "append",
                            str(draft)], env=env, cwd=ledger, capture_output=True, text=True,
                           check=True)
        _code, took, heavy = ast.literal_eval(r.stdout.strip().splitlines()[-1])
        tooks.append(took)
        loaded = heavy
        mine = top_level_imports(r.stderr)
        imports.append(sum(mine.values()))
        for name, us in mine.items():
            tops.setdefault(name, []).append(us)
    cost = {n: statistics.median(v + [0.0] * (repeat - len(v))) for n, v in tops.items()}
    largest = ", ".join(f"{n} {us / 1000:.0f}" for n, us in
                        sorted(cost.items(), key=lambda kv: -kv[1])[:6])
    took_ms = statistics.median(tooks) * 1000
    import_ms = statistics.median(imports) / 1000
    print(f"  of a cold append: interpreter start {statistics.median(starts) * 1000:.0f} ms; "
          f"the command {took_ms:.0f} ms under -X importtime: imports {import_ms:.0f} ms "
          f"(largest, ms: {largest}), its work about {took_ms - import_ms:.0f} ms; heavy "
          f"packages loaded: {', '.join(loaded) or 'none'}", flush=True)


def in_process(tmp: Path, count: int = 40, rounds: int = 7) -> None:
    """Appends of notes through the Python API against single-row SQLite transactions of the
    same bytes, in alternating rounds of ``count`` each (a disk's fsync latency drifts within
    a second: a round of one right after a round of the other meets the same disk), as the
    median of each side's rates."""
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.service import Ledger

    key = SigningKey.generate()
    folder = tmp / "inproc"
    folder.mkdir()
    ledger = Ledger.init(folder, "bench", key)
    conn = sqlite3.connect(str(tmp / "peer.db"), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, digest TEXT UNIQUE, entry BLOB, "
                 "signature TEXT)")
    ours, peer = [], []
    for r in range(rounds):
        bodies = [{"text": f"note {r}.{i}", "refs": []} for i in range(count)]
        t = time.perf_counter()
        for body in bodies:
            ledger.append("note", body, key)
        ours.append(count / (time.perf_counter() - t))
        size = ledger.size()
        raw = [ledger.entry_at(seq) for seq in range(size - count, size)]
        t = time.perf_counter()
        for e in raw:
            assert e is not None
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (?,?,?,?)", (e.seq, e.digest, e.raw, e.signature))
            conn.execute("COMMIT")
        peer.append(count / (time.perf_counter() - t))
    ledger.close()
    conn.close()
    a, b = statistics.median(ours), statistics.median(peer)
    report("append (in-process rate)", a / b, ">= 0.5",
           f"logbook {a:.0f} appends/s, sqlite one-transaction-per-row {b:.0f} rows/s "
           f"(medians of {rounds} alternating rounds of {count}; per round: "
           + ", ".join(f"{x / y:.2f}" for x, y in zip(ours, peer, strict=True)) + ")")


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-append-"))
    try:
        cold_append(tmp, continuous=False)
        cold_append(tmp, continuous=True)
        in_process(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
