"""C2SP tlog-checkpoint bodies (DESIGN §4.2), signed as notes (logbook.tlog.note).

A checkpoint is a C2SP `signed-note` whose text is the C2SP `tlog-checkpoint` body:

    <origin>\\n<decimal tree size>\\n<base64 root hash>\\n[<extension line>\\n ...]

logbook's origin is `logbook/<ledger uuid>` and its key name is the origin. Parsing is strict
so that a parsed checkpoint re-encodes to exactly the bytes that were signed: canonical
decimal, canonical padded base64, a 32-byte root.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logbook.errors import InputError
from logbook.tlog.note import (
    NoteSignature,
    b64,
    b64_strict,
    has_control,
    note_signers,
    parse_note,
    sign_note,
)

__all__ = [
    "Checkpoint",
    "body_text",
    "checkpoint_signers",
    "parse_checkpoint",
    "parse_checkpoint_body",
    "sign_checkpoint",
    "verify_checkpoint_signature",
]

_ROOT_SIZE = 32
_MAX_SIZE = 2**64 - 1  # tree sizes are uint64 for every other checkpoint reader


@dataclass(frozen=True)
class Checkpoint:
    """A tree head: log origin, tree size and 32-byte RFC 6962 root hash.

    `extensions` are the optional extra body lines C2SP allows (opaque, non-empty).
    """

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.origin, str) or not self.origin:
            raise InputError("checkpoint origin must be a non-empty string")
        if has_control(self.origin):
            raise InputError(f"checkpoint origin {self.origin!r} contains a control character")
        if not isinstance(self.size, int) or isinstance(self.size, bool):
            raise InputError(f"checkpoint size {self.size!r} is not an integer")
        if not 0 <= self.size <= _MAX_SIZE:
            raise InputError(f"checkpoint size {self.size} is outside 0..2^64-1")
        if not isinstance(self.root, bytes) or len(self.root) != _ROOT_SIZE:
            raise InputError(f"checkpoint root must be {_ROOT_SIZE} bytes")
        if not isinstance(self.extensions, tuple):
            raise InputError("checkpoint extensions must be a tuple of strings")
        for line in self.extensions:
            if not isinstance(line, str) or not line or has_control(line):
                raise InputError(
                    f"checkpoint extension line {line!r} is empty or has a control character"
                )



def body_text(cp: Checkpoint) -> bytes:
    """The checkpoint note text: origin, size, base64 root, extension lines, each + \\n."""
    lines = [cp.origin, str(cp.size), b64(cp.root), *cp.extensions]
    return "".join(line + "\n" for line in lines).encode("utf-8")


def parse_checkpoint_body(body: bytes | str) -> Checkpoint:
    """Parse checkpoint note text (without signatures). Raises InputError if malformed."""
    if isinstance(body, bytes | bytearray):
        try:
            s = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("checkpoint text is not valid UTF-8") from None
    else:
        s = body
    if not s.endswith("\n"):
        raise InputError("checkpoint text does not end with a newline")
    lines = s[:-1].split("\n")
    if len(lines) < 3:
        raise InputError("checkpoint text has fewer than three lines (origin, size, root)")
    origin, size_s, root_s, *extensions = lines
    if not origin:
        raise InputError("checkpoint origin line is empty")
    if not size_s.isascii() or not size_s.isdigit() or (size_s != "0" and size_s[0] == "0"):
        raise InputError(f"checkpoint size {size_s!r} is not a decimal without leading zeros")
    size = int(size_s)
    if size > _MAX_SIZE:
        raise InputError(f"checkpoint size {size_s} does not fit in 64 bits")
    root = b64_strict(root_s)
    if root is None:
        raise InputError("checkpoint root hash is not canonical standard base64")
    if len(root) != _ROOT_SIZE:
        raise InputError(f"checkpoint root hash is {len(root)} bytes, not {_ROOT_SIZE}")
    if any(not e for e in extensions):
        raise InputError("checkpoint text has an empty extension line")
    return Checkpoint(origin=origin, size=size, root=root, extensions=tuple(extensions))


def sign_checkpoint(
    cp: Checkpoint, key_name: str, sign: Callable[[bytes], bytes], public_raw: bytes
) -> str:
    """The signed checkpoint note text. logbook signs with key_name == cp.origin, which is
    what `verify_checkpoint_signature` requires."""
    return sign_note(body_text(cp), key_name, sign, public_raw)


def parse_checkpoint(text: str | bytes) -> tuple[Checkpoint, list[NoteSignature]]:
    """Parse a signed checkpoint note; signatures are returned unverified.

    Raises InputError naming what is malformed.
    """
    body, sigs = parse_note(text)
    return parse_checkpoint_body(body), sigs


def verify_checkpoint_signature(
    text_or_parsed: str | bytes | tuple[Checkpoint, Sequence[NoteSignature]],
    public_raws: Sequence[bytes],
) -> bool:
    """True iff the checkpoint carries a verifying Ed25519 signature whose key name is the
    checkpoint's origin and whose key id and signature match one of `public_raws`.

    Follows `verify_note`: a matching line that fails rejects the note; malformed text gives
    False (call `parse_checkpoint` to learn why).
    """
    return bool(checkpoint_signers(text_or_parsed, public_raws))


def checkpoint_signers(
    text_or_parsed: str | bytes | tuple[Checkpoint, Sequence[NoteSignature]],
    public_raws: Sequence[bytes],
) -> list[bytes]:
    """`verify_checkpoint_signature`, saying which of `public_raws` signed (`note_signers`)."""
    if isinstance(text_or_parsed, tuple):
        if len(text_or_parsed) != 2 or not isinstance(text_or_parsed[0], Checkpoint):
            return []
        cp, sigs = text_or_parsed
    else:
        try:
            cp, sigs = parse_checkpoint(text_or_parsed)
        except InputError:
            return []
    # Rebuilding the body is exact because parsing accepts only canonical encodings.
    return note_signers((body_text(cp), sigs), cp.origin, public_raws)
