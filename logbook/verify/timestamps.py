"""`logbook verify` on the ledger's `timestamp` entries (docs/format.md, "Timestamps";
docs/auditing.md, "Outside time"): each must name a tree the verified entries give (its size
within them, its root the one their digests give at that size), and hold a TSA's answer that
grants a token over that checkpoint's body at the time the entry says. With the TSA's
certificate (`--tsa-cert`), the token's signature is checked too, and each stamp is said: the
checkpoint at size N existed by that time.

Nothing here trusts a stored tree: the roots are recomputed from the digests the check itself
computed from the entries' bytes."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logbook.errors import InputError
from logbook.findings import Finding

if TYPE_CHECKING:
    from cryptography.x509 import Certificate

    from logbook.verify.chain import Result


@dataclass(frozen=True)
class StampCheck:
    """One timestamp that holds: the checkpoint size it stamps, the time, who signed it."""

    seq: int
    size: int
    time: str
    tsa: str
    signer: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "size": self.size, "time": self.time, "tsa": self.tsa,
                "signer": self.signer}

    def line(self) -> str:
        return (f"checkpoint at size {self.size} existed by {self.time} (TSA "
                f"{self.signer or self.tsa}; timestamp @{self.seq})")


def check_stamps(result: Result, certs: list[Certificate] | None) -> list[StampCheck]:
    """Check every timestamp the verified entries hold; each that fails is a finding in
    ``result`` (check "timestamp"). Returns those that hold (all of them are signed by the
    TSA ``certs`` names, when given)."""
    from logbook.crypto.timestamps import check, read_response
    from logbook.tlog.checkpoint import Checkpoint, body_text
    from logbook.tlog.merkle import roots_at
    from logbook.verify.proofs import origin_of

    if not result.stamps:
        return []
    sizes = [b.get("size") for _, b in result.stamps if type(b.get("size")) is int]
    roots = roots_at(result.digests, [s for s in sizes if isinstance(s, int)])
    origin = origin_of(result.ledger or "")
    held: list[StampCheck] = []
    for seq, body in result.stamps:
        size, root = body.get("size"), body.get("root")

        def fail(why: str, seq: int = seq) -> None:
            result.findings.append(Finding("timestamp", "error", f"entry {seq}: the "
                                           f"timestamp {why}", seq, []))

        if type(size) is not int or size > seq or size not in roots:
            fail(f"names a checkpoint of size {size!r}, which the entries before it do not "
                 "make")
            continue
        if root != roots[size].hex():
            fail(f"names a root for size {size} that is not the one the entries give")
            continue
        message = body_text(Checkpoint(origin, size, roots[size]))
        try:
            der = base64.b64decode(str(body.get("response")), validate=True)
            stamp = read_response(der, message, "its answer")
        except (InputError, binascii.Error) as exc:
            fail(f"does not stamp the checkpoint of size {size}: {exc}")
            continue
        if stamp.time != body.get("time"):
            fail(f"says {body.get('time')!r}, but its token says {stamp.time}")
            continue
        if certs is not None:
            problem = check(der, message, certs)
            if problem is not None:
                fail(f"of size {size} is not signed by the TSA --tsa-cert names: {problem}")
                continue
        held.append(StampCheck(seq, size, stamp.time, str(body.get("tsa")), stamp.signer))
    return held
