"""C2SP tlog-tiles paths and encodings (logbook.tlog.tiles) against the spec's own examples,
and the tree read back from tiles against the RFC 6962 reference and the plain functions."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from logbook.tlog import merkle, tiles

DATA = Path(__file__).resolve().parents[1] / "data"
VECTORS = json.loads((DATA / "tiles" / "c2sp_tlog_tiles_vectors.json").read_text())
REFERENCE = json.loads((DATA / "merkle" / "rfc6962_reference.json").read_text())


@pytest.mark.parametrize("row", VECTORS["index_paths"], ids=lambda r: str(r["index"]))
def test_index_path_encoding_matches_the_spec(row: dict) -> None:
    assert tiles.encode_index(row["index"]) == row["path"]


@pytest.mark.parametrize("row", VECTORS["tile_paths"], ids=lambda r: r["path"])
def test_tile_path_matches_the_spec(row: dict) -> None:
    assert tiles.tile_path(row["level"], row["index"], row["width"]) == row["path"]


@pytest.mark.parametrize("row", VECTORS["bundle_paths"], ids=lambda r: r["path"])
def test_bundle_path_matches_the_spec(row: dict) -> None:
    assert tiles.bundle_path(row["index"], row["width"]) == row["path"]


@pytest.mark.parametrize("row", VECTORS["tree_sizes"], ids=lambda r: str(r["size"]))
def test_the_tiles_of_a_tree_are_the_specs(row: dict) -> None:
    got = tiles.tiles_of(row["size"])
    full: dict[str, int] = {}
    partial: dict[str, int] = {}
    for t in got:
        if t.full:
            full[str(t.level)] = full.get(str(t.level), 0) + 1
        else:
            assert str(t.level) not in partial, "one partial tile per level at most"
            partial[str(t.level)] = t.width
    assert full == row["full"] and partial == row["partial"]


@pytest.mark.parametrize("bad", [(-1, 0, 256), (64, 0, 256), (0, -1, 256), (0, 0, 0),
                                 (0, 0, 257), (True, 0, 256)])
def test_paths_refuse_what_the_spec_does_not_allow(bad: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError):
        tiles.tile_path(*bad)


def test_a_full_tile_is_8192_bytes_and_a_short_one_is_refused() -> None:
    hashes = [hashlib.sha256(bytes([i])).digest() for i in range(256)]
    data = tiles.encode_tile(hashes)
    assert len(data) == VECTORS["full_tile_bytes"]
    assert tiles.decode_tile(data, 256) == hashes
    with pytest.raises(ValueError, match="8191 bytes"):
        tiles.decode_tile(data[:-1], 256)


def test_bundles_are_uint16_big_endian_length_prefixed() -> None:
    leaves = [b"", b"\x01", bytes(300)]
    data = tiles.encode_bundle(leaves)
    assert data[:2] == b"\x00\x00" and data[2:5] == b"\x00\x01\x01"
    assert data[5:7] == (300).to_bytes(2, "big")
    assert tiles.decode_bundle(data) == leaves
    with pytest.raises(ValueError, match="runs past"):
        tiles.decode_bundle(data[:-1])
    with pytest.raises(ValueError, match="inside the length"):
        tiles.decode_bundle(b"\x00")


def _reader(leaves: list[bytes]) -> tuple[tiles.TileReader, list[tiles.TileId]]:
    """A reader over the tiles of these leaves, computed the way publish does, recording
    which tiles it read."""
    leaf_hashes = [merkle.leaf_hash(d) for d in leaves]
    read: list[tiles.TileId] = []

    def get(tid: tiles.TileId) -> list[bytes]:
        read.append(tid)
        assert tid in tiles.tiles_of(len(leaves)), f"{tid} is not a tile of this tree"
        row = tiles.level_hashes(leaf_hashes, tid.level)
        return row[tid.index * 256:tid.index * 256 + tid.width]

    return tiles.TileReader(len(leaves), get), read


def test_the_rfc6962_reference_tree_reads_back_from_its_tiles() -> None:
    leaves = [bytes.fromhex(x) for x in REFERENCE["leaf_inputs"]]
    for size in range(1, len(leaves) + 1):
        reader, _ = _reader(leaves[:size])
        assert reader.root().hex() == REFERENCE["roots_by_size"][size]
    for case in REFERENCE["consistency_proofs"]:
        if case["old_size"] == 0:
            continue
        reader, _ = _reader(leaves[:case["new_size"]])
        assert [h.hex() for h in reader.consistency_proof(case["old_size"])] == case["path"]


@pytest.mark.parametrize("size", [1, 255, 256, 257, 511, 512, 513, 65536, 65537, 70000])
def test_roots_and_proofs_from_tiles_match_the_plain_functions(size: int) -> None:
    leaves = [hashlib.sha256(b"entry %d" % i).digest() for i in range(size)]
    reader, read = _reader(leaves)
    assert reader.root() == merkle.root_hash(leaves)
    for old in sorted({1, size // 3 or 1, 256, 257, size - 1 or 1, size} - {0}):
        if old > size:
            continue
        proof = reader.consistency_proof(old)
        assert merkle.verify_consistency(old, size, merkle.root_hash(leaves[:old]),
                                         reader.root(), proof)
        if size <= 600:  # the O(n) reference recursion is slow past that
            assert proof == merkle.consistency_proof(leaves, old)
    assert len(set(read)) == len(read), "each tile is read once"


def test_a_node_the_tree_does_not_complete_is_refused() -> None:
    reader, _ = _reader([b"a", b"b", b"c"])
    with pytest.raises(LookupError):
        reader.node(2, 0)
    with pytest.raises(LookupError):
        reader.tile(0, 1)
