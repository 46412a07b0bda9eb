"""The spot-check draw (docs/format.md §5, "Checks"): which items of a run a `spot-check`
looks at, from the run's digest and a seed alone, so that anyone can draw them again and
nobody picks the items a check sees.

The population is the run's distinct item ids in the order of its outcomes. Draw ``k`` is
made with the 64-bit integer read big-endian from the first 8 bytes of
SHA-256(``"logbook.spot-check.v1\\n" || run digest (64 hex) || "\\n" || seed (decimal) ||
"\\n" || k (decimal)``): a partial Fisher-Yates shuffle swaps position ``k`` with position
``k + (x mod (N - k))`` for k = 0, 1, ..., n - 1; the first ``min(n, N)`` positions are the
items drawn, in that order.
"""

from __future__ import annotations

import hashlib

TAG = b"logbook.spot-check.v1\n"


def draw(run_digest: str, ids: list[str], n: int, seed: int) -> list[str]:
    """The ``n`` items (at most every one) a spot-check of the run looks at."""
    pool = list(dict.fromkeys(ids))
    for k in range(min(n, len(pool))):
        h = hashlib.sha256(TAG + f"{run_digest}\n{seed}\n{k}".encode()).digest()
        j = k + int.from_bytes(h[:8], "big") % (len(pool) - k)
        pool[k], pool[j] = pool[j], pool[k]
    return pool[:min(n, len(pool))]
