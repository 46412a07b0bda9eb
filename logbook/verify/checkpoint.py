"""Checkpoints and proofs of a ledger (DESIGN §4.2): composes ledger, merkle and checkpoint.

* `make_checkpoint` verifies the ledger, signs its tree head as a C2SP `tlog-checkpoint` note
  (origin and key name `logbook/<ledger uuid>`) and keeps it in the store.
* `check_ledger_against` / `check_export_against` are `verify --checkpoint`: the checkpoint's
  signature, its origin, then the ledger's root at the checkpoint's size and a consistency
  proof from there to the current head. A failure is a `checkpoint` finding saying whether
  the ledger was cut, rewritten or forked, or the checkpoint is not validly signed.
* `inclusion_proof` / `consistency_proof` give the proof JSON of `logbook prove`, from the
  tree recomputed from the entries' digests (tree_check: a stored tree that disagrees is
  refused, exit 1); `parse_proof` and `verify_proof` check it offline
  (`logbook verify-proof`), with nothing but the proof, the checkpoint and a public key
  (they live in proof_check and are re-exported here).

No SQL here: the ledger's store is reached through its reader methods only.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logbook.crypto.keys import PublicKey, SigningKey, read_trust
from logbook.errors import EnvironmentProblem, InputError
from logbook.findings import Finding
from logbook.tlog import merkle
from logbook.tlog.note import (
    Checkpoint,
    parse_checkpoint,
    parse_verifier_key,
    sign_checkpoint,
    verify_checkpoint_signature,
)
from logbook.verify.chain import Result
from logbook.verify.proofs import (
    ORIGIN_PREFIX,
    Parsed,
    Proof,
    ProofCheck,
    entry_digest,
    origin_of,
    parse_proof,
    verify_proof,
)
from logbook.verify.tree import Tree, recomputed_tree

__all__ = ["ORIGIN_PREFIX", "CheckpointCheck", "Parsed", "Proof", "ProofCheck",
           "check_export_against", "check_ledger_against", "consistency_proof", "entry_digest",
           "inclusion_proof", "latest_checkpoint", "make_checkpoint", "origin_of", "parse_proof",
           "read_checkpoint", "read_trust_key", "verify_proof"]

KeyRow = tuple[str, str, str, int, int | None]


# --- making checkpoints -------------------------------------------------------------------


def make_checkpoint(ledger: Any, key: SigningKey,
                    publish: Callable[[str], None] | None = None) -> str:
    """Verify the ledger, then sign its tree head at the size just verified with `key` (a
    valid key of the ledger), store it, return it. A ledger that does not verify is not
    signed (exit 1): a checkpoint vouches for the signatures below it (logbook.verify.integrity).

    ``publish`` receives the note before it is stored: a note that cannot be written out
    (a full disk) is not kept either, so the audit never counts a checkpoint nobody holds."""
    from logbook.ledger.service import now_rfc3339
    from logbook.verify.integrity import check

    size = check(ledger.store).entries
    valid = {fp for fp, _, _, _, revoked in ledger.store.signing_keys() if revoked is None}
    if key.public.fingerprint not in valid:
        raise EnvironmentProblem(
            f"signing key {key.public.fingerprint[:16]}… is not a valid key of this ledger, "
            "so it cannot sign the ledger's checkpoint")
    tree = recomputed_tree(ledger)  # never the stored tree unchecked
    root = tree.root(size)  # the size the check above verified
    origin = origin_of(ledger.uuid)
    note = sign_checkpoint(Checkpoint(origin, size, root), origin, key.sign, key.public.raw)
    if publish is not None:
        publish(note)
    ledger.store.add_checkpoint(size, root.hex(), note, now_rfc3339())
    return note


def read_checkpoint(path: str | Path, option: str = "--checkpoint") -> tuple[str, Parsed]:
    """The text of a checkpoint file and its parse; InputError naming the file otherwise."""
    from logbook.files import read_bytes

    data = read_bytes(path, option, limit=64 * 1024, kind="a checkpoint")
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


def check_ledger_against(ledger: Any, result: Result, checkpoint_path: str,
                         trusted_key: PublicKey | None,
                         trusted: str | None = None) -> CheckpointCheck:
    """`verify --checkpoint` on a database, after `verify_store` filled `result`: from the
    digests verify recomputed from the entries' bytes, never the stored tree."""
    return check_export_against(result, checkpoint_path, trusted_key, trusted)


def check_export_against(result: Result, checkpoint_path: str,
                         trusted_key: PublicKey | None,
                         trusted: str | None = None) -> CheckpointCheck:
    """`verify FILE --checkpoint` on an export, from the digests `verify_export_lines` read."""
    from logbook.verify.chain import expected_tree

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


def _source(ledger: Any, tree: Tree | None) -> tuple[int, merkle.GetNode]:
    """(size, node reader): the checked tree `logbook prove` passes, else the stored tree
    (O(log n) node reads, for callers that checked it themselves)."""
    return (tree.size, tree.node) if tree is not None else (ledger.size(),
                                                            ledger.store.tree_node)


def inclusion_proof(ledger: Any, index: int, size: int,
                    tree: Tree | None = None) -> dict[str, Any]:
    """The inclusion proof JSON of entry `index` in the tree of `size` entries."""
    have, get = _source(ledger, tree)
    if not 0 <= index < size <= have:
        raise InputError(f"entry {index} is not in a tree of {size} entries")
    stored = ledger.store.entry(index)
    if stored is None:  # pragma: no cover - index < size <= ledger.size()
        raise InputError(f"there is no entry {index}")
    return {"ledger": ledger.uuid, "index": index, "size": size, "leaf": stored.digest,
            "root": merkle.root_from_nodes(size, get).hex(),
            "path": [h.hex() for h in merkle.inclusion_proof_from_nodes(index, size, get)]}


def consistency_proof(ledger: Any, old_size: int, size: int,
                      tree: Tree | None = None) -> dict[str, Any]:
    """The consistency proof JSON from the tree of `old_size` entries to that of `size`."""
    have, get = _source(ledger, tree)
    if not 0 < old_size <= size <= have:
        raise InputError(f"no consistency proof from size {old_size} to size {size} "
                         f"(the ledger has {have} entries)")
    return {"ledger": ledger.uuid, "old_size": old_size,
            "old_root": merkle.root_from_nodes(old_size, get).hex(), "size": size,
            "root": merkle.root_from_nodes(size, get).hex(),
            "path": [h.hex() for h in merkle.consistency_proof_from_nodes(old_size, size, get)]}
