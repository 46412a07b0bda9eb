"""Verifying a published ledger (docs/publishing.md) from its tiles and entries alone, read
from a folder or over HTTP(S): nothing here signs, and nothing is written.

`verify_published` reads the ``checkpoint``, every level-0 tile and entry bundle the
checkpoint's size calls for, the higher tiles, and the signed entries
(``logbook/entries/<N>``); it checks that every bundled digest hashes to its tile's leaf,
that every higher tile holds the roots of the tiles below, that the root read from the tiles
is the checkpoint's, that the entries (chain, signatures, references: `verify`'s checks on
an export) have exactly those digests, and that the checkpoint is signed by a key the ledger
had at that size (by the ``--trust`` key when one is given). Every problem is a finding.
"""

from __future__ import annotations

import base64
import binascii
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import orjson

from logbook.crypto.public import PublicKey
from logbook.errors import CheckFailed, EnvironmentProblem, InputError
from logbook.findings import Finding
from logbook.reading import max_input_bytes, read_timeout
from logbook.tlog import merkle, tiles
from logbook.tlog.checkpoint import parse_checkpoint, verify_checkpoint_signature
from logbook.verify.chain import Result
from logbook.verify.export_lines import verify_export_lines
from logbook.verify.proofs import Parsed, origin_of

__all__ = ["DirSource", "HttpSource", "Published", "Source", "entries_path", "is_published",
           "open_source", "verify_published"]

CHECKPOINT_LIMIT = 64 * 1024
TILE_LIMIT = tiles.WIDTH * merkle.HASH_SIZE
BUNDLE_LIMIT = tiles.WIDTH * (2 + merkle.HASH_SIZE)
KEYS_PATH = "logbook/keys.json"


def entries_path(tile: tiles.TileId) -> str:
    """Where the signed entries of level-0 tile ``tile`` are published."""
    return "logbook/entries/" + tile.bundle.removeprefix("tile/entries/")


class Source(Protocol):
    """Where a published ledger is read from: ``get`` answers None for a file that is not
    there, raises EnvironmentProblem when the source cannot be reached, and InputError when a
    file is larger than ``limit``."""

    name: str

    def get(self, rel: str, limit: int) -> bytes | None: ...


class DirSource:
    """A published ledger in a local folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.name = str(root)

    def get(self, rel: str, limit: int) -> bytes | None:
        from logbook.inside import read_inside

        data = read_inside(self.root, rel, limit, "published file")  # never a FIFO's wait
        if data is not None and len(data) > limit:
            raise InputError(f"{self.root / rel} is larger than the {limit} bytes it may hold")
        return data


class HttpSource:
    """A published ledger served over HTTP(S): each file read with the read timeout and at
    most its size limit."""

    def __init__(self, url: str) -> None:
        from logbook.capture.redact import strip_url_credentials

        self.base = url.rstrip("/") + "/"
        self.name = strip_url_credentials(url)  # what messages and JSON name it by
        try:
            urllib.parse.urlsplit(self.base)
        except ValueError as exc:
            raise InputError(f"{self.name} is not a URL that can be fetched ({exc})") from None

    def get(self, rel: str, limit: int) -> bytes | None:
        from logbook.verify.fetch import request

        answer = request(urllib.parse.urljoin(self.base, rel), self._shown(rel), limit,
                         read_timeout())
        if answer.status in (404, 410):
            return None
        if answer.status != 200:
            raise EnvironmentProblem(f"{self._shown(rel)} answered HTTP {answer.status} "
                                     f"{answer.reason}")
        if len(answer.body) > limit:
            raise InputError(f"{self._shown(rel)} is larger than the {limit} bytes it may hold")
        return answer.body

    def _shown(self, rel: str) -> str:
        return urllib.parse.urljoin(self.name.rstrip("/") + "/", rel)


def is_published(location: str) -> bool:
    """Whether a `verify` argument names a published ledger: a URL, or a folder holding a
    ``checkpoint`` (any other folder is refused as an export file that is a folder)."""
    return location.startswith(("http://", "https://")) or \
        (Path(location).is_dir() and (Path(location) / "checkpoint").is_file())


def open_source(location: str) -> Source:
    if location.startswith(("http://", "https://")):
        return HttpSource(location)
    if not Path(location).is_dir():
        raise InputError(f"{location} is neither a folder nor an http(s):// URL")
    return DirSource(Path(location))


@dataclass
class Published:
    """What verifying a published ledger found: the chain's result (findings included), the
    checkpoint, and every file read (path -> bytes), for a mirror to keep."""

    result: Result
    note: str
    checkpoint: Parsed
    files: dict[str, bytes] = field(default_factory=dict)
    signed_by: str | None = None


def read_checkpoint(source: Source) -> tuple[str, Parsed]:
    data = source.get("checkpoint", CHECKPOINT_LIMIT)
    if data is None:
        raise InputError(f"{source.name} is not a published ledger: it has no checkpoint")
    try:
        parsed = parse_checkpoint(data)
    except InputError as exc:  # what the source serves, not what the user typed: a check fails
        raise CheckFailed(f"{source.name}/checkpoint is not a checkpoint: {exc}") from None
    return data.decode("utf-8"), parsed


class _Reader:
    """Reads and records the files of one source, turning what is wrong into findings."""

    def __init__(self, source: Source, result: Result) -> None:
        self.source, self.result = source, result
        self.files: dict[str, bytes] = {}

    def find(self, message: str, seq: int | None = None) -> None:
        self.result.findings.append(Finding("published", "error", message, seq, []))

    def get(self, rel: str, limit: int) -> bytes | None:
        return self.kept(rel, self.source.get(rel, limit))

    def kept(self, rel: str, data: bytes | None) -> bytes | None:
        """``data`` read from ``rel`` recorded, or its absence found."""
        if data is None:
            self.find(f"{rel} is missing from {self.source.name}")
            return None
        self.files[rel] = data
        return data

    def tile(self, tid: tiles.TileId, read: bytes | None = None) -> list[bytes]:
        """The hashes of a tile (``read``: its bytes, already fetched)."""
        data = self.get(tid.path, TILE_LIMIT) if read is None else self.kept(tid.path, read)
        if data is None:
            raise LookupError(f"{tid.path} is missing")
        try:
            return tiles.decode_tile(data, tid.width)
        except ValueError as exc:
            self.find(f"{tid.path} is damaged: {exc}")
            raise LookupError(f"{tid.path} is damaged") from None


def tile_hashes(fetch: Callable[[str, int], bytes | None],
                tid: tiles.TileId) -> list[bytes]:
    """The hashes of tile ``tid`` as ``fetch`` gives its file; LookupError naming the file
    when it is missing or damaged (a GetTile for tiles.TileReader)."""
    data = fetch(tid.path, TILE_LIMIT)
    if data is None:
        raise LookupError(f"{tid.path} is missing")
    try:
        return tiles.decode_tile(data, tid.width)
    except ValueError as exc:
        raise LookupError(f"{tid.path} is damaged: {exc}") from None


def level0(size: int) -> Iterator[tiles.TileId]:
    """The level-0 tiles of a tree of ``size`` leaves, made one at a time (a checkpoint may
    claim 2^64 entries: nothing is built for the size before a file shows it is real)."""
    for index in range((size + tiles.WIDTH - 1) // tiles.WIDTH):
        yield tiles.TileId(0, index, min(tiles.WIDTH, size - index * tiles.WIDTH))


def _leaves(reader: _Reader, size: int) -> list[bytes | None]:
    """The digests of the entry bundles, each checked against its level-0 tile's leaf hash
    (None where a bundle or tile is missing or disagrees). Where both a tile and its bundle
    are missing the published tree ends: one finding, and nothing further is asked for."""
    digests: list[bytes | None] = []
    for tid in level0(size):
        lo = tid.index * tiles.WIDTH
        tile = reader.source.get(tid.path, TILE_LIMIT)
        bundle = reader.source.get(tid.bundle, BUNDLE_LIMIT)
        if tile is None and bundle is None:
            reader.find(f"{tid.path} and {tid.bundle} are missing from {reader.source.name}: "
                        f"the published tree ends before entry {lo}, and the checkpoint "
                        f"claims {size}")
            break
        hashes: list[bytes] | None = None
        if tile is None:
            reader.find(f"{tid.path} is missing from {reader.source.name}")
        else:
            try:
                hashes = reader.tile(tid, tile)
            except LookupError:
                hashes = None
        data = reader.kept(tid.bundle, bundle)
        leaves: list[bytes] = []
        if data is not None:
            try:
                leaves = tiles.decode_bundle(data)
            except ValueError as exc:
                reader.find(f"{tid.bundle} is damaged: {exc}")
            if leaves and len(leaves) != tid.width:
                reader.find(f"{tid.bundle} holds {len(leaves)} entries, not {tid.width}")
        for i in range(tid.width):
            leaf = leaves[i] if i < len(leaves) else None
            if leaf is not None and len(leaf) != merkle.HASH_SIZE:
                reader.find(f"{tid.bundle}: entry {lo + i} is {len(leaf)} bytes, not a "
                            "32-byte digest", lo + i)
                leaf = None
            if leaf is not None and hashes is not None and merkle.leaf_hash(leaf) != hashes[i]:
                reader.find(f"{tid.bundle}: entry {lo + i}'s digest does not hash to leaf "
                            f"{i} of {tid.path}", lo + i)
                leaf = None
            digests.append(leaf)
    return digests


def _higher_tiles(reader: _Reader, size: int, digests: list[bytes]) -> None:
    """Every tile above level 0 holds the roots of the full tiles below it."""
    leaf_hashes = [merkle.leaf_hash(d) for d in digests]
    levels: dict[int, list[bytes]] = {}
    for tid in (t for t in tiles.tiles_of(size) if t.level > 0):
        if tid.level not in levels:
            levels[tid.level] = tiles.level_hashes(leaf_hashes, tid.level)
        try:
            got = reader.tile(tid)
        except LookupError:
            continue
        lo = tid.index * tiles.WIDTH
        if got != levels[tid.level][lo:lo + tid.width]:
            reader.find(f"{tid.path} does not hold the roots of the tiles below it")


def _entry_lines(reader: _Reader, size: int,
                 on_progress: Callable[[int, int], None] | None = None) -> Iterator[bytes]:
    for tid in level0(size):
        if on_progress is not None:
            on_progress(tid.index * tiles.WIDTH, size)
        data = reader.get(entries_path(tid), max_input_bytes())
        if data is None:
            break  # the published entries end here: the count says so, once
        lines = [] if data is None else data.splitlines(keepends=True)
        if data is not None and len(lines) != tid.width:
            reader.find(f"{entries_path(tid)} holds {len(lines)} entries, not {tid.width}",
                        tid.index * tiles.WIDTH)
        yield from lines
    if on_progress is not None:
        on_progress(size, size)


def _signer(result: Result, parsed: Parsed, trusted: PublicKey | None,
            trusted_fp: str | None, signed_by: Sequence[bytes] = ()) -> PublicKey | None:
    """The key that signed the checkpoint: the trusted one, or a key the ledger had when it
    held that many entries (added by an entry before it, not revoked by one before it).
    ``signed_by``: raw keys whose signatures on this very checkpoint the caller checked
    already; a candidate that is one of them is not checked again."""
    size = parsed[0].size
    candidates: list[PublicKey] = []
    if trusted is not None:
        candidates.append(trusted)
    else:
        for fp, _name, public, added, revoked in result.keys:
            if trusted_fp is not None:
                if fp != trusted_fp:
                    continue
            elif not (added < size and (revoked is None or revoked >= size)):
                continue
            try:
                candidates.append(PublicKey(base64.b64decode(public, validate=True)))
            except (binascii.Error, ValueError):
                continue
    return next((k for k in candidates if k.raw in signed_by
                 or verify_checkpoint_signature(parsed, [k.raw])), None)


def verify_published(source: Source, trusted_fp: str | None = None,
                     trusted: PublicKey | None = None, strict: bool = False,
                     on_progress: Callable[[int, int], None] | None = None,
                     signed_by: Sequence[bytes] = ()) -> Published:
    """Verify the published ledger ``source`` holds; every problem is a finding of the result
    (a missing checkpoint is InputError, an unreachable source EnvironmentProblem).
    ``on_progress(done, total)`` is called per tile of entries read (a progress bar);
    ``signed_by``: raw keys the caller found signed this checkpoint (not checked again)."""
    note, parsed = read_checkpoint(source)
    cp = parsed[0]
    probe = Result()
    reader = _Reader(source, probe)
    reader.files["checkpoint"] = note.encode("utf-8")
    if cp.size == 0:
        reader.find("the published checkpoint has size 0: an empty ledger is not verified")
        return Published(probe, note, parsed, reader.files)
    if trusted is not None and trusted.raw not in signed_by \
            and not verify_checkpoint_signature(parsed, [trusted.raw]):
        # its size is a claim of whoever signed it: nothing is read for it
        reader.find("the published checkpoint is not signed by the trusted key: nothing "
                    "was read for the size it claims")
        return Published(probe, note, parsed, reader.files)
    digests = _leaves(reader, cp.size)
    known = [d for d in digests if d is not None]
    if len(known) == cp.size:
        _higher_tiles(reader, cp.size, known)
        try:
            root = tiles.TileReader(cp.size, reader.tile).root()
        except LookupError:
            root = None
        if root is not None and root != cp.root:
            reader.find(f"the tiles give the root {root.hex()[:16]}… at size {cp.size}, not "
                        f"the checkpoint's {cp.root.hex()[:16]}…")
    result = verify_export_lines(_entry_lines(reader, cp.size, on_progress), trusted_fp,
                                 source=f"{source.name}/logbook/entries", strict=strict)
    return conclude(reader, probe, result, note, parsed, digests, 0, trusted, trusted_fp,
                    [trusted.raw] if trusted is not None else signed_by)


def conclude(reader: _Reader, probe: Result, result: Result, note: str, parsed: Parsed,
             digests: Sequence[bytes | None], first: int, trusted: PublicKey | None,
             trusted_fp: str | None, signed_by: Sequence[bytes] = ()) -> Published:
    """What every check of a published ledger ends with, whether it read the entries from 0
    or only those from ``first`` (logbook.verify.mirror_tail): the tree's findings first, the
    count, each entry's digest against its bundle's (``digests``, from ``first``), the
    checkpoint's origin and signer (each signature checked once: ``signed_by`` are the keys
    the caller found signed it), and the keys document."""
    cp = parsed[0]
    result.findings[:0] = probe.findings
    result.checks += 1
    if result.entries != cp.size:
        result.findings.append(Finding("published", "error", f"the published entries are "
                                       f"{result.entries}, not the checkpoint's {cp.size}",
                                       None, []))
    for seq, (want, got) in enumerate(zip(digests, result.digests, strict=False), first):
        if want is not None and want != got:
            result.findings.append(Finding("published", "error", f"entry {seq} does not have "
                                           "the digest its entry bundle publishes", seq, []))
    if result.ledger is None or cp.origin != origin_of(result.ledger):
        result.findings.append(Finding("checkpoint", "error", f"the checkpoint's origin "
                                       f"{cp.origin!r} does not name the published ledger",
                                       None, []))
    signer = _signer(result, parsed, trusted, trusted_fp, signed_by)
    if signer is None:
        who = "the trusted key" if trusted_fp else "a key the ledger had at its size"
        result.findings.append(Finding("checkpoint", "error", "the published checkpoint is "
                                       f"not signed by {who}", None, []))
    _check_keys(reader, result)
    return Published(result, note, parsed, reader.files,
                     signer.fingerprint if signer is not None else None)


def _check_keys(reader: _Reader, result: Result) -> None:
    """``logbook/keys.json`` lists the keys the entries define, no more, no fewer."""
    data = reader.get(KEYS_PATH, CHECKPOINT_LIMIT * 16)
    if data is None:
        return
    try:
        doc = orjson.loads(data)
        listed = sorted((k["fingerprint"], k["public"]) for k in doc["keys"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        result.findings.append(Finding("published", "error", f"{KEYS_PATH} is not a keys "
                                       "document", None, []))
        return
    if listed != sorted((fp, public) for fp, _n, public, _a, _r in result.keys):
        result.findings.append(Finding("published", "error", f"{KEYS_PATH} does not list the "
                                       "keys the published entries define", None, []))
