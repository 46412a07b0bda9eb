"""Ed25519 public keys: fingerprints, checking a key as it enters, verifying a signature,
reading a trusted key (``--trust``). Nothing here signs: the auditor's commands import this
module, never ``logbook.crypto.signing``.

A key's fingerprint is the hex SHA-256 of its raw 32-byte public key (the envelope's
``signer``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from pathlib import Path

from logbook.errors import InputError
from logbook.format.keyfile import KEY_FILE_HEADER, KEY_FILE_LIMIT, PUBLIC_FILE_HEADER

# cryptography is imported where a signature is checked, not at module level: reading
# commands (report, brief, log) import this module for fingerprints alone.


def fingerprint(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()


def verify_signature(public_raw: bytes, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` is ``public_raw``'s Ed25519 signature of ``message``, by
    libsodium (PyNaCl): our own checks of libsodium's rules first (crypto.points: no
    small-order key or R, a canonical key, S below L), so the answer is the same whichever
    library checks the equation (verify_signature_reference is the other, for the tests)."""
    from nacl.bindings import crypto_sign_open
    from nacl.exceptions import BadSignatureError

    from logbook.crypto.points import signature_problem

    if len(public_raw) != 32 or signature_problem(public_raw, signature) is not None:
        return False
    try:
        crypto_sign_open(signature + message, public_raw)  # the signed message: sig || msg
    except (BadSignatureError, ValueError, TypeError):
        return False
    return True


def verify_signature_reference(public_raw: bytes, signature: bytes, message: bytes) -> bool:
    """The same question answered by the cryptography package (OpenSSL): the reference the
    tests hold libsodium's answers to."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from logbook.crypto.points import signature_problem

    if len(public_raw) != 32 or signature_problem(public_raw, signature) is not None:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_raw).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True)
class PublicKey:
    raw: bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.raw)

    @property
    def b64(self) -> str:
        return base64.b64encode(self.raw).decode()

    def verify(self, signature: bytes, message: bytes) -> bool:
        """libsodium's rules (no small-order key or R, a canonical key and S), then the
        verification equation (verify_signature)."""
        return verify_signature(self.raw, signature, message)

    @classmethod
    def from_b64(cls, text: str) -> PublicKey:
        """A public key as it enters (a file, an argument): refused unless it is a usable
        Ed25519 key (not of small order, canonical, on the curve, in the prime subgroup)."""
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InputError(f"public key {text!r} is not valid base64") from exc
        if len(raw) != 32:
            raise InputError(f"public key must be 32 bytes, got {len(raw)}")
        return cls.checked(raw)

    @classmethod
    def checked(cls, raw: bytes, where: str = "public key") -> PublicKey:
        """``raw`` as a key, or WeakKey (exit 2) saying why no ledger may take it."""
        from logbook.crypto.points import public_key_problem

        problem = public_key_problem(raw)
        if problem is not None:
            raise WeakKey(f"{where} is refused: {problem}")
        return cls(raw)


class WeakKey(InputError):
    """A public key no ledger may take: of small order, non-canonical or off the curve."""


def public_key_text(key: PublicKey, name: str = "") -> str:
    """The exported public key file: a header line, the base64 key, and its fingerprint."""
    return f"{PUBLIC_FILE_HEADER}\n{key.b64}\n# name: {name}\n# fingerprint: {key.fingerprint}\n"


def read_trust(value: str, option: str = "--trust") -> tuple[str, PublicKey | None]:
    """``--trust``: a 64-hex fingerprint, or a public-key file (exported or bare base64).

    ``option`` names the option or argument in errors (``PUBLIC`` for ``keys add``)."""
    from logbook.files import read_text

    v = value.strip()
    if len(v) == 64 and all(c in "0123456789abcdef" for c in v.lower()):
        return v.lower(), None
    path = Path(value)
    if not path.exists():
        raise InputError(f"{option} {value!r} is neither a 64-hex fingerprint nor a key file")
    not_key = "a logbook public key file"
    text = read_text(path, option, limit=KEY_FILE_LIMIT, kind=not_key)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if lines and lines[0] == KEY_FILE_HEADER:
        raise InputError(f"{option} {value}: this is a private key; pass the exported public key")
    if lines and lines[0] == PUBLIC_FILE_HEADER:
        lines = lines[1:]
    if len(lines) != 1:
        raise InputError(f"{option} {value} is not {not_key}")
    try:
        pk = PublicKey.from_b64(lines[0])
    except WeakKey as exc:
        raise InputError(f"{option} {value}: the {exc}") from None
    except InputError:
        raise InputError(f"{option} {value} is not {not_key}: its key is not 32 bytes of "
                         "base64") from None
    return pk.fingerprint, pk
