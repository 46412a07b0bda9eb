"""Budget (issue 9): `logbook brief --json` on a 100,000-entry ledger, as a ratio to
`logbook log -n 20 --json` on the same ledger; budget <= 3.0. The brief is resumed from this
machine's checked copy, as an agent's brief at every step is; the brief that checks the whole
ledger (the first on a machine) is printed beside it.

Since issue 35, `log` reads through the same check as `brief` (resumed from the copy: about
50 ms more here), so the peer got slower; the ratio to a command that opens the ledger and
reads no entry (`log --checkpoints`, the peer's cost before) is printed beside it, with no
budget, so that the change of peer hides nothing."""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import compare_commands, shared_ledger


def build(folder: Path, plans: int = 4000, runs_per_arm: int = 12) -> int:
    """4,000 plans of 2 arms x 12 runs (of 20 items), notes and retractions: ~100,000 entries."""
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.service import Ledger

    key = SigningKey.generate()
    ledger = Ledger.init(folder, "bench", key)
    rng = random.Random(0)
    ids = [f"q{i}" for i in range(20)]
    for p in range(plans):
        plan = ledger.append("plan", {
            "slug": f"plan-{p}", "title": f"plan {p}", "runs_per_arm": runs_per_arm,
            "metric": {"name": "acc", "kind": "proportion"},
            "suite": {"name": "s", "version": "1", "n_items": 20},
            "arms": [{"name": "a", "role": "control"}, {"name": "b", "role": "treatment"}]},
            key)
        short = p % 10 == 0  # a tenth of the plans are still open
        drafts = []
        for k in range(runs_per_arm - (2 if short else 0)):
            for arm in ("a", "b"):
                drafts.append(("run", {
                    "plan": plan.digest, "arm": arm, "status": "completed",
                    "session": f"s{p // 50}", "apparatus": {"model": "m", "seed": k},
                    "outcomes": {"metric": "acc", "id": ids,
                                 "score": [float(rng.random() < 0.7) for _ in ids]}}))
        drafts.append(("note", {"text": f"plan {p} done", "refs": [plan.digest]}))
        entries = ledger.append_many(drafts, key)
        if p % 100 == 0:
            ledger.append("retraction", {"target": entries[0].digest, "reason": "bad run",
                                         "category": "harness_defect"}, key)
    size = ledger.size()
    ledger.close()
    return size


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-brief-"))
    try:
        size = shared_ledger("brief", tmp, build)
        env = {**os.environ, "LOGBOOK_DIR": str(tmp), "LOGBOOK_STATE_DIR": str(tmp / "state")}
        # an agent's brief: resumed from this machine's last check of the ledger (the warm-up
        # run makes the checked copy; docs/auditing.md §7)
        compare_commands(f"brief ({size:,} entries)", ["brief", "--json"],
                         ["log", "-n", "20", "--json"], "<= 3.0", env)
        compare_commands(f"brief vs a command that reads no entry ({size:,} entries)",
                         ["brief", "--json"], ["log", "--checkpoints", "--json"],
                         "(no budget: the peer `log -n 20` was before issue 35)", env)
        # and with nothing kept: the whole ledger checked by every brief (a figure printed
        # beside the budget, not one: timed once)
        compare_commands(f"brief checked in full ({size:,} entries)", ["brief", "--json"],
                         ["log", "-n", "20", "--json"], "(no budget: the first brief on a "
                         "machine)", {**env, "LOGBOOK_STATE_DIR": "off"}, repeat=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
