"""Checkpoints and proofs of a ledger (DESIGN §4.2): composes ledger, merkle and checkpoint.

* `make_checkpoint` verifies the ledger, signs its tree head as a C2SP `tlog-checkpoint` note
  (origin and key name `logbook/<ledger uuid>`) and keeps it in the store.
* `check_ledger_against` / `check_export_against` are `verify --checkpoint`: the checkpoint's
  signature, its origin, then the ledger's root at the checkpoint's size and a consistency
  proof from there to the current head. A failure is a `checkpoint` finding saying whether
  the ledger was cut, rewritten or forked, or the checkpoint is not validly signed.
* `inclusion_proof` / `consistency_proof` give the proof JSON of `logbook prove`, read from
  the stored tree in O(log n) node reads; `parse_proof` and `verify_proof` check it offline
  (`logbook verify-proof`), with nothing but the proof, the checkpoint and a public key.

No SQL here: the ledger's store is reached through its reader methods only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logbook import merkle
from logbook.checkpoint import (
    Checkpoint,
    NoteSignature,
    parse_checkpoint,
    parse_verifier_key,
    sign_checkpoint,
    verify_checkpoint_signature,
)
from logbook.crypto import PublicKey, SigningKey, read_trust
from logbook.errors import EnvironmentProblem, InputError
from logbook.findings import Finding
from logbook.verify import Result

ORIGIN_PREFIX = "logbook/"
KeyRow = tuple[str, str, str, int, int | None]
Parsed = tuple[Checkpoint, list[NoteSignature]]


def origin_of(ledger_uuid: str) -> str:
    """The checkpoint origin (and note key name) of a ledger: `logbook/<uuid>`."""
    return ORIGIN_PREFIX + ledger_uuid


# --- making checkpoints -------------------------------------------------------------------


def make_checkpoint(ledger: Any, key: SigningKey,
                    publish: Callable[[str], None] | None = None) -> str:
    """Verify the ledger, then sign its tree head at the size just verified with `key` (a
    valid key of the ledger), store it, return it. A ledger that does not verify is not
    signed (exit 1): a checkpoint vouches for the signatures below it (logbook.integrity).

    ``publish`` receives the note before it is stored: a note that cannot be written out
    (a full disk) is not kept either, so the audit never counts a checkpoint nobody holds."""
    from logbook.integrity import check
    from logbook.ledger import now_rfc3339

    size = check(ledger.store).entries
    valid = {fp for fp, _, _, _, revoked in ledger.store.signing_keys() if revoked is None}
    if key.public.fingerprint not in valid:
        raise EnvironmentProblem(
            f"signing key {key.public.fingerprint[:16]}… is not a valid key of this ledger, "
            "so it cannot sign the ledger's checkpoint")
    root = ledger.root(size)
    origin = origin_of(ledger.uuid)
    note = sign_checkpoint(Checkpoint(origin, size, root), origin, key.sign, key.public.raw)
    if publish is not None:
        publish(note)
    ledger.store.add_checkpoint(size, root.hex(), note, now_rfc3339())
    return note


def read_checkpoint(path: str | Path, option: str = "--checkpoint") -> tuple[str, Parsed]:
    """The text of a checkpoint file and its parse; InputError naming the file otherwise."""
    from logbook.files import read_bytes

    data = read_bytes(path, option)
    try:
        cp, sigs = parse_checkpoint(data)
    except InputError as exc:
        raise InputError(f"{option} {path} is not a checkpoint: {exc}") from None
    return data.decode("utf-8"), (cp, sigs)


def latest_checkpoint(ledger: Any) -> tuple[str, Parsed] | None:
    """The last checkpoint kept in the ledger's store, or None when none was made."""
    rows = ledger.store.checkpoints()
    if not rows:
        return None
    note = rows[-1][3]
    return note, parse_checkpoint(note)


def read_trust_key(value: str, option: str = "--trust") -> tuple[str, PublicKey | None]:
    """`--trust`: a fingerprint, an exported public-key file, or a C2SP verifier key string
    (`name+hex key id+base64(0x01 || key)`). Returns (fingerprint, key or None)."""
    if "+" in value and not Path(value).exists():
        try:
            _, raw = parse_verifier_key(value.strip())
        except InputError as exc:
            raise InputError(f"{option}: {exc}") from None
        pk = PublicKey(raw)
        return pk.fingerprint, pk
    return read_trust(value, option)


# --- verify --checkpoint ------------------------------------------------------------------


@dataclass
class CheckpointCheck:
    """What checking one checkpoint found: its size and whether it held."""

    path: str
    size: int | None = None
    ok: bool = False
    signed_by: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "ok": self.ok,
                "signed_by": self.signed_by}


def _keys_at(keys: Sequence[KeyRow], size: int | None) -> list[PublicKey]:
    """The keys valid when the ledger had `size` entries (added by an entry before `size`,
    not revoked by one before it); every key the ledger ever had when `size` is None."""
    out = []
    for _fp, _name, public, added, revoked in keys:
        if size is not None and not (added < size and (revoked is None or revoked >= size)):
            continue
        try:
            out.append(PublicKey(base64.b64decode(public, validate=True)))
        except (binascii.Error, ValueError):
            continue
    return out


def _check(result: Result, label: str, parsed: Parsed, ledger_uuid: str | None, size: int,
           keys: Sequence[KeyRow], trusted: tuple[str | None, PublicKey | None],
           get_node: merkle.GetNode) -> CheckpointCheck:
    cp = parsed[0]
    out = CheckpointCheck(label, cp.size)
    result.checks += 1

    def fail(message: str) -> CheckpointCheck:
        result.findings.append(Finding("checkpoint", "error", f"checkpoint {label}: {message}",
                                       None, []))
        return out

    if ledger_uuid is None or cp.origin != origin_of(ledger_uuid):
        return fail(f"its origin {cp.origin!r} does not name this ledger "
                    f"({origin_of(ledger_uuid or '?')})")
    fingerprint, trusted_key = trusted
    if fingerprint is not None:
        if trusted_key is None:
            trusted_key = next((k for k in _keys_at(keys, None)
                                if k.fingerprint == fingerprint), None)
        if trusted_key is None:
            return fail(f"bad signature: the trusted key {fingerprint[:16]}… is not a key of "
                        "this ledger, so it cannot have signed the checkpoint")
        candidates = [trusted_key]
    else:
        # a cut ledger no longer knows which keys were valid at the checkpoint's size
        candidates = _keys_at(keys, cp.size if size >= cp.size else None)
    signer = next((k for k in candidates
                   if verify_checkpoint_signature(parsed, [k.raw])), None)
    if signer is None:
        who = "the trusted key" if fingerprint is not None else "any key of this ledger"
        return fail(f"bad signature: it is not signed by {who}")
    out.signed_by = signer.fingerprint
    if size < cp.size:
        return fail(f"the ledger was cut: it has {size} entries, fewer than the "
                    f"{cp.size} the checkpoint records")
    if cp.size == 0:
        out.ok = cp.root == merkle.empty_root()
        return out if out.ok else fail("bad root: a checkpoint of size 0 must carry the "
                                       "empty tree's root")
    try:
        old_root = merkle.root_from_nodes(cp.size, get_node)
        new_root = merkle.root_from_nodes(size, get_node)
        proof = merkle.consistency_proof_from_nodes(cp.size, size, get_node)
    except LookupError as exc:
        return fail(f"the ledger's Merkle tree cannot be read ({exc}; `logbook reindex` "
                    "rebuilds it)")
    if old_root != cp.root:
        return fail(f"the ledger was rewritten or forked: its root at size {cp.size} is "
                    f"{old_root.hex()[:16]}…, not the checkpoint's {cp.root.hex()[:16]}…")
    if not merkle.verify_consistency(cp.size, size, cp.root, new_root, proof):
        return fail(f"the consistency proof from size {cp.size} to {size} does not verify: "
                    "the ledger was rewritten or forked")
    out.ok = True
    return out


def check_ledger_against(ledger: Any, result: Result, checkpoint_path: str,
                         trusted_key: PublicKey | None,
                         trusted: str | None = None) -> CheckpointCheck:
    """`verify --checkpoint` on a database, after `verify_store` filled `result`."""
    _, parsed = read_checkpoint(checkpoint_path)
    fp = trusted_key.fingerprint if trusted_key is not None else trusted
    return _check(result, checkpoint_path, parsed, result.ledger, len(result.digests),
                  result.keys, (fp, trusted_key), ledger.store.tree_node)


def check_export_against(result: Result, checkpoint_path: str,
                         trusted_key: PublicKey | None,
                         trusted: str | None = None) -> CheckpointCheck:
    """`verify FILE --checkpoint` on an export, from the digests `verify_export_lines` read."""
    from logbook.verify import expected_tree

    _, parsed = read_checkpoint(checkpoint_path)
    fp = trusted_key.fingerprint if trusted_key is not None else trusted
    nodes = expected_tree(result.digests)

    def get_node(level: int, idx: int) -> bytes:
        try:
            return nodes[(level, idx)]
        except KeyError:  # pragma: no cover - every node below the size exists
            raise LookupError(f"tree node ({level}, {idx}) is missing") from None

    return _check(result, checkpoint_path, parsed, result.ledger, len(result.digests),
                  result.keys, (fp, trusted_key), get_node)


# --- proofs from the stored tree ----------------------------------------------------------


def inclusion_proof(ledger: Any, index: int, size: int) -> dict[str, Any]:
    """The inclusion proof JSON of entry `index` in the tree of `size` entries."""
    if not 0 <= index < size <= ledger.size():
        raise InputError(f"entry {index} is not in a tree of {size} entries")
    stored = ledger.store.entry(index)
    if stored is None:  # pragma: no cover - index < size <= ledger.size()
        raise InputError(f"there is no entry {index}")
    get = ledger.store.tree_node
    return {"ledger": ledger.uuid, "index": index, "size": size, "leaf": stored.digest,
            "root": merkle.root_from_nodes(size, get).hex(),
            "path": [h.hex() for h in merkle.inclusion_proof_from_nodes(index, size, get)]}


def consistency_proof(ledger: Any, old_size: int, size: int) -> dict[str, Any]:
    """The consistency proof JSON from the tree of `old_size` entries to that of `size`."""
    if not 0 < old_size <= size <= ledger.size():
        raise InputError(f"no consistency proof from size {old_size} to size {size} "
                         f"(the ledger has {ledger.size()} entries)")
    get = ledger.store.tree_node
    return {"ledger": ledger.uuid, "old_size": old_size,
            "old_root": merkle.root_from_nodes(old_size, get).hex(), "size": size,
            "root": merkle.root_from_nodes(size, get).hex(),
            "path": [h.hex() for h in merkle.consistency_proof_from_nodes(old_size, size, get)]}


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
    common = {"ledger": value["ledger"], "size": _size(value["size"], f"{source}: size"),
              "root": _hash(value["root"], f"{source}: root"), "path": path}
    if kind == "inclusion":
        return Proof("inclusion", index=_size(value["index"], f"{source}: index"),
                     leaf=_hash(value["leaf"], f"{source}: leaf"), **common)
    return Proof("consistency", old_size=_size(value["old_size"], f"{source}: old_size"),
                 old_root=_hash(value["old_root"], f"{source}: old_root"), **common)


def entry_digest(value: Any, source: str) -> tuple[bytes, dict[str, Any]]:
    """The digest of an entry given as an exported line `{seq, digest, signature, entry}` (or
    `logbook show --json`) or as a bare envelope, recomputed from its canonical bytes."""
    from logbook.canonical import canonical_bytes

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
