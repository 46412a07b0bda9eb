"""C2SP signed notes (DESIGN §4.2): a text, a blank line, then signature lines
`— <key name> <base64(key id || signature)>\\n` (em dash U+2014). For Ed25519 (signature type
0x01) the 4-byte key id is SHA-256(key name || 0x0A || 0x01 || public key)[:4] and the
signature covers the note text, final newline included. The verifier key string other note
readers take is `<name>+<hex key id>+<base64(0x01 || public key)>`. The checkpoint a note's
text holds: logbook.tlog.checkpoint.

Parsing is strict (canonical padded base64, bounded sizes and signature counts), so that a
parsed note re-encodes to exactly the bytes that were signed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from logbook.crypto.points import L, has_small_order, is_canonical
from logbook.errors import InputError

__all__ = [
    "ED25519_TYPE",
    "NoteSignature",
    "key_hash",
    "note_signers",
    "parse_note",
    "parse_verifier_key",
    "sign_note",
    "verifier_key",
    "verify_note",
]

ED25519_TYPE = 0x01
"""C2SP signed-note signature type byte for Ed25519."""

EM_DASH = "\u2014"
_SIG_PREFIX = EM_DASH + " "
_PUBLIC_KEY_SIZE = 32
_SIGNATURE_SIZE = 64
# C2SP: verifiers must accept at least 16 signatures and should cap them; the cap and the
# overall size limit keep a hostile note from costing unbounded work.
_MAX_SIGNATURES = 100
_MAX_NOTE_BYTES = 1 << 20


@dataclass(frozen=True)
class NoteSignature:
    """One signature line: key name, 4-byte key id, and the signature bytes.

    Ed25519 signatures are 64 bytes; other signature types (e.g. witness cosignatures)
    parse too, with their own lengths, and are ignored by verification here.
    """

    key_name: str
    key_hash: bytes
    signature: bytes


def has_control(s: str) -> bool:
    # C2SP signed-note: no ASCII control characters other than newline anywhere; inside a
    # single line, no newline either.
    return any(ord(c) < 0x20 for c in s)


def _valid_key_name(name: object) -> bool:
    return (
        isinstance(name, str)
        and bool(name)
        and "+" not in name
        and not any(c.isspace() for c in name)
        and not has_control(name)
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64_strict(s: str) -> bytes | None:
    """Decode standard padded base64, or None unless `s` is its one canonical encoding.

    Canonical-only matters: a note's body must re-encode byte for byte to what was signed.
    """
    try:
        raw = base64.b64decode(s.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None
    return raw if b64(raw) == s else None


def _check_public_raw(public_raw: object) -> bytes:
    if not isinstance(public_raw, bytes | bytearray) or len(public_raw) != _PUBLIC_KEY_SIZE:
        raise InputError(f"an Ed25519 public key must be {_PUBLIC_KEY_SIZE} raw bytes")
    return bytes(public_raw)


def key_hash(name: str, public_raw: bytes) -> bytes:
    """The 4-byte Ed25519 key id: SHA-256(name || 0x0A || 0x01 || public key)[:4]."""
    if not _valid_key_name(name):
        raise InputError(f"key name {name!r} is empty or contains a space or '+'")
    pub = _check_public_raw(public_raw)
    preimage = name.encode("utf-8") + b"\n" + bytes([ED25519_TYPE]) + pub
    return hashlib.sha256(preimage).digest()[:4]


def verifier_key(name: str, public_raw: bytes) -> str:
    """The verifier key string: `<name>+<hex key id>+<base64(0x01 || public key)>`."""
    kh = key_hash(name, public_raw)
    return f"{name}+{kh.hex()}+{b64(bytes([ED25519_TYPE]) + bytes(public_raw))}"


def parse_verifier_key(vkey: str) -> tuple[str, bytes]:
    """(name, raw public key) from a verifier key string, checking type and key id."""
    if not isinstance(vkey, str):
        raise InputError("verifier key must be a string")
    parts = vkey.split("+", 2)
    if len(parts) != 3:
        raise InputError("verifier key is not of the form <name>+<hex key id>+<base64 key>")
    name, hex_id, b64_key = parts
    if not _valid_key_name(name):
        raise InputError(f"verifier key name {name!r} is empty or contains a space or '+'")
    if len(hex_id) != 8 or any(c not in "0123456789abcdef" for c in hex_id):
        raise InputError(f"verifier key id {hex_id!r} is not 8 lower-case hex digits")
    raw = b64_strict(b64_key)
    if raw is None or len(raw) != 1 + _PUBLIC_KEY_SIZE or raw[0] != ED25519_TYPE:
        raise InputError("verifier key is not base64 of 0x01 followed by a 32-byte Ed25519 key")
    public_raw = raw[1:]
    if key_hash(name, public_raw).hex() != hex_id:
        raise InputError(f"verifier key id {hex_id} does not match its name and public key")
    return name, public_raw


# --- generic signed notes -----------------------------------------------------------------


def _note_str(text: str | bytes) -> str:
    if isinstance(text, bytes | bytearray):
        if len(text) > _MAX_NOTE_BYTES:
            raise InputError(f"signed note is longer than {_MAX_NOTE_BYTES} bytes")
        try:
            return bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("signed note is not valid UTF-8") from None
    if not isinstance(text, str):
        raise InputError("signed note must be text")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InputError("signed note is not valid UTF-8 (it has a lone surrogate)") from None
    if size > _MAX_NOTE_BYTES:
        raise InputError(f"signed note is longer than {_MAX_NOTE_BYTES} bytes")
    return text


def parse_note(text: str | bytes) -> tuple[bytes, list[NoteSignature]]:
    """Split a signed note into its text (UTF-8 bytes, final newline included) and its
    signature lines. Raises InputError naming the first malformation."""
    s = _note_str(text)
    if any(ord(c) < 0x20 and c != "\n" for c in s):
        raise InputError("signed note contains a control character other than newline")
    if not s.endswith("\n"):
        raise InputError("signed note does not end with a newline")
    # The text ends at the last blank line (the text itself may contain blank lines).
    split = s.rfind("\n\n")
    if split < 0:
        raise InputError("signed note has no blank line before its signatures")
    body, sig_block = s[: split + 1], s[split + 2 :]
    lines = sig_block.split("\n")[:-1]  # sig_block ends with "\n"
    if not lines:
        raise InputError("signed note has no signature lines")
    if len(lines) > _MAX_SIGNATURES:
        raise InputError(f"signed note has more than {_MAX_SIGNATURES} signature lines")
    sigs: list[NoteSignature] = []
    for n, line in enumerate(lines, 1):
        if not line.startswith(_SIG_PREFIX):
            raise InputError(f"signature line {n} does not start with an em dash and a space")
        fields = line[len(_SIG_PREFIX) :].split(" ")
        if len(fields) != 2:
            raise InputError(f"signature line {n} is not '— <key name> <base64 signature>'")
        name, b64_sig = fields
        if not _valid_key_name(name):
            raise InputError(f"signature line {n} has an invalid key name {name!r}")
        raw = b64_strict(b64_sig)
        if raw is None:
            raise InputError(f"signature line {n} is not canonical standard base64")
        if len(raw) < 5:
            raise InputError(f"signature line {n} is shorter than a key id and a signature")
        sigs.append(NoteSignature(key_name=name, key_hash=raw[:4], signature=raw[4:]))
    return body.encode("utf-8"), sigs


def _signature_line(key_name: str, kh: bytes, signature: bytes) -> str:
    return f"{_SIG_PREFIX}{key_name} {b64(kh + signature)}\n"


def sign_note(
    text: str | bytes, key_name: str, sign: Callable[[bytes], bytes], public_raw: bytes
) -> str:
    """Sign note text (non-empty, newline-terminated) with one Ed25519 key; return the note.

    `sign` gets the text bytes and returns the 64-byte signature. The signature is checked
    against `public_raw` before it is returned, so a mismatched key pair fails here rather
    than in every reader's hands.
    """
    body = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if not body.endswith(b"\n") or body == b"\n":
        raise InputError("note text must be non-empty and end with a newline")
    kh = key_hash(key_name, public_raw)
    signature = sign(body)
    if not isinstance(signature, bytes) or len(signature) != _SIGNATURE_SIZE:
        raise ValueError(f"the signer returned {signature!r}, not a 64-byte Ed25519 signature")
    try:
        Ed25519PublicKey.from_public_bytes(bytes(public_raw)).verify(signature, body)
    except InvalidSignature:
        raise ValueError("the signature does not verify with the given public key") from None
    note = body.decode("utf-8") + "\n" + _signature_line(key_name, kh, signature)
    parse_note(note)  # the result must be a note we would accept ourselves
    return note


def verify_note(
    text_or_parsed: str | bytes | tuple[bytes, Sequence[NoteSignature]],
    key_name: str,
    public_raws: Sequence[bytes],
) -> bool:
    """Whether a signature by `key_name` with one of `public_raws` verifies over the text.

    Per C2SP signed-note, lines whose (name, key id) match no given key are ignored; a line
    that matches a given key but fails to verify rejects the whole note. Malformed input
    gives False.
    """
    return bool(note_signers(text_or_parsed, key_name, public_raws))


def note_signers(
    text_or_parsed: str | bytes | tuple[bytes, Sequence[NoteSignature]],
    key_name: str,
    public_raws: Sequence[bytes],
) -> list[bytes]:
    """`verify_note`, saying which of `public_raws` verified a line: empty when the note is
    rejected or no line matches a given key (each signature is checked once)."""
    if isinstance(text_or_parsed, tuple):
        if len(text_or_parsed) != 2:
            return []
        body, sigs = text_or_parsed
        if not isinstance(body, bytes | bytearray) or not all(
            isinstance(s, NoteSignature) for s in sigs
        ):
            return []
    else:
        try:
            body, sigs = parse_note(text_or_parsed)
        except InputError:
            return []
    keys: dict[bytes, list[tuple[bytes, Ed25519PublicKey]]] = {}
    for pub in public_raws:
        try:
            if has_small_order(pub) or not is_canonical(pub):
                continue  # a weak key verifies nothing
            kh = key_hash(key_name, pub)
            keys.setdefault(kh, []).append(
                (bytes(pub), Ed25519PublicKey.from_public_bytes(bytes(pub))))
        except (InputError, ValueError, TypeError):
            continue  # not a usable key for this name: it can match nothing
    signers: list[bytes] = []
    for sig in sigs:
        if sig.key_name != key_name or sig.key_hash not in keys:
            continue
        if len(sig.signature) != _SIGNATURE_SIZE:
            return []
        if has_small_order(sig.signature[:32]) or \
                int.from_bytes(sig.signature[32:], "little") >= L:
            return []  # libsodium's rules: no small-order R, S below the group order
        for raw, pk in keys[sig.key_hash]:
            try:
                pk.verify(sig.signature, bytes(body))
                signers.append(raw)
                break
            except InvalidSignature:
                continue
        else:
            return []
    return signers
