"""`logbook verify-openings FILE --trust KEY`: check the openings of a run's committed items
(docs/format.md, "Committed items") with nothing but the ledger's public key and the file
`logbook open` wrote. Nothing here signs, and nothing reads a ledger.

The file must show, under the trusted key: a signed checkpoint of the ledger; the run's entry,
signed, whose digest is its bytes' and which the checkpoint's tree holds at its place (by the
inclusion proof the file carries); the rows that checkpoint's root chooses for that run
(logbook.format.commitments), no more and no fewer; and for each row the salt and content that
open its commitment to the very id and score the run records.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from logbook.crypto.public import PublicKey
from logbook.errors import InputError


@dataclass
class Openings:
    """What was checked: the run, the checkpoint, the rows opened, and every problem found."""

    run_seq: int | None = None
    size: int | None = None
    rows: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "run": self.run_seq, "checkpoint_size": self.size,
                "rows": self.rows, "problems": self.problems}


def _entry_checks(doc: dict[str, Any], key: PublicKey, out: Openings) -> dict[str, Any] | None:
    """The run's envelope when its bytes, digest and signature hold under ``key``."""
    import hashlib

    from logbook.format.canonical import canonical_bytes, signing_input

    run = doc.get("run")
    if not isinstance(run, dict) or not isinstance(run.get("entry"), dict):
        out.problems.append("the file holds no run entry")
        return None
    env = run["entry"]
    try:
        raw = canonical_bytes(env)
        signature = base64.b64decode(str(run.get("signature")), validate=True)
    except (InputError, binascii.Error, TypeError, ValueError) as exc:
        out.problems.append(f"the run entry cannot be read ({exc})")
        return None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != run.get("digest"):
        out.problems.append(f"the run entry's bytes hash to {digest[:16]}…, not to the digest "
                            "the file gives: the entry was altered")
        return None
    if env.get("signer") != key.fingerprint or not key.verify(
            signature, signing_input(bytes.fromhex(digest))):
        out.problems.append("the run entry is not signed by the trusted key")
        return None
    if env.get("kind") != "run" or env.get("ledger") != doc.get("ledger") or \
            type(env.get("seq")) is not int or env.get("seq") != run.get("seq"):
        out.problems.append("the entry is not a run of this ledger at the place the file says")
        return None
    out.run_seq = env["seq"]
    return dict(env)


def verify_openings(doc: Any, key: PublicKey) -> Openings:
    """Check an openings document (see the module's text) under the trusted ``key``."""
    from logbook.format.commitments import commitment, content_digest, rows_to_open
    from logbook.tlog import merkle
    from logbook.tlog.checkpoint import parse_checkpoint, verify_checkpoint_signature
    from logbook.verify.proofs import origin_of

    out = Openings()
    if not isinstance(doc, dict) or doc.get("v") != 1:
        out.problems.append("the file is not an openings document of version 1")
        return out
    try:
        cp = parse_checkpoint(str(doc.get("checkpoint")))[0]
    except InputError as exc:
        out.problems.append(f"its checkpoint is not one ({exc})")
        return out
    out.size = cp.size
    if cp.origin != origin_of(str(doc.get("ledger"))):
        out.problems.append(f"its checkpoint is for {cp.origin}, not ledger {doc.get('ledger')}")
    if not verify_checkpoint_signature(str(doc["checkpoint"]), [key.raw]):
        out.problems.append("its checkpoint is not signed by the trusted key")
    env = _entry_checks(doc, key, out)
    if env is None or out.problems:
        return out
    digest = bytes.fromhex(str(doc["run"]["digest"]))
    try:
        proof = [bytes.fromhex(h) for h in doc.get("proof") or []]
    except (TypeError, ValueError):
        proof = []
    if not merkle.verify_inclusion(digest, env["seq"], cp.size, proof, cp.root):
        out.problems.append(f"the run is not in the checkpoint's tree of size {cp.size} at "
                            f"place {env['seq']} (its inclusion proof fails)")
        return out
    oc = (env.get("body") or {}).get("outcomes") or {}
    made, ids, scores = oc.get("commitment"), oc.get("id"), oc.get("score")
    if not isinstance(made, list) or not made or not isinstance(ids, list) or \
            not isinstance(scores, list):
        out.problems.append(f"run @{env['seq']} has no committed items")
        return out
    k = doc.get("k")
    openings = doc.get("openings")
    if type(k) is not int or not 0 < k <= len(made) or not isinstance(openings, list):
        out.problems.append("the file does not say how many rows it opens (k), or opens none")
        return out
    want = sorted(rows_to_open(cp.root, digest, len(made), k))
    got = [o.get("row") for o in openings if isinstance(o, dict)]
    if sorted(r for r in got if type(r) is int) != want or len(got) != len(openings):
        out.problems.append(f"the rows opened are not the {k} the checkpoint at size {cp.size} "
                            f"chooses for this run (it chooses rows {want[:8]}"
                            f"{'…' if k > 8 else ''})")
        return out
    for o in openings:
        row = o["row"]
        try:
            salt = bytes.fromhex(str(o.get("salt")))
            content = o.get("content")
            if not isinstance(content, str):
                raise ValueError("its content is not text")
            again = commitment(salt, str(ids[row]), content_digest(content), scores[row])
        except (ValueError, TypeError) as exc:
            out.problems.append(f"row {row}: the opening cannot be read ({exc})")
            continue
        if o.get("id") != ids[row] or o.get("score") != scores[row]:
            out.problems.append(f"row {row}: the opening says item {o.get('id')!r} scored "
                                f"{o.get('score')!r}, but the run records {ids[row]!r} scored "
                                f"{scores[row]!r}")
        elif again != made[row]:
            out.problems.append(f"row {row} (item {ids[row]!r}): its salt and content do not "
                                "open the run's commitment")
    out.rows = want
    return out
