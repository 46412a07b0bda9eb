"""Ed25519 keys, key files, signing and verifying (DESIGN §4.3).

Key files hold the raw 32-byte private seed, base64, on one line, mode 0600. A key's
fingerprint is the hex SHA-256 of its raw 32-byte public key (the envelope's ``signer``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from logbook.errors import EnvironmentProblem, InputError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

# cryptography is imported where keys are used, not at module level: reading commands
# (report, brief, log) import this module for key files and fingerprints alone.

KEY_FILE_HEADER = "logbook-ed25519-private-key-v1"
PUBLIC_FILE_HEADER = "logbook-ed25519-public-key-v1"


def fingerprint(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()


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
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True

    @classmethod
    def from_b64(cls, text: str) -> PublicKey:
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InputError(f"public key {text!r} is not valid base64") from exc
        if len(raw) != 32:
            raise InputError(f"public key must be 32 bytes, got {len(raw)}")
        return cls(raw)


class SigningKey:
    def __init__(self, private: Ed25519PrivateKey, path: Path | None = None) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        self._private = private
        self.path = path
        self.public = PublicKey(
            private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        )

    @classmethod
    def generate(cls) -> SigningKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(Ed25519PrivateKey.generate())

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message)

    def seed(self) -> bytes:
        from cryptography.hazmat.primitives.serialization import (
            Encoding,
            NoEncryption,
            PrivateFormat,
        )

        return self._private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())

    def write(self, path: Path) -> None:
        """Write the key file with mode 0600, refusing to overwrite an existing one."""
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"{KEY_FILE_HEADER}\n{base64.b64encode(self.seed()).decode()}\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        self.path = path

    @classmethod
    def read(cls, path: Path) -> SigningKey:
        try:
            text = path.read_text()
        except FileNotFoundError as exc:
            raise EnvironmentProblem(f"key file {path} does not exist") from exc
        except OSError as exc:
            raise EnvironmentProblem(f"key file {path} cannot be read: {exc.strerror}") from exc
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if len(lines) != 2 or lines[0] != KEY_FILE_HEADER:
            raise EnvironmentProblem(f"key file {path} is not a logbook private key")
        try:
            seed = base64.b64decode(lines[1], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise EnvironmentProblem(f"key file {path} holds invalid base64") from exc
        if len(seed) != 32:
            raise EnvironmentProblem(f"key file {path} does not hold a 32-byte Ed25519 seed")
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(Ed25519PrivateKey.from_private_bytes(seed), path)


def default_key_path() -> Path:
    env = os.environ.get("LOGBOOK_KEY")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "logbook" / "keys" / "default.key"


def load_or_create_key() -> tuple[SigningKey, bool]:
    """For ``init``: the key at the default path (or LOGBOOK_KEY), created if absent."""
    path = default_key_path()
    if path.exists():
        return SigningKey.read(path), False
    key = SigningKey.generate()
    key.write(path)
    return key, True


def load_key() -> SigningKey:
    """For every command that writes: the key must exist (exit 3 otherwise)."""
    path = default_key_path()
    if not path.exists():
        named = "named by LOGBOOK_KEY" if os.environ.get("LOGBOOK_KEY") else "(the default key)"
        raise EnvironmentProblem(
            f"signing key {path} {named} does not exist: `logbook init` or `logbook keys new` "
            "creates one"
        )
    return SigningKey.read(path)


def public_key_text(key: PublicKey, name: str = "") -> str:
    """The exported public key file: a header line, the base64 key, and its fingerprint."""
    return f"{PUBLIC_FILE_HEADER}\n{key.b64}\n# name: {name}\n# fingerprint: {key.fingerprint}\n"


def read_trust(value: str) -> tuple[str, PublicKey | None]:
    """``--trust``: a 64-hex fingerprint, or a public-key file (exported or bare base64)."""
    v = value.strip()
    if len(v) == 64 and all(c in "0123456789abcdef" for c in v.lower()):
        return v.lower(), None
    path = Path(value)
    if not path.exists():
        raise InputError(f"--trust {value!r} is neither a 64-hex fingerprint nor a key file")
    lines = [ln.strip() for ln in path.read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    if lines and lines[0] == KEY_FILE_HEADER:
        raise InputError(f"--trust {value}: this is a private key; pass the exported public key")
    if lines and lines[0] == PUBLIC_FILE_HEADER:
        lines = lines[1:]
    if len(lines) != 1:
        raise InputError(f"--trust {value}: not a logbook public key file")
    pk = PublicKey.from_b64(lines[0])
    return pk.fingerprint, pk
