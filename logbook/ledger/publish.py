"""Publishing a ledger as a C2SP tlog-tiles tree (docs/publishing.md): the write side's half
(verifying a published tree is logbook.verify.published's).

`publish` writes, into a folder any static web server can serve:

* ``checkpoint``: the latest signed checkpoint (a new one is made when the ledger grew);
* ``tile/<L>/<N>[.p/<W>]``: the hash tiles; ``tile/entries/<N>[.p/<W>]``: the entry bundles,
  whose leaves are the entries' 32-byte digests;
* ``logbook/entries/<N>[.p/<W>]``: the same entries with their signatures, as the JSON Lines
  of ``logbook export``, bundled by the same index;
* ``logbook/keys.json``: the ledger's public keys and their verifier key strings.

Tiles and bundles are immutable: a file already there is left alone when its bytes are the
ones this ledger gives, and publishing refuses (exit 1) when they differ, since that folder
then holds another history. Only the checkpoint and the keys are replaced, and the checkpoint
last, so a reader never sees a checkpoint whose tiles are not there yet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from logbook.crypto.signing import SigningKey
from logbook.errors import CheckFailed, InputError
from logbook.inside import read_inside, write_inside
from logbook.ledger.checkpoints import latest_checkpoint, make_checkpoint
from logbook.ledger.service import Ledger
from logbook.tlog import merkle, tiles
from logbook.tlog.note import verifier_key
from logbook.verify.proofs import origin_of
from logbook.verify.published import KEYS_PATH, entries_path

__all__ = ["Published", "held_checkpoint", "keys_document", "publish", "put_checkpoint"]

@dataclass
class Published:
    """What one `publish` did: the checkpoint's size, whether it was made now, and the files
    written (those already there with the same bytes are not)."""

    size: int
    new_checkpoint: bool
    written: list[str] = field(default_factory=list)
    kept: int = 0


def _write(dest: Path, rel: str, data: bytes, out: Published, immutable: bool) -> None:
    """``dest/rel`` holds ``data``; never written through a symlink (logbook.inside)."""
    try:
        there = read_inside(dest, rel, len(data), "the published file")
    except InputError:  # a symlink, FIFO or device planted there: replaced, never followed
        there = None
    if there is not None:
        if there == data:
            out.kept += 1
            return
        if immutable:
            raise CheckFailed(f"{dest / rel} already holds other bytes: that folder publishes "
                              "another history of this ledger (or another ledger), and "
                              "published tiles are never rewritten")
    write_inside(dest, rel, data, "the published file")
    out.written.append(rel)


def publish(ledger: Ledger, dest: Path, load_key: Callable[[], SigningKey],
            on_progress: Callable[[int, int], None] | None = None) -> Published:
    """Write the ledger's latest checkpoint and its tiles into ``dest``; ``load_key`` is called
    only when a new checkpoint must be signed (the ledger grew since the last one).
    ``on_progress(done, total)`` is called as the entries are read (a progress bar)."""
    found = latest_checkpoint(ledger)
    if found is None or found[1][0].size != ledger.size():
        note = make_checkpoint(ledger, load_key())  # verifies the ledger first (exit 1)
        made = True
    else:
        note, made = found[0], False
    from logbook.tlog.checkpoint import parse_checkpoint

    cp, _ = parse_checkpoint(note)
    if cp.origin != origin_of(ledger.uuid):  # pragma: no cover - the ledger made it
        raise CheckFailed(f"the latest checkpoint is for {cp.origin}, not this ledger")
    lines: list[bytes] = []
    digests: list[bytes] = []
    for entry in ledger.entries():
        if entry.seq >= cp.size:
            break
        lines.append(orjson.dumps(entry.export_line()) + b"\n")
        digests.append(hashlib.sha256(entry.raw).digest())
        if on_progress is not None and entry.seq % 1000 == 999:
            on_progress(entry.seq + 1, cp.size)
    if len(digests) != cp.size or merkle.root_hash(digests) != cp.root:
        raise CheckFailed(f"the ledger's first {cp.size} entries do not give the root of its "
                          "latest checkpoint: run `logbook verify`")
    out = Published(cp.size, made)
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"DIR {dest} cannot be created: {exc.strerror}") from None
    leaf_hashes = [merkle.leaf_hash(d) for d in digests]
    levels: dict[int, list[bytes]] = {}
    for tid in tiles.tiles_of(cp.size):
        if tid.level not in levels:
            levels[tid.level] = tiles.level_hashes(leaf_hashes, tid.level)
        lo = tid.index * tiles.WIDTH
        _write(dest, tid.path, tiles.encode_tile(levels[tid.level][lo:lo + tid.width]), out,
               True)
        if tid.level == 0:
            _write(dest, tid.bundle, tiles.encode_bundle(digests[lo:lo + tid.width]), out, True)
            _write(dest, entries_path(tid), b"".join(lines[lo:lo + tid.width]), out, True)
    _write(dest, KEYS_PATH, keys_document(ledger, cp.origin), out, False)
    _write(dest, "checkpoint", note.encode("utf-8"), out, False)
    if on_progress is not None:
        on_progress(cp.size, cp.size)
    return out


def held_checkpoint(dest: Path) -> str | None:
    """The checkpoint ``dest`` publishes (None when there is none yet, or when a symlink, FIFO
    or device stands at its path: publishing replaces that)."""
    try:
        held = read_inside(dest, "checkpoint", 64 * 1024, "the published checkpoint") \
            if dest.is_dir() else None
    except InputError:
        return None
    return None if held is None else held.decode("utf-8", "replace")


def put_checkpoint(dest: Path, note: str) -> None:
    """Replace the published checkpoint (by the same one cosigned), inside ``dest``."""
    write_inside(dest, "checkpoint", note.encode("utf-8"), "the published checkpoint")


def keys_document(ledger: Ledger, origin: str) -> bytes:
    """``logbook/keys.json``: every key the ledger has had, with the entries that added and
    revoked it, and its C2SP verifier key (the ledger's entries are what a verifier trusts;
    this file is for people and other note readers)."""
    import base64

    keys = []
    for fingerprint, name, public, added, revoked in ledger.reads.signing_keys():
        raw = base64.b64decode(public)
        keys.append({"fingerprint": fingerprint, "name": name, "public": public,
                     "added": added, "revoked": revoked,
                     "verifier_key": verifier_key(origin, raw)})
    doc = {"ledger": ledger.uuid, "origin": origin, "keys": keys}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
