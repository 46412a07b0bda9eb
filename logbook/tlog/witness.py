"""C2SP tlog-witness requests and tlog-cosignature `cosignature/v1` lines (docs/format.md §12).

Pure formats, no I/O and no signing: the witness (logbook.witness) signs the bytes
`cosigned_message` builds, and the auditor (logbook.verify.cosignatures) checks them.

* A cosigner's Ed25519 key id is SHA-256(name || 0x0A || 0x04 || public key)[:4]; its
  verifier key string is `<name>+<hex key id>+<base64(0x04 || public key)>`.
* The signed message is `cosignature/v1\\n` + `time <unix seconds>\\n` + the whole checkpoint
  note text (every body line, the final newline included, no signature line).
* The signature line is `— <name> base64(key id || 8-byte big-endian time || 64-byte sig)`.
* An `add-checkpoint` request body is `old <size>\\n`, at most 63 base64 proof lines, an
  empty line, then the signed checkpoint note.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from logbook.errors import InputError
from logbook.tlog.checkpoint import parse_checkpoint
from logbook.tlog.note import EM_DASH, NoteSignature, b64, b64_strict

__all__ = [
    "COSIGNATURE_TYPE",
    "MAX_PROOF_LINES",
    "SIZE_CONTENT_TYPE",
    "AddCheckpoint",
    "Cosignature",
    "cosignature_line",
    "cosigned_message",
    "cosigner_key_id",
    "cosigner_vkey",
    "decode_cosignature",
    "encode_request",
    "encode_size",
    "parse_cosigner_vkey",
    "parse_request",
    "parse_size",
]

COSIGNATURE_TYPE = 0x04
"""The signed-note signature type of an Ed25519 `cosignature/v1`."""
MAX_PROOF_LINES = 63
SIZE_CONTENT_TYPE = "text/x.tlog.size"
_HEADER = b"cosignature/v1\n"
_MAX_TIME = 2**63 - 1
_MAX_SIZE = 2**64 - 1


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name or "+" in name or \
            any(c.isspace() or ord(c) < 0x20 for c in name):
        raise InputError(f"cosigner name {name!r} is empty or contains a space or '+'")
    return name


def _check_public(public_raw: bytes) -> bytes:
    if not isinstance(public_raw, bytes | bytearray) or len(public_raw) != 32:
        raise InputError("a cosigner's Ed25519 public key must be 32 raw bytes")
    return bytes(public_raw)


def cosigner_key_id(name: str, public_raw: bytes) -> bytes:
    """SHA-256(name || 0x0A || 0x04 || public key)[:4]."""
    preimage = _check_name(name).encode("utf-8") + b"\n" + bytes([COSIGNATURE_TYPE])
    return hashlib.sha256(preimage + _check_public(public_raw)).digest()[:4]


def cosigner_vkey(name: str, public_raw: bytes) -> str:
    """The cosigner's verifier key: `<name>+<hex key id>+<base64(0x04 || public key)>`."""
    kid = cosigner_key_id(name, public_raw)
    return f"{name}+{kid.hex()}+{b64(bytes([COSIGNATURE_TYPE]) + bytes(public_raw))}"


def parse_cosigner_vkey(vkey: str) -> tuple[str, bytes]:
    """(name, raw public key) of a cosigner's verifier key string, its type and id checked."""
    parts = vkey.strip().split("+", 2) if isinstance(vkey, str) else []
    if len(parts) != 3:
        raise InputError("a witness key is not of the form <name>+<hex key id>+<base64 key>")
    name, hex_id, b64_key = parts
    _check_name(name)
    raw = b64_strict(b64_key)
    if raw is None or len(raw) != 33:
        raise InputError(f"witness key {name}: its key is not base64 of a type byte and 32 "
                         "bytes")
    if raw[0] != COSIGNATURE_TYPE:
        raise InputError(f"witness key {name} has signature type 0x{raw[0]:02x}, not 0x04 "
                         "(an Ed25519 cosignature/v1 key)")
    if cosigner_key_id(name, raw[1:]).hex() != hex_id:
        raise InputError(f"witness key {name}: key id {hex_id!r} does not match its name and "
                         "public key")
    return name, raw[1:]


def cosigned_message(note_text: bytes, timestamp: int) -> bytes:
    """The bytes a witness signs: the header line, the time line, the checkpoint's text."""
    if not isinstance(timestamp, int) or not 0 <= timestamp <= _MAX_TIME:
        raise InputError(f"cosignature time {timestamp!r} is outside 0..2^63-1")
    if not note_text.endswith(b"\n"):
        raise InputError("the cosigned checkpoint text must end with a newline")
    return _HEADER + f"time {timestamp}\n".encode("ascii") + bytes(note_text)


def cosignature_line(name: str, public_raw: bytes, timestamp: int, signature: bytes) -> str:
    """`— <name> base64(key id || u64 timestamp || signature)` and its newline."""
    if len(signature) != 64:
        raise InputError("an Ed25519 cosignature is 64 bytes")
    if not 0 <= timestamp <= _MAX_TIME:
        raise InputError(f"cosignature time {timestamp} is outside 0..2^63-1")
    blob = cosigner_key_id(name, public_raw) + timestamp.to_bytes(8, "big") + signature
    return f"{EM_DASH} {name} {b64(blob)}\n"


@dataclass(frozen=True)
class Cosignature:
    """A decoded cosignature: its time and its 64-byte Ed25519 signature."""

    timestamp: int
    signature: bytes


def decode_cosignature(sig: NoteSignature) -> Cosignature:
    """The time and signature of a parsed signature line; InputError unless it is 72 bytes
    (8-byte time, 64-byte signature) with a time below 2^63."""
    if len(sig.signature) != 72:
        raise InputError(f"the cosignature by {sig.key_name} is {len(sig.signature)} bytes, "
                         "not an 8-byte time and a 64-byte signature")
    timestamp = int.from_bytes(sig.signature[:8], "big")
    if timestamp > _MAX_TIME:
        raise InputError(f"the cosignature by {sig.key_name} has a time beyond 2^63-1")
    return Cosignature(timestamp, sig.signature[8:])


# --- add-checkpoint -----------------------------------------------------------------------


@dataclass(frozen=True)
class AddCheckpoint:
    """A parsed `add-checkpoint` request: old size, consistency proof, the signed note."""

    old_size: int
    proof: tuple[bytes, ...]
    note: bytes


def _decimal(text: str, what: str) -> int:
    if not text.isascii() or not text.isdigit() or (text != "0" and text[0] == "0"):
        raise InputError(f"{what} {text!r} is not a decimal without leading zeros")
    value = int(text)
    if value > _MAX_SIZE:
        raise InputError(f"{what} {text} does not fit in 64 bits")
    return value


def encode_request(old_size: int, proof: list[bytes], note: str | bytes) -> bytes:
    """The request body: `old <size>`, one base64 line per proof hash, a blank line, note."""
    if len(proof) > MAX_PROOF_LINES:
        raise InputError(f"a consistency proof of {len(proof)} hashes is longer than the "
                         f"{MAX_PROOF_LINES} a request may carry")
    head = f"old {old_size}\n" + "".join(b64(h) + "\n" for h in proof) + "\n"
    return head.encode("ascii") + (note.encode("utf-8") if isinstance(note, str) else note)


def parse_request(body: bytes) -> AddCheckpoint:
    """The request's parts; InputError naming the first malformation (a witness answers 400)."""
    end = body.find(b"\n\n")
    if end < 0:
        raise InputError("the request has no empty line before the checkpoint")
    try:
        lines = body[:end].decode("ascii").split("\n")
    except UnicodeDecodeError:
        raise InputError("the request's old size and proof lines are not ASCII") from None
    if not lines[0].startswith("old "):
        raise InputError("the request does not start with an `old <size>` line")
    old_size = _decimal(lines[0][4:], "the old size")
    proof_lines = lines[1:]
    if len(proof_lines) > MAX_PROOF_LINES:
        raise InputError(f"the request carries more than {MAX_PROOF_LINES} proof lines")
    proof = []
    for n, line in enumerate(proof_lines, 1):
        raw = b64_strict(line)
        if raw is None or len(raw) != 32:
            raise InputError(f"proof line {n} is not the base64 of a 32-byte hash")
        proof.append(raw)
    note = body[end + 2:]
    parse_checkpoint(note)  # InputError naming what is malformed
    return AddCheckpoint(old_size, tuple(proof), note)


def encode_size(size: int) -> bytes:
    """A `text/x.tlog.size` body: the decimal size and a newline."""
    return f"{size}\n".encode("ascii")


def parse_size(body: bytes) -> int:
    """The size of a `text/x.tlog.size` body; InputError unless it is exactly that."""
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        raise InputError("the witness's size answer is not ASCII") from None
    if not text.endswith("\n") or "\n" in text[:-1]:
        raise InputError("the witness's size answer is not one line")
    return _decimal(text[:-1], "the witness's size")
