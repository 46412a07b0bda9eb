"""Making checkpoints and proofs of a ledger (DESIGN §4.2): the write side's half of the
checkpoints (checking one is logbook.verify.checkpoint's).

* `make_checkpoint` verifies the ledger, signs its tree head as a C2SP `tlog-checkpoint` note
  (origin and key name `logbook/<ledger uuid>`) and keeps it in the store.
* `latest_checkpoint` is the last one kept.
* `inclusion_proof` / `consistency_proof` give the proof JSON of `logbook prove`, from the
  tree recomputed from the entries' digests (logbook.verify.tree: a stored tree that disagrees
  is refused, exit 1); logbook.verify.proofs checks it offline (`logbook verify-proof`), with
  nothing but the proof, the checkpoint and a public key.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from logbook.crypto.public import PublicKey
from logbook.crypto.signing import SigningKey
from logbook.errors import EnvironmentProblem, InputError, LogbookError
from logbook.ledger.entry import now_rfc3339
from logbook.ledger.service import Ledger
from logbook.tlog import merkle
from logbook.tlog.checkpoint import Checkpoint, parse_checkpoint, sign_checkpoint
from logbook.tlog.note import verifier_key
from logbook.verify.proofs import Parsed, origin_of
from logbook.verify.tree import Tree

if TYPE_CHECKING:
    from logbook.storage.sqlite.read_model import ReadModel


def make_checkpoint(ledger: Ledger, key: SigningKey,
                    publish: Callable[[str], None] | None = None,
                    copy: ReadModel | None = None) -> str:
    """Verify the ledger, then sign its tree head at the size just verified with `key` (a
    valid key of the ledger), store it, return it. A ledger that does not verify is not
    signed (exit 1): a checkpoint vouches for the signatures below it (logbook.verify.integrity).

    The root is read in the check's own read transaction, from the tree the check just
    compared with the entries' digests (the checked copy: this machine's, carried on from an
    earlier check, when ``copy`` is given, else one in memory made by a full check), never
    from a tree unchecked.

    ``publish`` receives the note before it is stored: a note that cannot be written out
    (a full disk) is not kept either, so the audit never counts a checkpoint nobody holds."""
    from logbook.storage.sqlite.read_model import ReadModel
    from logbook.verify.integrity import verified

    while True:
        with ExitStack() as stack:
            full = copy is None
            if copy is None:  # a copy for this call alone: the check is made in full
                copy = ReadModel.in_memory()
                stack.callback(copy.close)
            checked = stack.enter_context(verified(ledger.entry_log, copy))
            stack.enter_context(ledger.reading_checked({}, checked.reads))
            size = checked.entries
            valid = {fp for fp, _, _, _, revoked in ledger.reads.signing_keys()
                     if revoked is None}
            root = ledger.root(size)  # the size the check verified, in its transaction
            if full or root == _stored_root(ledger, size):
                break
        # the copy's tree (below what a resumed check compared) and the ledger's own disagree:
        # one of them was damaged since, so the root signed is the one a full check makes
        copy = None
    if key.public.fingerprint not in valid:
        raise EnvironmentProblem(
            f"signing key {key.public.fingerprint[:16]}… is not a valid key of this ledger, "
            "so it cannot sign the ledger's checkpoint")
    origin = origin_of(ledger.uuid)
    note = sign_checkpoint(Checkpoint(origin, size, root), origin, key.sign, key.public.raw)
    if publish is not None:
        publish(note)
    with ledger.entry_log.transaction() as txn:
        txn.add_checkpoint(size, root.hex(), note, now_rfc3339())
    return note


def _stored_root(ledger: Ledger, size: int) -> bytes | None:
    """The root of the first ``size`` entries from the ledger's own tree (None if unreadable)."""
    try:
        return merkle.root_from_nodes(size, ledger.entry_log.tree_node)
    except (LogbookError, KeyError, ValueError):
        return None


def describe(note: str, public: PublicKey) -> dict[str, Any]:
    """What `logbook checkpoint --json` says of a note signed with ``public``: its origin,
    ledger, size, root (hex and base64), signer, C2SP verifier key, and the note."""
    cp, _ = parse_checkpoint(note)
    return {"origin": cp.origin, "ledger": cp.origin.split("/", 1)[1], "size": cp.size,
            "root": cp.root.hex(), "root_base64": base64.b64encode(cp.root).decode(),
            "signer": public.fingerprint, "verifier_key": verifier_key(cp.origin, public.raw),
            "note": note}


def latest_checkpoint(ledger: Ledger) -> tuple[str, Parsed] | None:
    """The last checkpoint kept in the ledger's store, or None when none was made."""
    rows = ledger.entry_log.checkpoints()
    if not rows:
        return None
    note = rows[-1][3]
    return note, parse_checkpoint(note)


def _source(ledger: Ledger, tree: Tree | None) -> tuple[int, merkle.GetNode]:
    """(size, node reader): the checked tree `logbook prove` passes, else the stored tree
    (O(log n) node reads, for callers that checked it themselves)."""
    return (tree.size, tree.node) if tree is not None else (ledger.size(), ledger.reads.tree_node)


def inclusion_proof(ledger: Ledger, index: int, size: int,
                    tree: Tree | None = None) -> dict[str, Any]:
    """The inclusion proof JSON of entry `index` in the tree of `size` entries."""
    have, get = _source(ledger, tree)
    if not 0 <= index < size <= have:
        raise InputError(f"entry {index} is not in a tree of {size} entries")
    entry = ledger.entry_at(index)
    if entry is None:  # pragma: no cover - index < size <= ledger.size()
        raise InputError(f"there is no entry {index}")
    return {"ledger": ledger.uuid, "index": index, "size": size, "leaf": entry.digest,
            "root": merkle.root_from_nodes(size, get).hex(),
            "path": [h.hex() for h in merkle.inclusion_proof_from_nodes(index, size, get)]}


def consistency_proof(ledger: Ledger, old_size: int, size: int,
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
