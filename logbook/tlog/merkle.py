"""RFC 9162 §2.1 Merkle tree hashing, proofs and proof verification (DESIGN §4.2).

Pure functions, no I/O, nothing imported from logbook, so an auditor can lift this file
out and check a ledger with it alone.

Two families:

* The plain functions (`root_hash`, `inclusion_proof`, `consistency_proof`) take the whole
  list of leaf data and follow the RFC's recursive definitions literally. They are O(n) and
  serve auditors and tests as the reference.
* The `*_from_nodes` functions read a table of complete (perfect) subtree hashes through
  `get_node(level, index)`, where node (level, index) is the hash of the 2**level leaves
  [index * 2**level, (index + 1) * 2**level) and level 0 holds leaf hashes. They make
  O(log n) `get_node` calls and give byte-identical output to the plain functions.

`verify_inclusion` and `verify_consistency` implement the RFC 9162 §2.1.3.2 and §2.1.4.2
algorithms and answer False, never raise, for any malformed input.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "HASH_SIZE",
    "GetNode",
    "Node",
    "all_nodes",
    "consistency_proof",
    "consistency_proof_from_nodes",
    "empty_root",
    "inclusion_proof",
    "inclusion_proof_from_nodes",
    "leaf_hash",
    "node_hash",
    "nodes_completed_by_append",
    "root_from_nodes",
    "root_hash",
    "roots_at",
    "verify_consistency",
    "verify_inclusion",
    "verify_inclusion_hash",
]

HASH_SIZE = 32
"""Length in bytes of every hash in the tree (SHA-256)."""

GetNode = Callable[[int, int], bytes]
"""Reads the stored hash of complete subtree node (level, index)."""

Node = tuple[int, int, bytes]
"""A stored row: (level, index, hash)."""

_LEAF_PREFIX = b"\x00"
_NODE_PREFIX = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    """SHA-256(0x00 || data): the hash of one leaf."""
    return hashlib.sha256(_LEAF_PREFIX + bytes(data)).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 || left || right): the hash of an interior node."""
    return hashlib.sha256(_NODE_PREFIX + bytes(left) + bytes(right)).digest()


def empty_root() -> bytes:
    """The root of the empty tree: SHA-256 of the empty string."""
    return hashlib.sha256(b"").digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n >= 2): where RFC 9162 splits a tree."""
    return 1 << ((n - 1).bit_length() - 1)


# --- reference functions over the full leaf list (O(n)) -----------------------------------


def _mth(hashes: Sequence[bytes], lo: int, hi: int) -> bytes:
    """MTH of the leaves whose leaf hashes are hashes[lo:hi] (hi > lo)."""
    n = hi - lo
    if n == 1:
        return hashes[lo]
    k = _split(n)
    return node_hash(_mth(hashes, lo, lo + k), _mth(hashes, lo + k, hi))


def root_hash(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) over the leaf data `leaves`; the empty tree's root is SHA-256("")."""
    if not leaves:
        return empty_root()
    hashes = [leaf_hash(d) for d in leaves]
    return _mth(hashes, 0, len(hashes))


def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """PATH(index, D[n]) per RFC 9162 §2.1.3.1: sibling hashes from the leaf up to the root.

    Raises ValueError unless 0 <= index < len(leaves).
    """
    n = len(leaves)
    if not 0 <= index < n:
        raise ValueError(f"leaf index {index} is outside a tree of {n} leaves")
    hashes = [leaf_hash(d) for d in leaves]

    def path(m: int, lo: int, hi: int) -> list[bytes]:
        if hi - lo == 1:
            return []
        k = _split(hi - lo)
        if m < k:
            return [*path(m, lo, lo + k), _mth(hashes, lo + k, hi)]
        return [*path(m - k, lo + k, hi), _mth(hashes, lo, lo + k)]

    return path(index, 0, n)


def consistency_proof(leaves: Sequence[bytes], old_size: int) -> list[bytes]:
    """PROOF(old_size, D[n]) per RFC 9162 §2.1.4.1, n = len(leaves).

    Raises ValueError unless 0 < old_size <= n: the RFC defines no proof from the empty tree
    (it would prove nothing). old_size == n gives the empty proof.
    """
    n = len(leaves)
    if not 0 < old_size <= n:
        raise ValueError(f"old size {old_size} is outside 1..{n}")
    hashes = [leaf_hash(d) for d in leaves]

    def subproof(m: int, lo: int, hi: int, whole: bool) -> list[bytes]:
        if m == hi - lo:
            return [] if whole else [_mth(hashes, lo, hi)]
        k = _split(hi - lo)
        if m <= k:
            return [*subproof(m, lo, lo + k, whole), _mth(hashes, lo + k, hi)]
        return [*subproof(m - k, lo + k, hi, False), _mth(hashes, lo, lo + k)]

    return subproof(old_size, 0, n, True)


# --- verification (RFC 9162 §2.1.3.2 and §2.1.4.2) ----------------------------------------


def _is_size(x: object) -> bool:
    # bool is an int subclass; True as a tree size is a caller's bug, not a size.
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _is_hash(x: object) -> bool:
    return isinstance(x, bytes | bytearray) and len(x) == HASH_SIZE


def _is_path(proof: object) -> bool:
    # Accept any list/tuple of hashes; a str or bytes is a sequence too, so exclude them.
    return isinstance(proof, list | tuple) and all(_is_hash(p) for p in proof)


def verify_inclusion_hash(
    leaf_hash_value: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> bool:
    """Whether `proof` shows the leaf with this leaf hash at `index` in the tree of `size`
    leaves with root `root` (RFC 9162 §2.1.3.2). Malformed input gives False."""
    if not (_is_size(index) and _is_size(size) and index < size):
        return False
    if not (_is_hash(leaf_hash_value) and _is_hash(root) and _is_path(proof)):
        return False
    fn, sn = index, size - 1
    r = bytes(leaf_hash_value)
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            # A left child with no right sibling (fn == sn, fn even): climb past the levels
            # where the RFC tree promotes the node unchanged.
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == bytes(root)


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> bool:
    """Whether `proof` shows leaf data `leaf` at `index` in the tree of `size` leaves with
    root `root`. The leaf is hashed here (0x00 prefix). Malformed input gives False."""
    if not isinstance(leaf, bytes | bytearray):
        return False
    return verify_inclusion_hash(leaf_hash(leaf), index, size, proof, root)


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """Whether `proof` shows the tree of `old_size` leaves with `old_root` is a prefix of the
    tree of `new_size` leaves with `new_root` (RFC 9162 §2.1.4.2).

    Requires 0 < old_size <= new_size; equal sizes need an empty proof and equal roots.
    A malformed proof, a hash that is not 32 bytes or a size out of range gives False.
    """
    if not (_is_size(old_size) and _is_size(new_size) and 0 < old_size <= new_size):
        return False
    if not (_is_hash(old_root) and _is_hash(new_root) and _is_path(proof)):
        return False
    old_root, new_root = bytes(old_root), bytes(new_root)
    if old_size == new_size:
        return len(proof) == 0 and old_root == new_root
    path = [bytes(p) for p in proof]
    if not path:
        return False
    if old_size & (old_size - 1) == 0:
        # The old tree is a perfect subtree of the new one, so its root is the first node
        # of the path and the proof leaves it out.
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0


# --- stored-tree variants (O(log n) get_node calls) ---------------------------------------


def all_nodes(leaves: Sequence[bytes]) -> list[Node]:
    """Every complete subtree node (level, index, hash) of the tree over `leaves`, level by
    level from the leaves up: what a store holds for this tree."""
    level_hashes = [leaf_hash(d) for d in leaves]
    out: list[Node] = [(0, i, h) for i, h in enumerate(level_hashes)]
    level = 0
    while len(level_hashes) >= 2:
        level += 1
        level_hashes = [
            node_hash(level_hashes[2 * i], level_hashes[2 * i + 1])
            for i in range(len(level_hashes) // 2)
        ]
        out.extend((level, i, h) for i, h in enumerate(level_hashes))
    return out


def nodes_completed_by_append(size: int, leaf: bytes, get_node: GetNode) -> list[Node]:
    """The rows that appending leaf data `leaf` at index `size` adds to the node table.

    The new leaf is node (0, size); while the node just made is a right child, its parent is
    now complete too. `get_node` reads only left siblings that already exist.
    """
    if not _is_size(size):
        raise ValueError(f"tree size {size!r} is not a non-negative integer")
    h = leaf_hash(leaf)
    rows: list[Node] = [(0, size, h)]
    level, index = 0, size
    while index & 1:
        h = node_hash(get_node(level, index - 1), h)
        level, index = level + 1, index >> 1
        rows.append((level, index, h))
    return rows


def _range_hash(lo: int, hi: int, get_node: GetNode) -> bytes:
    """MTH of leaves [lo, hi) from stored perfect subtrees.

    Valid for the ranges the RFC recursion produces: lo is a multiple of a power of two at
    least hi - lo, so the range splits left to right into perfect subtrees of decreasing
    size (the binary digits of hi - lo), and RFC 9162's split at the largest power of two
    makes the hash a right fold over them. At most log2(n) + 1 reads.
    """
    n = hi - lo
    parts: list[bytes] = []
    pos = lo
    for level in range(n.bit_length() - 1, -1, -1):
        if n >> level & 1:
            parts.append(get_node(level, pos >> level))
            pos += 1 << level
    h = parts[-1]
    for p in reversed(parts[:-1]):
        h = node_hash(p, h)
    return h


def root_from_nodes(size: int, get_node: GetNode) -> bytes:
    """root_hash of the first `size` leaves, read from the node table."""
    if not _is_size(size):
        raise ValueError(f"tree size {size!r} is not a non-negative integer")
    if size == 0:
        return empty_root()
    return _range_hash(0, size, get_node)


def inclusion_proof_from_nodes(index: int, size: int, get_node: GetNode) -> list[bytes]:
    """inclusion_proof(leaves[:size], index), read from the node table.

    Walks the RFC recursion top-down; only the first step into a left half can meet a
    non-perfect sibling (the right edge of the tree), so reads stay O(log n).
    """
    if not (_is_size(index) and _is_size(size) and index < size):
        raise ValueError(f"leaf index {index} is outside a tree of {size} leaves")
    top_down: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            top_down.append(_range_hash(lo + k, hi, get_node))
            hi = lo + k
        else:
            # [lo, lo + k) is a perfect subtree of k leaves.
            top_down.append(get_node(k.bit_length() - 1, lo // k))
            lo += k
    top_down.reverse()
    return top_down


def consistency_proof_from_nodes(old_size: int, new_size: int, get_node: GetNode) -> list[bytes]:
    """consistency_proof(leaves[:new_size], old_size), read from the node table."""
    if not (_is_size(old_size) and _is_size(new_size) and 0 < old_size <= new_size):
        raise ValueError(f"old size {old_size} is outside 1..{new_size}")
    top_down: list[bytes] = []
    m, lo, hi, whole = old_size, 0, new_size, True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            top_down.append(_range_hash(lo + k, hi, get_node))
            hi = lo + k
        else:
            top_down.append(get_node(k.bit_length() - 1, lo // k))
            m, lo, whole = m - k, lo + k, False
    if not whole:
        # The RFC's SUBPROOF ends with the hash of the old tree's last subtree unless that
        # subtree is the whole old tree, which the verifier already holds as old_root.
        top_down.append(_range_hash(lo, hi, get_node))
    top_down.reverse()
    return top_down


def roots_at(digests: Iterable[bytes], sizes: Iterable[int]) -> dict[int, bytes]:
    """The root of the tree of each of ``sizes`` (1 and up) over the entries whose digests
    ``digests`` gives in order: one pass, holding only the complete subtrees on the right edge
    (a size beyond the digests given has no root in the answer)."""
    want = sorted({n for n in sizes if n >= 1})
    out: dict[int, bytes] = {}
    edge: list[tuple[int, bytes]] = []  # (height, hash) of complete subtrees, left to right
    at = 0
    for n, digest in enumerate(digests, 1):
        if at == len(want):
            break
        edge.append((0, leaf_hash(digest)))
        while len(edge) > 1 and edge[-1][0] == edge[-2][0]:
            (height, left), (_, right) = edge[-2], edge[-1]
            edge[-2:] = [(height + 1, node_hash(left, right))]
        while at < len(want) and want[at] == n:
            root = edge[-1][1]
            for _, left in reversed(edge[:-1]):
                root = node_hash(left, root)
            out[n] = root
            at += 1
    return out
