"""The Merkle tree a checkpoint signs or a proof is cut from, recomputed from the entries.

The stored tree table is a derived index (DESIGN §5): it speeds up proofs, but nothing is signed
or proved from it unchecked. ``recomputed_tree`` hashes every entry's stored bytes, builds the
tree over those digests, and compares it with the stored digests and tree rows over the same
entries; any disagreement is a CheckFailed (exit 1) naming the first node at fault, and nothing
is signed or proved.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from logbook.errors import CheckFailed
from logbook.storage.base import EntryLog
from logbook.tlog import merkle
from logbook.verify.derived import HASH, _level_hashes

FIX = "run `logbook verify` to see what else is wrong, and `logbook reindex` to rebuild it"


@dataclass(frozen=True)
class Tree:
    """The tree over the first ``size`` entries, from their bytes: each level's complete
    subtree hashes packed 32 bytes a node (level 0: the leaf hashes), about 64 bytes an entry
    in all, whatever the ledger's size."""

    size: int
    levels: list[bytes | bytearray]

    def node(self, level: int, idx: int) -> bytes:
        if 0 <= level < len(self.levels) and 0 <= idx < len(self.levels[level]) // HASH:
            return bytes(self.levels[level][idx * HASH:(idx + 1) * HASH])
        raise LookupError(f"tree node ({level}, {idx}) is beyond the ledger")

    def root(self, size: int) -> bytes:
        if not 0 <= size <= self.size:
            raise LookupError(f"no tree of size {size} in a ledger of {self.size} entries")
        return merkle.root_from_nodes(size, self.node)


def recomputed_tree(store: EntryLog) -> Tree:
    """The tree over every entry's digest, recomputed from the bytes; CheckFailed when the
    stored digests or tree rows disagree with it (a corrupted or tampered index)."""
    digests = bytearray()
    for seq, stored_digest, raw, _sig, stored_as in store.raw_entries():
        if stored_as != "blob":  # text, or a number: not the bytes logbook wrote
            raise CheckFailed(f"entry {seq} is stored as SQLite {stored_as}, not the bytes "
                              f"logbook wrote: the ledger file was altered; run logbook verify")
        digest = hashlib.sha256(bytes(raw)).digest()
        if stored_digest != digest.hex():
            raise CheckFailed(f"the stored digest of entry {seq} is not the hash of its bytes: "
                              f"the ledger's index is corrupt; {FIX}")
        digests += digest
    n = len(digests) // HASH
    leaves = b"".join(merkle.leaf_hash(bytes(digests[i:i + HASH]))
                      for i in range(0, len(digests), HASH))
    levels: list[bytes | bytearray] = [leaves]
    del digests
    while len(levels[-1]) >= 2 * HASH:
        levels.append(_level_hashes(levels[-1], b"\x01"))
    seen = 0
    for level, idx, h in store.derived_rows("tree"):
        if (idx + 1) << level > n:
            continue  # over entries appended since they were read
        seen += 1
        want = levels[level][idx * HASH:(idx + 1) * HASH] if 0 < level < len(levels) else None
        if want != bytes(h):
            raise CheckFailed(f"the ledger's stored Merkle tree disagrees with its entries at "
                              f"node ({level}, {idx}), over entries {idx << level}–"
                              f"{((idx + 1) << level) - 1}: nothing was signed or proved; "
                              f"{FIX}")
    expected = sum(len(lv) // HASH for lv in levels[1:])
    if seen != expected:
        raise CheckFailed(f"the ledger's stored Merkle tree lacks {expected - seen} of its "
                          f"{expected} nodes: nothing was signed or proved; {FIX}")
    return Tree(n, levels)
