"""C2SP tlog-tiles: the tile and entry-bundle paths, their encodings, and the tree read from
tiles (docs/publishing.md). Pure: no I/O, nothing imported from logbook but the tree's hashes.

A published tree of size ``s`` is cut into tiles of height 8. The tile at level ``l`` holds
the hashes of tree level ``8 * l``, i.e. the roots of the full tiles one level below (at level
0, the leaf hashes); level ``l`` has ``s // 256**l`` such hashes, so ``(s // 256**l) // 256``
full tiles of 256 hashes and, when ``(s // 256**l) % 256`` is not 0, one partial tile of that
width. The entry bundle ``tile/entries/<N>`` holds the leaves of level-0 tile ``N``, each as a
big-endian uint16 length and the leaf's bytes (for logbook, the entry's 32-byte digest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logbook.tlog import merkle

__all__ = [
    "HEIGHT",
    "WIDTH",
    "TileId",
    "TileReader",
    "bundle_path",
    "decode_bundle",
    "decode_tile",
    "encode_bundle",
    "encode_index",
    "encode_tile",
    "level_hashes",
    "subtree_root",
    "tile_path",
    "tiles_of",
]

HEIGHT = 8
"""Tree levels a tile spans."""
WIDTH = 1 << HEIGHT
"""Hashes in a full tile (and leaves in a full entry bundle)."""
_MAX_LEVEL = 63


@dataclass(frozen=True, order=True)
class TileId:
    """One tile of a tree: its level, its index within the level, its width (256 is full)."""

    level: int
    index: int
    width: int

    @property
    def full(self) -> bool:
        return self.width == WIDTH

    @property
    def path(self) -> str:
        return tile_path(self.level, self.index, self.width)

    @property
    def bundle(self) -> str:
        """The path of the entry bundle beside a level-0 tile."""
        return bundle_path(self.index, self.width)


def encode_index(index: int) -> str:
    """A tile index as C2SP path elements: zero-padded groups of three digits, every group but
    the last prefixed with ``x`` (1234067 is ``x001/x234/067``)."""
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"tile index {index!r} is not a non-negative integer")
    groups = []
    while True:
        groups.append(f"{index % 1000:03d}")
        index //= 1000
        if index == 0:
            break
    groups.reverse()
    return "/".join([*("x" + g for g in groups[:-1]), groups[-1]])


def _suffix(width: int) -> str:
    if not isinstance(width, int) or isinstance(width, bool) or not 1 <= width <= WIDTH:
        raise ValueError(f"tile width {width!r} is outside 1..{WIDTH}")
    return "" if width == WIDTH else f".p/{width}"


def tile_path(level: int, index: int, width: int = WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]``: where the hash tile is served."""
    if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= _MAX_LEVEL:
        raise ValueError(f"tile level {level!r} is outside 0..{_MAX_LEVEL}")
    return f"tile/{level}/{encode_index(index)}{_suffix(width)}"


def bundle_path(index: int, width: int = WIDTH) -> str:
    """``tile/entries/<N>[.p/<W>]``: where the entry bundle of level-0 tile N is served."""
    return f"tile/entries/{encode_index(index)}{_suffix(width)}"


def tiles_of(size: int) -> list[TileId]:
    """Every tile a tree of ``size`` leaves is published as, level by level, left to right."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ValueError(f"tree size {size!r} is not a non-negative integer")
    out: list[TileId] = []
    level = 0
    while size >> (HEIGHT * level):
        hashes = size >> (HEIGHT * level)
        out.extend(TileId(level, n, WIDTH) for n in range(hashes // WIDTH))
        if hashes % WIDTH:
            out.append(TileId(level, hashes // WIDTH, hashes % WIDTH))
        level += 1
    return out


def encode_tile(hashes: Sequence[bytes]) -> bytes:
    """A tile's bytes: its hashes, concatenated."""
    if not 1 <= len(hashes) <= WIDTH or any(len(h) != merkle.HASH_SIZE for h in hashes):
        raise ValueError(f"a tile holds 1..{WIDTH} hashes of {merkle.HASH_SIZE} bytes")
    return b"".join(hashes)


def decode_tile(data: bytes, width: int) -> list[bytes]:
    """The ``width`` hashes of a tile's bytes; ValueError naming the length when it is not
    exactly ``width`` hashes (a truncated or padded tile)."""
    want = width * merkle.HASH_SIZE
    if len(data) != want:
        raise ValueError(f"it is {len(data)} bytes, not the {want} of {width} hashes")
    return [bytes(data[i:i + merkle.HASH_SIZE]) for i in range(0, want, merkle.HASH_SIZE)]


def encode_bundle(leaves: Sequence[bytes]) -> bytes:
    """An entry bundle: each leaf as a big-endian uint16 length and its bytes."""
    out = bytearray()
    for leaf in leaves:
        if len(leaf) > 0xFFFF:
            raise ValueError(f"a bundled entry is at most 65535 bytes, not {len(leaf)}")
        out += len(leaf).to_bytes(2, "big") + leaf
    return bytes(out)


def decode_bundle(data: bytes) -> list[bytes]:
    """The leaves of an entry bundle; ValueError when a length runs past the end."""
    out: list[bytes] = []
    pos = 0
    while pos < len(data):
        if pos + 2 > len(data):
            raise ValueError(f"it ends inside the length of entry {len(out)}")
        n = int.from_bytes(data[pos:pos + 2], "big")
        if pos + 2 + n > len(data):
            raise ValueError(f"entry {len(out)} runs past its end")
        out.append(bytes(data[pos + 2:pos + 2 + n]))
        pos += 2 + n
    return out


def subtree_root(hashes: Sequence[bytes]) -> bytes:
    """The root of a perfect subtree whose bottom row is ``hashes`` (a power of two of them)."""
    row = list(hashes)
    if not row or len(row) & (len(row) - 1):
        raise ValueError(f"{len(row)} hashes are not a perfect subtree's bottom row")
    while len(row) > 1:
        row = [merkle.node_hash(row[i], row[i + 1]) for i in range(0, len(row), 2)]
    return row[0]


def level_hashes(leaf_hashes: Sequence[bytes], level: int) -> list[bytes]:
    """The hashes tiles of ``level`` hold for a tree with these leaf hashes: the roots of the
    complete subtrees of 256**level leaves, left to right."""
    row = list(leaf_hashes)
    for _ in range(level):
        row = [subtree_root(row[i:i + WIDTH]) for i in range(0, len(row) - WIDTH + 1, WIDTH)]
    return row


GetTile = Callable[[TileId], list[bytes]]
"""Reads one tile's hashes (raising when it cannot be had or is malformed)."""


class TileReader:
    """The tree's complete-subtree hashes (``merkle.GetNode``) read from the tiles of a tree of
    ``size`` leaves, so that roots and proofs come from tiles alone. Each tile is read once."""

    def __init__(self, size: int, get_tile: GetTile) -> None:
        self.size = size
        self._get = get_tile
        self._cache: dict[TileId, list[bytes]] = {}

    def tile(self, level: int, index: int) -> list[bytes]:
        """The hashes of tile ``index`` of ``level`` in this tree (partial when rightmost)."""
        hashes = self.size >> (HEIGHT * level)
        if index > hashes // WIDTH or (index == hashes // WIDTH and hashes % WIDTH == 0):
            raise LookupError(f"a tree of {self.size} leaves has no tile {index} at level "
                              f"{level}")
        width = WIDTH if index < hashes // WIDTH else hashes % WIDTH
        tid = TileId(level, index, width)
        if tid not in self._cache:
            self._cache[tid] = self._get(tid)
        return self._cache[tid]

    def node(self, height: int, index: int) -> bytes:
        """The hash of the complete subtree of 2**height leaves starting at leaf
        ``index * 2**height``."""
        if (index + 1) << height > self.size:
            raise LookupError(f"node ({height}, {index}) is not complete in a tree of "
                              f"{self.size} leaves")
        level, rest = divmod(height, HEIGHT)
        first = index << rest
        row = self.tile(level, first // WIDTH)
        offset = first % WIDTH
        return subtree_root(row[offset:offset + (1 << rest)])

    def root(self) -> bytes:
        return merkle.root_from_nodes(self.size, self.node)

    def consistency_proof(self, old_size: int) -> list[bytes]:
        return merkle.consistency_proof_from_nodes(old_size, self.size, self.node)
