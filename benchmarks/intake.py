"""Budget (issue 32, item 10): admission costs the same at any plan size.

The time to append one counted run (the door's checks: metric, pins, suite identity and the
plan's item ids, the source) to a plan that already holds 5,000 runs, against the same append
to a plan that holds 10, on SQLite and on PostgreSQL (a private cluster, as benchmarks/team.py
starts one). Budget: <= 1.2 on each store. The door reads the plan's suite state from derived
rows (logbook.ledger.suite), so the ratio is that of two index lookups, not of reading 5,000
runs against 10.

Both plans live in one ledger (so the file, the tree and the index are the same size for both)
and the appends alternate between them: each figure is the median of ROUNDS appends.
Prints ratios and never fails on them: CI machines are noisy.

Run: python benchmarks/intake.py [RUNS_IN_THE_BIG_PLAN]   (default 5000)
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import report

SMALL, ROUNDS, N_ITEMS, BATCH = 10, 41, 50, 250
BUDGET = 1.2


def plan(slug: str, runs: int) -> dict[str, Any]:
    return {
        "slug": slug, "title": f"Plan {slug}", "decision": "ship or not",
        "hypothesis": "no difference", "runs_per_arm": runs, "min_effect": 0.05,
        "variable": ["kv_cache_precision"],
        "metric": {"name": "acc", "kind": "proportion", "higher_is_better": True},
        "suite": {"name": "suite", "version": "1", "n_items": N_ITEMS},
        "arms": [{"name": "f16", "role": "control"}, {"name": "q8", "role": "treatment"}],
        "success": [{"stat": "effect_low", "op": ">", "value": -0.05}],
        "failure": [{"stat": "effect_high", "op": "<", "value": -0.05}],
    }


def run(plan_digest: str, i: int) -> dict[str, Any]:
    rng = random.Random(i)
    arm = ("f16", "q8")[i % 2]
    ids = [f"item-{k:04d}" for k in range(N_ITEMS)]
    return {"plan": plan_digest, "arm": arm, "status": "completed",
            "apparatus": {"model": "m-7b", "engine": "llama.cpp", "kv_cache_precision": arm,
                          "dataset_hash": "sha256:" + "ab" * 32,
                          "decoding": {"temperature": 0.0, "seed": i}},
            "outcomes": {"metric": "acc", "id": ids,
                         "score": [float(rng.random() < 0.7) for _ in ids]}}


def measure(location: str, big: int) -> tuple[float, float]:
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.service import Ledger

    key = SigningKey.generate()
    with Ledger.init(location, "intake", key) as ledger:
        small_plan = ledger.append("plan", plan("small", 10 ** 6), key).digest
        big_plan = ledger.append("plan", plan("big", 10 ** 6), key).digest
        for p, n in ((small_plan, SMALL), (big_plan, big)):
            for start in range(0, n, BATCH):
                stop = min(n, start + BATCH)
                ledger.append_many([("run", run(p, i)) for i in range(start, stop)], key)
        times: dict[str, list[float]] = {small_plan: [], big_plan: []}
        for r in range(ROUNDS):
            for p in (small_plan, big_plan):
                body = run(p, 10 ** 6 + 2 * r + (p == big_plan))
                t = time.perf_counter()
                ledger.append("run", body, key)
                times[p].append(time.perf_counter() - t)
    return statistics.median(times[big_plan]), statistics.median(times[small_plan])


def main() -> None:
    big = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as tmp:
        t_big, t_small = measure(str(Path(tmp) / "lb"), big)
    report("intake (SQLite)", t_big / t_small, f"<= {BUDGET}",
           f"append of a run to a plan of {big} runs {t_big * 1e3:.2f} ms, to a plan of "
           f"{SMALL} runs {t_small * 1e3:.2f} ms (medians of {ROUNDS}, alternating)")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import pg_local as local  # the tests' private cluster

    try:
        cluster = local.start(password=uuid.uuid4().hex)
    except (RuntimeError, OSError) as exc:
        print(f"intake (PostgreSQL): not measured: {exc}")
        return
    import os

    os.environ["PGPASSWORD"] = cluster.password
    try:
        t_big, t_small = measure(cluster.create_database("intake"), big)
    finally:
        cluster.stop()
    report("intake (PostgreSQL)", t_big / t_small, f"<= {BUDGET}",
           f"append of a run to a plan of {big} runs {t_big * 1e3:.2f} ms, to a plan of "
           f"{SMALL} runs {t_small * 1e3:.2f} ms (medians of {ROUNDS}, alternating)")


if __name__ == "__main__":
    main()
