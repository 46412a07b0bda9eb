"""Budget (issue 35): the read-model work makes no earlier issue's budget worse. The commands
those budgets time (`verify`, `audit`, `report`, a cold `append`) are timed here with this tree
and with the tree before the work began (commit 5139cd0, taken with `git archive` as
benchmarks/importtime.py does), each on a ledger its own code built: the audit benchmark's mix
(benchmarks/audit.py) at 1,000 plans, about 25,000 entries. Each command runs as a fresh
process with LOGBOOK_STATE_DIR=off (a first look: checked in full), the two trees alternating,
medians of LOGBOOK_BENCH_REPEAT (default 3; five times as many for the append, which takes
milliseconds). Prints, for each command, this tree's time
against the earlier one's (ratio <= 1.0), and the audit's own budget (audit / verify <= 2.0,
issue 8) as each tree meets it. At this size the audit took the same time before the work as
after it (2.3x verify both times: the audit's budget was over before issue 35 began, by the
rules of later issues); at the audit benchmark's 100,501 entries it took 39.3 s before against
verify's 4.7 s (8.4x) and 11.2 s after (2.4x), measured once by hand (four minutes a tree).

Prints the ratios and never fails on them. Without the commit in the clone's history (a
shallow clone, a tarball) it says so and measures nothing.

Run: python benchmarks/before35.py
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

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from _common import report
from importtime import BEFORE, PROBE, ROOT, before_tree

BENCH = Path(__file__).resolve().parent
PLANS = 1000
BUILD = """
import sys
from pathlib import Path
sys.path.insert(0, {bench!r})
from audit import build
from logbook.crypto.signing import SigningKey
key = SigningKey.generate()
key.write(Path(sys.argv[2]))  # the signing key of the timed appends
with build(Path(sys.argv[1]), key, {plans}) as ledger:
    print(ledger.size())
"""


def run_body(n: int) -> dict[str, object]:
    """A run of ``n`` binary items in no plan: what the cold append appends."""
    ids = [f"item-{i:04d}" for i in range(n)]
    return {"kind": "run", "body": {
        "plan": None, "status": "completed", "apparatus": {"model": "m-7b", "engine": "vllm",
                                                             "decoding": {"temperature": 0.0}},
        "outcomes": {"metric": "acc", "id": ids, "score": [int(i % 3 == 0) for i in range(n)],
                     "error": [None] * n}}}


def timed(tree: Path, args: list[str], env: dict[str, str]) -> float:
    """Seconds one `logbook ARGS` took, run from ``tree``."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", PROBE, *args],
                       env={**env, "PYTHONPATH": str(tree)}, capture_output=True)
    took = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"benchmark step failed: logbook {' '.join(args)} from {tree}\n"
                         f"{r.stderr.decode()[-2000:]}")
    return took


def main() -> None:
    repeat = int(os.environ.get("LOGBOOK_BENCH_REPEAT", "3"))
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-before35-"))
    try:
        found = before_tree(tmp, "before35")
        if found is None:
            return
        before, env = found
        env["LOGBOOK_STATE_DIR"] = "off"
        trees = {"now": ROOT, "before": before}
        ledgers: dict[str, Path] = {}
        t = time.perf_counter()
        builds = {}  # side by side: each build is one process's work, and none is timed
        for name, tree in trees.items():
            ledgers[name] = tmp / f"ledger-{name}"
            builds[name] = subprocess.Popen(
                [sys.executable, "-c", BUILD.format(bench=str(BENCH), plans=PLANS),
                 str(ledgers[name]), str(tmp / f"{name}.key")],
                env={**env, "PYTHONPATH": str(tree)}, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True)
        for name, proc in builds.items():
            out, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"benchmark step failed: the build ({name})\n{err}")
            size = int(out.split()[-1])
        print(f"built two {size:,}-entry ledgers ({PLANS:,} plans of the audit benchmark's "
              f"mix), one by each tree, side by side in {time.perf_counter() - t:.1f} s",
              flush=True)
        draft = tmp / "run.json"
        draft.write_bytes(orjson.dumps(run_body(2000)))
        commands = {
            "verify": ["verify"],
            "audit": ["audit", "--json"],
            "report": ["report", "bench-plan-00000", "--json"],
            "append": ["append", str(draft)],
        }
        for name, tree in trees.items():  # once untimed: each tree's bytecode is written
            timed(tree, ["--ledger", str(ledgers[name]), "verify"], env)
        rounds = {c: repeat * (5 if c == "append" else 1) for c in commands}  # append: ms
        times: dict[tuple[str, str], list[float]] = {}
        for i in range(max(rounds.values())):
            for command, args in commands.items():
                if i >= rounds[command]:
                    continue
                for name, tree in trees.items():
                    keyed = {**env, "LOGBOOK_KEY": str(tmp / f"{name}.key")}
                    times.setdefault((command, name), []).append(
                        timed(tree, ["--ledger", str(ledgers[name]), *args], keyed))
        median = {k: statistics.median(v) for k, v in times.items()}
        for command in commands:
            now, then = median[command, "now"], median[command, "before"]
            report(f"{command} vs before issue 35", now / then, "<= 1.0",
                   f"now {now:.2f} s, at {BEFORE} {then:.2f} s on ledgers of {size:,} entries "
                   f"(medians of {rounds[command]}, alternating)")
        for name in trees:
            ratio = median["audit", name] / median["verify", name]
            print(f"  audit / verify (issue 8's budget <= 2.0), {name}: {ratio:.2f}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
