"""`logbook mirror`: a verified local copy of a published ledger, kept up to date, that
catches a log which forks or rolls back (docs/publishing.md). Nothing here signs; the only
folder written is the mirror's own.

One round (`mirror_once`): fetch the source's checkpoint; when the mirror holds an older one,
the new one must be signed by a key the mirror already knows, must not be smaller, must not
carry another root at the same size, and must be consistent with the old one by a proof
computed from the source's tiles; otherwise `SecurityError`, with the new checkpoint kept as
evidence beside the old, which is never overwritten. Then the whole published tree is
verified (`verify_published`), reading tiles and entries the mirror already holds from its
own copy, and only what was fetched is written, the checkpoint last. With witnesses given,
the new checkpoint must also carry a quorum of their cosignatures (checked after the fork
checks, so that a fork is a SECURITY ERROR whether or not it was witnessed).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from logbook.crypto.public import PublicKey
from logbook.errors import CheckFailed, InputError
from logbook.inside import read_inside, write_inside
from logbook.tlog import merkle, tiles
from logbook.tlog.checkpoint import checkpoint_signers, parse_checkpoint
from logbook.verify.chain import Result
from logbook.verify.cosignatures import WitnessKey, quorum_of
from logbook.verify.proofs import Parsed
from logbook.verify.published import (
    KEYS_PATH,
    TILE_LIMIT,
    DirSource,
    Source,
    read_checkpoint,
    tile_hashes,
    verify_published,
)

__all__ = ["Mirrored", "SecurityError", "mirror_once"]

_MUTABLE = ("checkpoint", KEYS_PATH)
EVIDENCE = "mirror/evidence"
HISTORY = "mirror/checkpoints"


class SecurityError(CheckFailed):
    """The source contradicts a checkpoint the mirror verified before (exit 1)."""


@dataclass
class Mirrored:
    result: Result
    size: int
    old_size: int
    fetched: list[str] = field(default_factory=list)


class _Cached:
    """The source, except that immutable files the mirror holds are read from its copy and
    the checkpoint is the one already fetched (it may change on the source meanwhile)."""

    def __init__(self, local: Path, remote: Source, note: bytes) -> None:
        self.local, self.remote, self.note = DirSource(local), remote, note
        self.name = remote.name
        self.fetched: dict[str, bytes] = {}

    def get(self, rel: str, limit: int) -> bytes | None:
        if rel == "checkpoint":
            return self.note
        if rel in self.fetched:  # each file is fetched once a round, however often it is read
            return self.fetched[rel]
        if rel not in _MUTABLE:
            held = self.local.get(rel, limit)
            if held is not None:
                return held
        return self.from_source(rel, limit)

    def from_source(self, rel: str, limit: int) -> bytes | None:
        """``rel`` as the source serves it (fetched once a round), never the mirror's copy:
        what proves the source's own tree (a fork shows in its own tiles)."""
        if rel in self.fetched:
            return self.fetched[rel]
        data = self.remote.get(rel, limit)
        if data is not None:
            self.fetched[rel] = data
        return data


def _known_keys(dest: Path, trusted: PublicKey | None) -> list[bytes]:
    if trusted is not None:
        return [trusted.raw]
    try:
        held = read_inside(dest, KEYS_PATH, TILE_LIMIT, "the mirrored keys")
        if held is None:
            raise KeyError(KEYS_PATH)
        doc = orjson.loads(held)
        return [base64.b64decode(k["public"], validate=True) for k in doc["keys"]]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, binascii.Error):
        raise InputError(f"DEST {dest} holds a checkpoint but no readable {KEYS_PATH}: it is "
                         "not a mirror logbook made") from None


def _evidence(dest: Path, note: str, size: int, root: bytes) -> Path:
    rel = f"{EVIDENCE}/checkpoint.{size}.{root.hex()[:16]}"
    write_inside(dest, rel, note.encode("utf-8"), "the evidence file")
    return dest / rel


def _check_extends(remote: Source, dest: Path, note: str, new: Parsed, old: Parsed,
                   trusted: PublicKey | None,
                   fetch: Callable[[str, int], bytes | None]) -> list[bytes]:
    """SecurityError unless the new checkpoint (validly signed) extends the old one; the raw
    keys whose signatures on it verified (so that each is checked once a round)."""
    cp, was = new[0], old[0]
    if cp.origin != was.origin:
        raise InputError(f"DEST {dest} mirrors {was.origin}, not {cp.origin}")
    signed_by = checkpoint_signers(new, _known_keys(dest, trusted))
    if not signed_by:
        raise CheckFailed(f"the checkpoint of {remote.name} is not signed by a key the mirror "
                          "knows: nothing was changed")
    kept = dest / "checkpoint"

    def accuse(what: str) -> SecurityError:
        proof = _evidence(dest, note, cp.size, cp.root)
        return SecurityError(f"{remote.name} {what}; both checkpoints are kept as evidence: "
                             f"{kept} (size {was.size}) and {proof} (size {cp.size})")

    if cp.size < was.size:
        raise accuse(f"rolled back: its checkpoint has {cp.size} entries, fewer than the "
                     f"{was.size} of the checkpoint verified before")
    if cp.size == was.size:
        if cp.root != was.root:
            raise accuse(f"forked: its checkpoint of size {cp.size} has root "
                         f"{cp.root.hex()[:16]}…, not the {was.root.hex()[:16]}… verified "
                         "before")
        return signed_by

    reader = tiles.TileReader(cp.size, lambda tid: tile_hashes(fetch, tid))
    try:
        root = reader.root()
        proof = reader.consistency_proof(was.size)
    except LookupError as exc:
        raise CheckFailed(f"{remote.name} cannot prove its checkpoint: {exc}") from None
    if root != cp.root:
        raise CheckFailed(f"the tiles of {remote.name} do not give its checkpoint's root: "
                          "nothing was changed")
    if not merkle.verify_consistency(was.size, cp.size, was.root, cp.root, proof):
        raise accuse(f"forked: its tree of {cp.size} entries does not extend the "
                     f"{was.size} verified before (the consistency proof fails)")
    return signed_by


def _unchanged(remote: Source, dest: Path, note: str, held: bytes, new: Parsed,
               witnessed: tuple[Sequence[WitnessKey], int] | None) -> Mirrored:
    """A round with nothing new (the checkpoint's size and root are the ones verified
    before): one request (the checkpoint), no tile or entry read again. The mirror's own copy
    was verified when it was written; its head is the last leaf it holds. A checkpoint newly
    cosigned (another note of the same tree) replaces the kept one."""
    cp = new[0]
    if witnessed is not None:
        problem = quorum_of(note, *witnessed)
        if problem is not None:
            raise CheckFailed(f"the checkpoint of {remote.name} is not witnessed: {problem}; "
                              "nothing was changed")
    index = (cp.size - 1) // tiles.WIDTH
    last = tiles.TileId(0, index, cp.size - index * tiles.WIDTH)
    bundle = read_inside(dest, last.bundle, TILE_LIMIT, "the mirrored entries")
    try:
        leaves = tiles.decode_bundle(bundle) if bundle is not None else []
    except ValueError:
        leaves = []
    if len(leaves) != last.width or len(leaves[-1]) != 32:
        raise CheckFailed(f"DEST {dest} lacks {last.bundle}, which it verified before: "
                          "it was altered (mirror into a new folder to start again)")
    result = Result(entries=cp.size, head=leaves[-1].hex(),
                    ledger=cp.origin.removeprefix("logbook/"))
    result.checks += 1
    if note.encode("utf-8") != held:
        write_inside(dest, "checkpoint", note.encode("utf-8"), "the mirrored checkpoint")
    return Mirrored(result, cp.size, cp.size)


def mirror_once(remote: Source, dest: Path, trusted_fp: str | None = None,
                trusted: PublicKey | None = None,
                witnessed: tuple[Sequence[WitnessKey], int] | None = None,
                on_progress: Callable[[int, int], None] | None = None) -> Mirrored:
    """One round of mirroring ``remote`` into ``dest``; see the module's text. With
    ``witnessed`` (witness keys, quorum), the source's checkpoint must carry that many valid
    cosignatures by distinct given witnesses, or nothing is changed (exit 1)."""
    from logbook.verify.mirror_tail import load_state, save_state, verify_tail

    note, new = read_checkpoint(remote)
    cached = _Cached(dest, remote, note.encode("utf-8"))
    old_size = 0
    state = None
    signed_by: list[bytes] = []
    held = read_inside(dest, "checkpoint", 64 * 1024, "DEST's checkpoint") \
        if dest.is_dir() else None
    if held is not None:
        try:
            old = parse_checkpoint(held)
        except InputError as exc:
            raise InputError(f"DEST {dest / 'checkpoint'} is not a checkpoint: {exc}") \
                from None
        signed_by = _check_extends(remote, dest, note, new, old, trusted, cached.from_source)
        old_size = old[0].size
        if new[0].size == old_size:  # same root, signed by a known key: nothing new to read
            return _unchanged(remote, dest, note, held, new, witnessed)
        state = load_state(dest, old)  # what the check of the entries after old_size needs
    if witnessed is not None:  # after the fork checks: a fork is a SECURITY ERROR, witnessed or not
        problem = quorum_of(note, *witnessed)
        if problem is not None:
            raise CheckFailed(f"the checkpoint of {remote.name} is not witnessed: {problem}; "
                              "nothing was changed")
    if state is not None:  # the tree proved to extend the one verified: only what is new
        published = verify_tail(cached, dest, state, note, new, trusted_fp, signed_by)
    else:
        published = verify_published(cached, trusted_fp, trusted, on_progress=on_progress,
                                     signed_by=signed_by)
    done = Mirrored(published.result, new[0].size, old_size)
    if not published.result.ok:
        return done
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"DEST {dest} cannot be created: {exc.strerror}") from None
    for rel, data in sorted(cached.fetched.items()):
        if rel in _MUTABLE:
            continue
        write_inside(dest, rel, data, "the mirrored file")
        done.fetched.append(rel)
    keys = published.files.get(KEYS_PATH)
    if keys is not None:
        write_inside(dest, KEYS_PATH, keys, "the mirrored keys")
    save_state(dest, published)
    write_inside(dest, f"{HISTORY}/{new[0].size}", note.encode("utf-8"),
                 "the mirrored checkpoint")
    write_inside(dest, "checkpoint", note.encode("utf-8"), "the mirrored checkpoint")
    return done
