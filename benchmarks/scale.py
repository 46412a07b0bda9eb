"""Scale (issue 22): the everyday commands at 10,000 and 100,000 entries (and 1,000,000 with
`--million`, run by hand: it takes a long while to build), each command's wall time and peak
memory, and its ratio to the 10,000-entry time.

The ledger is mostly notes, one entry in ten a run of 100 items, built through the Python API
in batches; every size is built before any command is timed. Commands, each timed as a
subprocess of the console script on its ledger (once, or for the cold append, `log -n 20` and
the resumed `brief` the median of 5 rounds, each round over every size in turn): `brief` (the
first: a full check, which keeps this machine's checked copy), a cold `append` of a note,
`log -n 20`, `brief` and `audit` (resumed from the checked copy: they check only the entries
appended since), `verify` (always everything), `checkpoint`, `prove` of the last entry,
`export` to a file. The budgets the issue sets at 1M entries (`audit` <= 2 s and 300 MB,
`brief` and `log -n 20` within 1.5x of their 10k times, a cold append within 1.2x, verify <=
250 MB) are printed beside the figures; the script never fails on them.
"""

from __future__ import annotations

import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from logbook.crypto.signing import SigningKey
from logbook.ledger.service import Ledger

BATCH = 1000
REPEATED = ("cold append", "log -n 20", "brief")  # timed as the median of REPEATS runs
REPEATS = 5
ITEMS = [f"q{i:03d}" for i in range(100)]


def build(folder: Path, n: int, key: SigningKey) -> None:
    with Ledger.init(folder, "scale", key) as ledger:
        drafts: list[tuple[str, dict[str, Any]]] = []
        for i in range(1, n):
            if i % 10 == 0:
                drafts.append(("run", {
                    "plan": None, "arm": None, "status": "completed",
                    "apparatus": {"model": "m", "seed": i},
                    "outcomes": {"metric": "acc", "id": ITEMS,
                                 "score": [float((i + j) % 3 != 0) for j in range(100)]}}))
            else:
                drafts.append(("note", {"text": f"note {i}"}))
            if len(drafts) == BATCH:
                ledger.append_many(drafts, key)
                drafts = []
        if drafts:
            ledger.append_many(drafts, key)


def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """(seconds, peak resident MB) of one run of `logbook ARGS`."""
    exe = str(Path(sys.executable).parent / "logbook")
    t0 = time.perf_counter()
    proc = subprocess.Popen([exe, *args], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, err = proc.communicate()
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):  # the audit may find something: that is fine here
        raise SystemExit(f"logbook {' '.join(args)} failed ({proc.returncode}): {err[-800:]!r}")
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024


def commands(folder: Path, n: int) -> list[tuple[str, list[str]]]:
    (folder / "note.json").write_text('{"kind": "note", "body": {"text": "one more"}}')
    # the first brief checks the whole ledger and keeps this machine's checked copy
    # (docs/auditing.md §7); the cold append then adds one entry, and the next brief and the
    # audit check only that one, resumed from the copy
    return [("brief, first", ["brief"]), ("cold append", ["append", "note.json"]),
            ("log -n 20", ["log", "-n", "20"]), ("brief", ["brief"]), ("audit", ["audit"]),
            ("verify", ["verify"]),
            ("checkpoint", ["checkpoint", "--out", str(folder / "cp.txt")]),
            ("prove", ["prove", f"@{n - 1}"]),
            ("export", ["export", "--out", str(folder / "export.jsonl")])]


def main() -> int:
    sizes = [10_000, 100_000] + ([1_000_000] if "--million" in sys.argv[1:] else [])
    with contextlib.ExitStack() as stack:
        envs: dict[int, dict[str, str]] = {}
        for n in sizes:  # every size is built first, so that the rounds below interleave
            folder = Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="logbook-bench-scale-")))
            key = SigningKey.generate()
            key.write(folder / "keys" / "bench.key")
            t0 = time.perf_counter()
            build(folder, n, key)
            print(f"scale: built {n:,} entries in {time.perf_counter() - t0:.0f} s", flush=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
            env |= {"LOGBOOK_DIR": str(folder), "LOGBOOK_KEY": str(folder / "keys" / "bench.key"),
                    "LOGBOOK_STATE_DIR": str(folder / "state")}  # never the machine's own
            envs[n] = env
        runs: dict[tuple[int, str], list[tuple[float, int]]] = {}

        def run(n: int, name: str, args: list[str]) -> None:
            folder = Path(envs[n]["LOGBOOK_DIR"])
            runs.setdefault((n, name), []).append(_isolated(args, envs[n], folder))

        listed = {n: dict(commands(Path(envs[n]["LOGBOOK_DIR"]), n)) for n in sizes}
        first, *rest = listed[sizes[0]]
        for n in sizes:  # the full check first: it keeps the checked copy the others resume
            run(n, first, listed[n][first])
        # the commands whose budget is a ratio of times of some 50 ms: REPEATS rounds, each
        # over every size in turn, so that the machine's drift (a run of them moves by 20 ms
        # within minutes) falls on every size alike; their median
        for _ in range(REPEATS):
            for n in sizes:
                for name in REPEATED:
                    run(n, name, listed[n][name])
        for n in sizes:
            for name in rest:
                if name not in REPEATED:
                    run(n, name, listed[n][name])
        for n in sizes:
            for name in (first, *rest):
                seconds = statistics.median(t for t, _ in runs[n, name])
                peak = max(m for _, m in runs[n, name])
                base = statistics.median(t for t, _ in runs[sizes[0], name])
                print(f"  {n:>9,} {name:<12} {seconds:7.2f} s  {peak:5d} MB  "
                      f"x{seconds / base:.2f} of 10k", flush=True)
    print("  budgets at 1M: audit <= 2 s and 300 MB; brief and log -n 20 <= 1.5x of 10k; "
          "cold append <= 1.2x of 10k; verify <= 250 MB")
    return 0


def _isolated(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """Time one command from a fresh Python process, so its peak memory is its own."""
    code = ("import sys, json; sys.path.insert(0, sys.argv[1]); import scale; "
            "print(json.dumps(scale.timed(json.loads(sys.argv[2]), dict(__import__('os').environ),"
            " __import__('pathlib').Path(sys.argv[3]))))")
    import json

    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent),
                          json.dumps(args), str(cwd)], env=env, capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    seconds, peak = json.loads(out.stdout.strip().splitlines()[-1])
    return float(seconds), int(peak)


if __name__ == "__main__":
    sys.exit(main())
