"""Budget (issues 7 and 22): `logbook report` on a plan with 2 arms x 10 runs x 10,000 items
and x 100,000 items, as a ratio to `logbook verify` of the same ledger (both read
everything); budget <= 2.0 at both sizes (no cliff in the bootstrap as items grow).

Run: python benchmarks/report.py [ITEMS ...]   (default: 10000 100000)
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import compare_commands


def build(folder: Path, n_items: int = 10_000) -> None:
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.service import Ledger

    key = SigningKey.generate()
    (folder / "key").write_text("")
    ledger = Ledger.init(folder, "bench", key)
    plan = {"slug": "bench-plan", "title": "report benchmark", "runs_per_arm": 10,
            "metric": {"name": "acc", "kind": "proportion"},
            "suite": {"name": "s", "version": "1", "n_items": n_items},
            "arms": [{"name": "a", "role": "control"}, {"name": "b", "role": "treatment"}],
            "success": [{"stat": "effect_low", "op": ">", "value": -0.01}]}
    p = ledger.append("plan", plan, key)
    rng = random.Random(0)
    ids = [f"item-{i:06d}" for i in range(n_items)]
    base = [rng.random() < 0.7 for _ in ids]
    for k in range(10):
        for arm in ("a", "b"):
            score = [None if rng.random() < 0.01 else float(b != (rng.random() < 0.05))
                     for b in base]
            ledger.append("run", {
                "plan": p.digest, "arm": arm, "status": "completed",
                "apparatus": {"model": "m", "decoding": {"seed": k}},
                "outcomes": {"metric": "acc", "id": ids, "score": score,
                             "error": [None if s is not None else "timeout" for s in score]}},
                key)
    ledger.close()


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    for n_items in sizes:
        tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-report-"))
        try:
            build(tmp, n_items)
            env = {**os.environ, "LOGBOOK_DIR": str(tmp), "LOGBOOK_STATE_DIR": "off"}
            compare_commands(f"report (2 arms x 10 runs x {n_items:,} items)",
                             ["report", "bench-plan", "--json"], ["verify"], "<= 2.0", env,
                             repeat=7 if n_items <= 10_000 else 3)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
