"""Checking a ledger against a checkpoint (DESIGN §4.2), for the auditor: nothing here signs
(making a checkpoint and the proofs of `logbook prove` are the write side's,
logbook.ledger.checkpoints).

* `check_against` is `verify --checkpoint`, on a database or an export: the checkpoint's
  signature, its origin, then the ledger's root at the checkpoint's size and a consistency
  proof from there to the current head. A failure is a `checkpoint` finding saying whether
  the ledger was cut, rewritten or forked, or the checkpoint is not validly signed.
* `read_checkpoint` and `read_trust_key` read a checkpoint file and a `--trust` value.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logbook.crypto.public import PublicKey, read_trust
from logbook.errors import InputError
from logbook.findings import Finding
from logbook.tlog import merkle
from logbook.tlog.checkpoint import parse_checkpoint, verify_checkpoint_signature
from logbook.tlog.note import parse_verifier_key
from logbook.verify.chain import Result
from logbook.verify.cosignatures import WitnessKey
from logbook.verify.proofs import (
    Parsed,
    origin_of,
)

__all__ = ["CheckpointCheck", "check_against", "read_checkpoint", "read_trust_key"]

KeyRow = tuple[str, str, str, int, int | None]


def read_checkpoint(path: str | Path, option: str = "--checkpoint") -> tuple[str, Parsed]:
    """The text of a checkpoint file and its parse; InputError naming the file otherwise."""
    from logbook.files import read_bytes

    data = read_bytes(path, option, limit=64 * 1024, kind="a checkpoint")
    try:
        cp, sigs = parse_checkpoint(data)
    except InputError as exc:
        raise InputError(f"{option} {path} is not a checkpoint: {exc}") from None
    return data.decode("utf-8"), (cp, sigs)


def read_trust_key(value: str, option: str = "--trust") -> tuple[str, PublicKey | None]:
    """`--trust`: a fingerprint, an exported public-key file, or a C2SP verifier key string
    (`name+hex key id+base64(0x01 || key)`). Returns (fingerprint, key or None)."""
    if "+" in value and not Path(value).exists():
        try:
            _, raw = parse_verifier_key(value.strip())
        except InputError as exc:
            raise InputError(f"{option}: {exc}") from None
        try:
            pk = PublicKey.checked(raw, "the verifier key's public key")
        except InputError as exc:
            raise InputError(f"{option}: {exc}") from None
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


def check_against(result: Result, checkpoint_path: str, trusted_key: PublicKey | None,
                  trusted: str | None = None,
                  witnessed: tuple[Sequence[WitnessKey], int] | None = None) -> CheckpointCheck:
    """`verify --checkpoint`, after `verify_store` (a database) or `verify_export_lines` (an
    export) filled `result`: from the digests recomputed from the entries' bytes, never the
    stored tree. With `witnessed` (witness keys, quorum): also that many distinct given
    witnesses cosigned it (logbook.verify.cosignatures)."""
    from logbook.verify.chain import expected_tree

    text, parsed = read_checkpoint(checkpoint_path)
    if witnessed is not None:
        from logbook.verify.cosignatures import quorum_of

        keys, quorum = witnessed
        result.checks += 1
        problem = quorum_of(text, keys, quorum)
        if problem is not None:
            result.findings.append(Finding("checkpoint", "error", f"checkpoint "
                                           f"{checkpoint_path}: not witnessed: {problem}",
                                           None, []))
            return CheckpointCheck(checkpoint_path, parsed[0].size)
    fp = trusted_key.fingerprint if trusted_key is not None else trusted
    nodes = expected_tree(result.digests)

    def get_node(level: int, idx: int) -> bytes:
        try:
            return nodes[(level, idx)]
        except KeyError:  # pragma: no cover - every node below the size exists
            raise LookupError(f"tree node ({level}, {idx}) is missing") from None

    return _check(result, checkpoint_path, parsed, result.ledger, len(result.digests),
                  result.keys, (fp, trusted_key), get_node)
