"""Budget (issue 4): on a 100,000-entry ledger, one inclusion proof and one consistency proof
(the functions `logbook prove` calls, in-process) against the time of appending one entry
(in-process `ledger.append`), each ratio <= 1.0; and append throughput with the Merkle tree
maintained against the same append loop with the tree switched off (must not fall by more
than 10%).

Prints ratios and never fails on them: CI machines are noisy.
"""

from __future__ import annotations

import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import median_time as timed
from _common import report

from logbook.crypto.signing import SigningKey
from logbook.ledger import checkpoints
from logbook.ledger.service import Ledger
from logbook.tlog import merkle

SIZE = 100_000
BATCH = 1000


def build(folder: Path, key: SigningKey, size: int) -> Ledger:
    folder.mkdir()
    ledger = Ledger.init(folder, "bench", key)
    n = 1
    while n < size:
        count = min(BATCH, size - n)
        ledger.append_many([("note", {"text": f"note {n + i}", "refs": []})
                            for i in range(count)], key)
        n += count
    return ledger


def proofs(tmp: Path, key: SigningKey) -> None:
    t = time.perf_counter()
    ledger = build(tmp / "big", key, SIZE)
    built = time.perf_counter() - t
    print(f"built a {SIZE:,}-entry ledger in {built:.1f} s "
          f"({SIZE / built:,.0f} entries/s in batches of {BATCH})", flush=True)
    rng = random.Random(4)
    n = ledger.size()

    def one_inclusion() -> None:
        checkpoints.inclusion_proof(ledger, rng.randrange(n), n)

    def one_consistency() -> None:
        checkpoints.consistency_proof(ledger, rng.randrange(1, n), n)

    i = [0]

    def one_append() -> None:
        i[0] += 1
        ledger.append("note", {"text": f"timed note {i[0]}", "refs": []}, key)

    one_inclusion()
    one_consistency()
    one_append()  # warm caches for all three
    t_append = timed(one_append, 51)
    n = ledger.size()
    t_inclusion = timed(one_inclusion, 501)
    t_consistency = timed(one_consistency, 501)
    ledger.close()
    detail = f"median append {t_append * 1e3:.2f} ms at {n:,} entries"
    report("proofs: inclusion", t_inclusion / t_append, "<= 1.0",
           f"median inclusion proof {t_inclusion * 1e3:.3f} ms; {detail}")
    report("proofs: consistency", t_consistency / t_append, "<= 1.0",
           f"median consistency proof {t_consistency * 1e3:.3f} ms; {detail}")


def throughput(tmp: Path, key: SigningKey, singles: int = 400, rounds: int = 15) -> None:
    """The same append loops on two ledgers, one with the tree switched off. Single appends
    alternate one by one between the two (fsync latency comes in bursts on a shared disk, so
    both must see the same bursts); batches alternate round by round. Medians throughout."""
    with_tree = build(tmp / "tree", key, 2000)
    real = merkle.nodes_completed_by_append

    def no_tree(*args: object, **kwargs: object) -> list[merkle.Node]:
        return []

    def timed_on(ledger: Ledger, tree: bool, fn: Callable[[Ledger], None]) -> float:
        merkle.nodes_completed_by_append = real if tree else no_tree  # type: ignore[assignment]
        try:
            t = time.perf_counter()
            fn(ledger)
            return time.perf_counter() - t
        finally:
            merkle.nodes_completed_by_append = real

    merkle.nodes_completed_by_append = no_tree  # type: ignore[assignment]
    try:
        without = build(tmp / "notree", key, 2000)
    finally:
        merkle.nodes_completed_by_append = real
    def tree_rows(ledger: Ledger) -> int:
        return sum(1 for _ in ledger.entry_log.derived_rows("tree"))

    assert tree_rows(without) == 0 and tree_rows(with_tree) > 0

    def single(ledger: Ledger) -> None:
        ledger.append("note", {"text": "single", "refs": []}, key)

    def batched(ledger: Ledger) -> None:
        ledger.append_many([("note", {"text": f"batched {j}", "refs": []})
                            for j in range(BATCH)], key)

    for name, loop, repeat, per in (("one entry per transaction", single, singles, 1),
                                    (f"{BATCH} entries per transaction", batched, rounds,
                                     BATCH)):
        times: dict[bool, list[float]] = {True: [], False: []}
        for r in range(repeat):
            for tree in ((True, False) if r % 2 == 0 else (False, True)):
                times[tree].append(timed_on(with_tree if tree else without, tree, loop))
        on = per / statistics.median(times[True])
        off = per / statistics.median(times[False])
        report(f"append throughput, tree kept vs not ({name})", on / off, ">= 0.90",
               f"{on:,.0f} vs {off:,.0f} entries/s (median of {repeat} interleaved "
               f"{'appends' if per == 1 else 'batches'} each)")
    with_tree.close()
    without.close()


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-proofs-"))
    key = SigningKey.generate()
    try:
        t = time.perf_counter()
        proofs(tmp, key)
        throughput(tmp, key)
        print(f"total {time.perf_counter() - t:.0f} s", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
