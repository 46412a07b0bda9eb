"""Checking a proof offline (`logbook verify-proof`), with nothing but the proof, the checkpoint
and a public key (DESIGN §4.2; RFC 9162 §2.1.3.2 and §2.1.4.2). ``logbook.verify.checkpoint``
re-exports these.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from logbook.crypto.public import PublicKey
from logbook.errors import InputError
from logbook.tlog import merkle
from logbook.tlog.checkpoint import Checkpoint, verify_checkpoint_signature
from logbook.tlog.note import NoteSignature

ORIGIN_PREFIX = "logbook/"
Parsed = tuple[Checkpoint, list[NoteSignature]]


def origin_of(ledger_uuid: str) -> str:
    """The checkpoint origin (and note key name) of a ledger: `logbook/<uuid>`."""
    return ORIGIN_PREFIX + ledger_uuid


# --- checking a proof offline -------------------------------------------------------------

_INCLUSION = ("ledger", "index", "size", "leaf", "root", "path")
_CONSISTENCY = ("ledger", "old_size", "old_root", "size", "root", "path")


@dataclass(frozen=True)
class Proof:
    """A parsed proof: kind "inclusion" (index, leaf) or "consistency" (old_size, old_root)."""

    kind: str
    ledger: str
    size: int
    root: bytes
    path: list[bytes]
    index: int = 0
    leaf: bytes = b""
    old_size: int = 0
    old_root: bytes = b""


def _hash(value: Any, where: str) -> bytes:
    if not isinstance(value, str) or len(value) != 64 or value.lower() != value:
        raise InputError(f"{where} must be 64 lowercase hex digits")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise InputError(f"{where} must be 64 lowercase hex digits") from None


def _size(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(f"{where} must be a non-negative integer")
    return value


def parse_proof(value: Any, source: str) -> Proof:
    """A proof JSON value as `logbook prove --json` prints it; InputError naming the field."""
    if not isinstance(value, dict):
        raise InputError(f"{source}: a proof must be a JSON object")
    kind, fields = ("consistency", _CONSISTENCY) if "old_size" in value else \
        ("inclusion", _INCLUSION)
    for name in fields:
        if name not in value:
            raise InputError(f"{source}: {name} is required in an {kind} proof")
    extra = sorted(set(value) - set(fields))
    if extra:
        raise InputError(f"{source}: {extra[0]!r} is not a field of an {kind} proof")
    if not isinstance(value["ledger"], str) or not value["ledger"]:
        raise InputError(f"{source}: ledger must be the ledger's uuid")
    if not isinstance(value["path"], list):
        raise InputError(f"{source}: path must be a list of hashes")
    path = [_hash(h, f"{source}: path[{i}]") for i, h in enumerate(value["path"])]
    ledger: str = value["ledger"]
    size = _size(value["size"], f"{source}: size")
    root = _hash(value["root"], f"{source}: root")
    if kind == "inclusion":
        return Proof("inclusion", ledger, size, root, path,
                     index=_size(value["index"], f"{source}: index"),
                     leaf=_hash(value["leaf"], f"{source}: leaf"))
    return Proof("consistency", ledger, size, root, path,
                 old_size=_size(value["old_size"], f"{source}: old_size"),
                 old_root=_hash(value["old_root"], f"{source}: old_root"))


def entry_digest(value: Any, source: str) -> tuple[bytes, dict[str, Any]]:
    """The digest of an entry given as an exported line `{seq, digest, signature, entry}` (or
    `logbook show --json`) or as a bare envelope, recomputed from its canonical bytes."""
    from logbook.format.canonical import canonical_bytes

    envelope = value.get("entry") if isinstance(value, dict) and "entry" in value else value
    if not isinstance(envelope, dict):
        raise InputError(f"{source}: an entry must be a JSON object (an exported line or an "
                         "envelope)")
    for name in ("v", "ledger", "seq", "prev", "kind", "signer", "body"):
        if name not in envelope:
            raise InputError(f"{source}: the envelope has no {name} field")
    try:
        raw = canonical_bytes(envelope)
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    return hashlib.sha256(raw).digest(), envelope


@dataclass
class ProofCheck:
    """The outcome of `verify_proof`: every failure, and what was checked."""

    proof: Proof
    failures: list[str] = field(default_factory=list)
    signature_checked: bool = False
    entry_checked: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures


def _binds(check: ProofCheck, parsed: Parsed, label: str, size: int, root: bytes,
           trusted_key: PublicKey | None) -> None:
    """Whether checkpoint `label` is this ledger's, at this size and root, and signed."""
    cp, _ = parsed
    fail = check.failures.append
    if cp.origin != origin_of(check.proof.ledger):
        fail(f"{label} is for origin {cp.origin!r}, but the proof is about ledger "
             f"{check.proof.ledger}")
    if cp.size != size:
        fail(f"{label} has size {cp.size}, but the proof is for size {size}")
    if cp.root != root:
        fail(f"{label} has root {cp.root.hex()[:16]}…, but the proof's is {root.hex()[:16]}…")
    if trusted_key is not None and not verify_checkpoint_signature(parsed, [trusted_key.raw]):
        fail(f"{label} is not signed by the trusted key {trusted_key.fingerprint[:16]}… "
             f"(as key name {cp.origin!r})")


def verify_proof(proof: Proof, checkpoint: Parsed, trusted_key: PublicKey | None = None,
                 entry: tuple[bytes, dict[str, Any]] | None = None,
                 old_checkpoint: Parsed | None = None,
                 label: Callable[[str], str] = lambda s: s) -> ProofCheck:
    """Check a proof against a checkpoint, offline (RFC 9162 §2.1.3.2 and §2.1.4.2).

    With `trusted_key` the checkpoints' signatures are checked too; with `entry` (digest and
    envelope) the leaf must be that entry's digest, at its seq, in this ledger.
    """
    check = ProofCheck(proof, signature_checked=trusted_key is not None)
    fail = check.failures.append
    _binds(check, checkpoint, label("the checkpoint"), proof.size, proof.root, trusted_key)
    if proof.kind == "inclusion":
        if not merkle.verify_inclusion(proof.leaf, proof.index, proof.size, proof.path,
                                       proof.root):
            fail(f"the inclusion path does not lead from leaf {proof.index} to the root of "
                 f"the tree of {proof.size} entries")
        if entry is not None:
            check.entry_checked = True
            digest, envelope = entry
            if digest != proof.leaf:
                fail(f"the entry's digest {digest.hex()[:16]}… is not the proof's leaf "
                     f"{proof.leaf.hex()[:16]}…")
            if envelope.get("seq") != proof.index:
                fail(f"the entry's seq {envelope.get('seq')!r} is not the proof's index "
                     f"{proof.index}")
            if envelope.get("ledger") != proof.ledger:
                fail(f"the entry belongs to ledger {envelope.get('ledger')!r}, not "
                     f"{proof.ledger}")
        return check
    if old_checkpoint is not None:
        _binds(check, old_checkpoint, label("the old checkpoint"), proof.old_size,
               proof.old_root, trusted_key)
    if not merkle.verify_consistency(proof.old_size, proof.size, proof.old_root, proof.root,
                                     proof.path):
        fail(f"the consistency proof does not show the tree of {proof.old_size} entries is "
             f"a prefix of the tree of {proof.size}")
    return check
