"""Witness cosignatures on a checkpoint (C2SP tlog-cosignature `cosignature/v1`), for the
auditor: `verify --checkpoint FILE --witness KEY --quorum N` and `mirror --witness`. Nothing
here signs.

A cosignature line whose name and key id match no given witness key is ignored (C2SP); one
that matches a given key must verify, or the checkpoint is refused whatever the quorum. The
quorum counts distinct given witness keys with a verifying cosignature.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from logbook.crypto.public import verify_signature
from logbook.errors import InputError
from logbook.tlog.checkpoint import body_text, parse_checkpoint
from logbook.tlog.witness import (
    cosigned_message,
    cosigner_key_id,
    cosigner_vkey,
    decode_cosignature,
    parse_cosigner_vkey,
)

__all__ = ["Cosigned", "WitnessKey", "check_cosignatures", "quorum_of", "read_witness_key",
           "witness_policy"]


@dataclass(frozen=True)
class WitnessKey:
    """A witness the auditor trusts: its name and Ed25519 public key."""

    name: str
    public: bytes

    @property
    def key_id(self) -> bytes:
        return cosigner_key_id(self.name, self.public)

    @property
    def vkey(self) -> str:
        """Its verifier key string, `name+hex key id+base64(0x04 || key)`."""
        return cosigner_vkey(self.name, self.public)


def read_witness_key(value: str, option: str = "--witness") -> WitnessKey:
    """A witness's verifier key string (`name+hex id+base64(0x04 || key)`), given as is or
    in a file holding it on one line (what `logbook witness serve` prints)."""
    text = value
    path = Path(value)
    if "+" not in value or path.is_file():
        from logbook.files import read_text

        if not path.is_file():
            raise InputError(f"{option} {value!r} is neither a witness verifier key nor a "
                             "file holding one")
        lines = [ln.strip() for ln in read_text(path, option, limit=4096).splitlines()
                 if ln.strip() and not ln.startswith("#")]
        if len(lines) != 1:
            raise InputError(f"{option} {value} does not hold one witness verifier key")
        text = lines[0]
    try:
        name, public = parse_cosigner_vkey(text)
    except InputError as exc:
        raise InputError(f"{option} {value}: {exc}") from None
    from logbook.crypto.points import public_key_problem

    problem = public_key_problem(public)
    if problem is not None:
        raise InputError(f"{option} {value}: the witness key is refused: {problem}")
    return WitnessKey(name, public)


@dataclass
class Cosigned:
    """What the cosignatures of one checkpoint showed: the witnesses whose cosignature
    verified (with its time), and the lines by a given witness that did not."""

    valid: dict[str, int] = field(default_factory=dict)
    bad: list[str] = field(default_factory=list)


def check_cosignatures(note: str | bytes, witnesses: Sequence[WitnessKey]) -> Cosigned:
    """Check every cosignature line of `note` that a given witness key matches."""
    cp, sigs = parse_checkpoint(note)
    text = body_text(cp)
    by_id = {(w.name, w.key_id): w for w in witnesses}
    out = Cosigned()
    for sig in sigs:
        witness = by_id.get((sig.key_name, sig.key_hash))
        if witness is None:
            continue  # the log's own signature, or a witness nobody asked us to trust
        try:
            cosig = decode_cosignature(sig)
        except InputError as exc:
            out.bad.append(str(exc))
            continue
        message = cosigned_message(text, cosig.timestamp)
        if verify_signature(witness.public, cosig.signature, message):
            out.valid.setdefault(witness.name + "+" + witness.key_id.hex(), cosig.timestamp)
        else:
            out.bad.append(f"the cosignature by witness {witness.name} does not verify")
    return out


def quorum_of(note: str | bytes, witnesses: Sequence[WitnessKey], quorum: int) -> str | None:
    """None when `note` carries verifying cosignatures by at least `quorum` distinct given
    witnesses and no bad one by a given witness; else the sentence saying why not."""
    found = check_cosignatures(note, witnesses)
    if found.bad:
        return found.bad[0] + ": the checkpoint is refused"
    if len(found.valid) < quorum:
        names = sorted(w.name for w in witnesses
                       if w.name + "+" + w.key_id.hex() not in found.valid)
        return (f"it carries {len(found.valid)} valid cosignature(s) of the {quorum} "
                f"required; none by {', '.join(names)}")
    return None


def witness_policy(witnesses: Sequence[str],
                   quorum: int | None) -> tuple[list[WitnessKey], int] | None:
    """`--witness KEY ... --quorum N` as given: the keys and N (default: every distinct key),
    or None without --witness; InputError for a quorum the keys cannot meet."""
    if not witnesses:
        if quorum is not None:
            raise InputError("--quorum needs at least one --witness")
        return None
    keys = [read_witness_key(w) for w in witnesses]
    distinct = len({(k.name, k.public) for k in keys})
    need = distinct if quorum is None else quorum
    if not 1 <= need <= distinct:
        raise InputError(f"--quorum {need} is not between 1 and the {distinct} distinct "
                         "--witness keys given")
    return keys, need
