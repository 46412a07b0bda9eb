"""A mirror's round that verifies only what is new (issue 34, item 9; docs/publishing.md).

A round of `logbook mirror` that verified the published ledger at size n leaves, beside the
copy, what a check of the entries after n needs (``mirror/state.json``): n, the root and head
at n, the ledger's id and its key history. The next round, once the new checkpoint is signed
by a known key and proved consistent with the one at n (logbook.verify.mirror), verifies:

* the tree: the root of the new size, computed from the complete subtrees at n (read from
  the mirror's own tiles) and the leaves after n (the new entry bundles), must be the new
  checkpoint's root, and every new or grown tile must hold the hashes that tree gives;
* the entries after n, as a full check would, carried on from n: their digests are the new
  leaves, their chain starts at the head at n, their signatures are checked under the key
  history at n and the keys they change, and their references resolve (an entry at or below
  n is looked up in the mirror's copy, by its digest);
* the keys document and the checkpoint's signer, as a full check does.

What was verified at n is not read again, so a round costs the new entries and O(log n)
tree nodes. A state that does not match the checkpoint the mirror holds (another size or
root, unreadable) is not used: the round verifies everything, as a first mirror does.
Imports nothing that signs.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from logbook.crypto.points import public_key_problem
from logbook.inside import read_inside, write_inside
from logbook.reading import max_input_bytes
from logbook.tlog import merkle, tiles
from logbook.verify.chain import ChainVerifier, ExpectedKeys, Result
from logbook.verify.export_lines import verify_export_lines
from logbook.verify.proofs import Parsed
from logbook.verify.published import (
    BUNDLE_LIMIT,
    Published,
    Source,
    _Reader,
    conclude,
    entries_path,
    level0,
    tile_hashes,
)

__all__ = ["STATE", "load_state", "save_state", "verify_tail"]

STATE = "mirror/state.json"
_FORMAT = 1


def save_state(dest: Path, published: Published) -> None:
    """What the next round carries on from, for the tree and chain ``published`` verified."""
    cp, r = published.checkpoint[0], published.result
    doc = {"format": _FORMAT, "size": cp.size, "root": cp.root.hex(), "head": r.head,
           "ledger": r.ledger, "keys": [list(row) for row in r.keys]}
    write_inside(dest, STATE, orjson.dumps(doc), "the mirror's state")


def load_state(dest: Path, held: Parsed) -> dict[str, Any] | None:
    """The state of the checkpoint the mirror holds, or None (none, unreadable, another)."""
    try:
        data = read_inside(dest, STATE, 64 * 1024 * 1024, "the mirror's state")
        doc = orjson.loads(data) if data is not None else None
    except (orjson.JSONDecodeError, OSError, ValueError):
        return None
    cp = held[0]
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT or doc.get("size") != cp.size \
            or doc.get("root") != cp.root.hex() or not isinstance(doc.get("head"), str) \
            or not isinstance(doc.get("ledger"), str) or not isinstance(doc.get("keys"), list):
        return None
    return doc


class _HeldKinds(dict[bytes, str]):
    """The kinds the chain check resolves references with: the new entries' as they are
    checked, an entry at or below n by its digest in the mirror's copy (read when first
    asked, since most updates name a plan or a run from before)."""

    def __init__(self, dest: Path, size: int) -> None:
        super().__init__()
        self.dest, self.size = dest, size
        self._seqs: dict[bytes, int] | None = None

    def get(self, key: bytes, default: Any = None) -> Any:
        if key in self:
            return self[key]
        if self._seqs is None:
            self._seqs = self._index()
        seq = self._seqs.get(key)
        if seq is None:
            return default
        kind = self._kind(seq)
        if kind is not None:
            self[key] = kind
        return kind if kind is not None else default

    def _index(self) -> dict[bytes, int]:
        seqs: dict[bytes, int] = {}
        for tid in level0(self.size):
            data = read_inside(self.dest, tid.bundle, BUNDLE_LIMIT, "the mirrored entries")
            try:
                leaves = tiles.decode_bundle(data) if data is not None else []
            except ValueError:
                leaves = []
            for i, leaf in enumerate(leaves[:tid.width]):
                seqs[leaf] = tid.index * tiles.WIDTH + i
        return seqs

    def _kind(self, seq: int) -> str | None:
        tid = tiles.TileId(0, seq // tiles.WIDTH, min(tiles.WIDTH, self.size - seq // tiles.WIDTH
                                                      * tiles.WIDTH))
        data = read_inside(self.dest, entries_path(tid), max_input_bytes(),
                           "the mirrored entries")
        lines = data.splitlines() if data is not None else []
        try:
            kind = orjson.loads(lines[seq % tiles.WIDTH])["entry"]["kind"]
        except (IndexError, orjson.JSONDecodeError, KeyError, TypeError):
            return None
        return kind if isinstance(kind, str) else None


def _seeded(dest: Path, state: dict[str, Any]) -> tuple[ChainVerifier, ExpectedKeys]:
    """A chain check carried on from the state's size, head and key history."""
    size = int(state["size"])
    chain = ChainVerifier()
    chain.expected_seq, chain.prev = size, str(state["head"])
    chain.result.entries, chain.result.head = size, str(state["head"])
    chain.result.ledger = str(state["ledger"])
    chain.kinds = _HeldKinds(dest, size)
    keys = ExpectedKeys()
    for row in state["keys"]:
        fp, name, public, added, revoked = row
        keys.keys[str(fp)] = [fp, name, public, added, revoked]
        if revoked is not None:
            chain.revoked.add(str(fp))
            continue
        try:
            raw = base64.b64decode(str(public), validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(raw) == 32 and public_key_problem(raw) is None:
            chain.valid[str(fp)] = raw
    return chain, keys


def verify_tail(source: Source, dest: Path, state: dict[str, Any], note: str, parsed: Parsed,
                trusted_fp: str | None, signed_by: Sequence[bytes] = ()) -> Published:
    """Verify the published ledger ``source`` from the size ``state`` was verified at (see
    the module's text); ``source`` reads what the mirror holds from its copy."""
    cp = parsed[0]
    old = int(state["size"])
    probe = Result()
    reader = _Reader(source, probe)
    reader.files["checkpoint"] = note.encode("utf-8")
    new_leaves = _new_leaves(reader, old, cp.size)
    if len(new_leaves) == cp.size - old:
        _check_tree(reader, dest, old, cp.size, cp.root, new_leaves)
    chain, keys = _seeded(dest, state)
    result = verify_export_lines(_tail_lines(reader, old, cp.size), None,
                                 source=f"{source.name}/logbook/entries", chain=chain,
                                 keys=keys)
    return conclude(reader, probe, result, note, parsed, new_leaves, old, None, trusted_fp,
                    signed_by)


def _new_leaves(reader: _Reader, old: int, size: int) -> list[bytes]:
    """The digests of entries ``old`` to ``size`` - 1, from their bundles, each checked
    against its level-0 tile; shorter when one is missing or wrong (each said)."""
    out: list[bytes] = []
    for tid in level0(size):
        if (tid.index + 1) * tiles.WIDTH <= old:
            continue
        try:
            hashes = reader.tile(tid)
        except LookupError:
            return out
        data = reader.get(tid.bundle, BUNDLE_LIMIT)
        try:
            leaves = tiles.decode_bundle(data) if data is not None else []
        except ValueError as exc:
            reader.find(f"{tid.bundle} is damaged: {exc}")
            return out
        if len(leaves) != tid.width:
            reader.find(f"{tid.bundle} holds {len(leaves)} entries, not {tid.width}")
            return out
        lo = tid.index * tiles.WIDTH
        before = _held_leaves(reader, tid, old) if lo < old else []
        for i, leaf in enumerate(leaves):
            if len(leaf) != merkle.HASH_SIZE or merkle.leaf_hash(leaf) != hashes[i]:
                reader.find(f"{tid.bundle}: entry {lo + i}'s digest does not hash to leaf "
                            f"{i} of {tid.path}", lo + i)
                return out
            if lo + i >= old:
                out.append(leaf)
            elif i >= len(before) or before[i] != leaf:
                reader.find(f"{tid.bundle}: entry {lo + i} is not the one the mirror verified "
                            "at that place", lo + i)
                return out
    return out


def _held_leaves(reader: _Reader, tid: tiles.TileId, old: int) -> list[bytes]:
    """The digests the mirror verified in the part of ``tid`` below ``old`` (its partial
    bundle at that size, read from the mirror's copy)."""
    part = tiles.TileId(0, tid.index, old - tid.index * tiles.WIDTH)
    data = reader.source.get(part.bundle, BUNDLE_LIMIT)
    try:
        return tiles.decode_bundle(data) if data is not None else []
    except ValueError:
        return []


def _check_tree(reader: _Reader, dest: Path, old: int, size: int, root: bytes,
                leaves: list[bytes]) -> None:
    """The root of ``size`` leaves, from the complete subtrees at ``old`` in the mirror's
    tiles and the new leaves, is the checkpoint's; every tile past ``old`` holds it."""
    held = tiles.TileReader(old, lambda tid: tile_hashes(
        lambda rel, limit: read_inside(dest, rel, limit, "the mirrored tiles"), tid))
    memo: dict[tuple[int, int], bytes] = {}

    def node(level: int, index: int) -> bytes:
        lo, hi = index << level, (index + 1) << level
        if hi <= old:
            return held.node(level, index)
        if (level, index) not in memo:
            memo[level, index] = merkle.leaf_hash(leaves[lo - old]) if level == 0 else \
                merkle.node_hash(node(level - 1, 2 * index), node(level - 1, 2 * index + 1))
        return memo[level, index]

    try:
        got = merkle.root_from_nodes(size, node)
    except LookupError as exc:
        reader.find(f"the mirror's own tiles cannot give the tree it verified: {exc}")
        return
    if got != root:
        reader.find(f"the tiles give the root {got.hex()[:16]}… at size {size}, not the "
                    f"checkpoint's {root.hex()[:16]}…")
        return
    for tid in tiles.tiles_of(size):
        span = tiles.WIDTH << (tiles.HEIGHT * tid.level)
        if tid.level == 0 or (tid.index + 1) * span <= old:
            continue  # level 0 was held to the leaves; a tile below old was verified then
        try:
            hashes = reader.tile(tid)
        except LookupError:
            continue
        first = tid.index * tiles.WIDTH
        if hashes != [node(tiles.HEIGHT * tid.level, first + j) for j in range(tid.width)]:
            reader.find(f"{tid.path} does not hold the roots of the tiles below it")


def _tail_lines(reader: _Reader, old: int, size: int) -> Iterator[bytes]:
    """The export lines of entries ``old`` to ``size`` - 1."""
    for tid in level0(size):
        if (tid.index + 1) * tiles.WIDTH <= old:
            continue
        data = reader.get(entries_path(tid), max_input_bytes())
        if data is None:
            return
        lines = data.splitlines(keepends=True)
        if len(lines) != tid.width:
            reader.find(f"{entries_path(tid)} holds {len(lines)} entries, not {tid.width}",
                        tid.index * tiles.WIDTH)
        yield from lines[max(0, old - tid.index * tiles.WIDTH):]
