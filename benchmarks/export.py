"""Budget (issue 38): `logbook export --format csv` and `--format parquet` of a ledger of about
100,000 entries (the audit benchmark's: 4,000 plans x 24 runs of 100 items, 500 claims), each
against `logbook export` (JSON Lines) of the same ledger, timed as subprocesses of the console
script, alternating, medians of LOGBOOK_BENCH_REPEAT (default 3); ratio <= 2.0 each.

The formats export verified data: they run after one analysis has kept this machine's checked
copy (as for a user who has run `report` on the ledger), so their check is the resumed one;
JSON Lines export checks nothing. The long format has one row per item: 9.6 million rows here.

Prints the ratios and never fails on them (exit 0): CI machines are noisy.
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
from _common import report
from audit import build

from logbook.crypto.signing import SigningKey

BIN = Path(sys.executable).parent


def main() -> None:
    repeat = int(os.environ.get("LOGBOOK_BENCH_REPEAT", "3"))
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-export-"))
    try:
        env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "cfg"),
               "LOGBOOK_STATE_DIR": str(tmp / "state")}
        env.pop("LOGBOOK_DIR", None)
        env.pop("LOGBOOK_KEY", None)
        t = time.perf_counter()
        with build(tmp / "ledger", SigningKey.generate()) as ledger:
            size = ledger.size()
        print(f"built a {size:,}-entry ledger in {time.perf_counter() - t:.1f} s", flush=True)
        logbook = [str(BIN / "logbook"), "--ledger", str(tmp / "ledger"), "export"]
        commands = {
            "jsonl": [*logbook, "--out", str(tmp / "out.jsonl")],
            "csv": [*logbook, "--format", "csv", "--out", str(tmp / "out.csv")],
            "parquet": [*logbook, "--format", "parquet", "--out", str(tmp / "out.parquet")],
        }
        subprocess.run([str(BIN / "logbook"), "--ledger", str(tmp / "ledger"), "brief"],
                       env=env, capture_output=True, check=True)  # the checked copy, kept
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repeat):
            for name, args in commands.items():
                t = time.perf_counter()
                r = subprocess.run(args, env=env, capture_output=True)
                times[name].append(time.perf_counter() - t)
                if r.returncode != 0:
                    raise SystemExit(f"benchmark step failed: {' '.join(args)}\n"
                                     f"{r.stderr.decode()}")
        t_jsonl = statistics.median(times["jsonl"])
        sizes = {name: (tmp / f"out.{name}").stat().st_size for name in commands}
        for name in ("csv", "parquet"):
            t_name = statistics.median(times[name])
            report(f"export --format {name}", t_name / t_jsonl, "<= 2.0",
                   f"{t_name:.2f} s ({sizes[name] / 1e6:,.0f} MB) vs JSON Lines "
                   f"{t_jsonl:.2f} s ({sizes['jsonl'] / 1e6:,.0f} MB) of {size:,} entries, "
                   f"medians of {repeat}, alternating")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
