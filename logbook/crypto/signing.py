"""Ed25519 signing keys and their key files (DESIGN §4.3): the write side's half of
``logbook.crypto``; ``logbook.crypto.public`` holds what a verifier needs.

Key files hold the raw 32-byte private seed, base64, on one line, mode 0600.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import TYPE_CHECKING

from logbook import config
from logbook.crypto.public import PublicKey
from logbook.errors import EnvironmentProblem, InputError
from logbook.format.keyfile import KEY_FILE_HEADER, KEY_FILE_LIMIT

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


class SigningKey:
    # the raw-bytes methods, not public_bytes(Encoding.Raw, ...): the serialization module
    # they need imports cryptography's SSH and PKCS machinery, ~5 ms of every append
    def __init__(self, private: Ed25519PrivateKey, path: Path | None = None) -> None:
        self._private = private
        self.path = path
        self.public = PublicKey(private.public_key().public_bytes_raw())

    @classmethod
    def generate(cls) -> SigningKey:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(Ed25519PrivateKey.generate())

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message)

    def seed(self) -> bytes:
        return self._private.private_bytes_raw()

    def write(self, path: Path, what: str = "key file", parents: bool = True) -> None:
        """Write the key file with mode 0600, refusing to overwrite an existing one.

        ``parents`` creates the key's folder (the default key's); a key file that cannot be
        written, or only partly, is refused naming ``what`` and leaves nothing behind.
        """
        from logbook.files import write_new

        text = f"{KEY_FILE_HEADER}\n{base64.b64encode(self.seed()).decode()}\n"
        _private_folder(Path(path), what)  # an existing folder others can write: refused
        write_new(path, text, what, mode=0o600, parents=parents)
        self.path = path

    @classmethod
    def read(cls, path: Path, what: str = "key file", for_signing: bool = True) -> SigningKey:
        """The key in ``path``: a missing or unreadable file is the environment's problem
        (exit 3); a directory, a binary or a malformed file is bad input (exit 2). For
        signing, a key file that others can read or write is refused (exit 3), as ssh does."""
        from logbook.files import read_text

        not_key = "a logbook private key"
        text = read_text(path, what, limit=KEY_FILE_LIMIT, kind=not_key,
                         missing=EnvironmentProblem, unreadable=EnvironmentProblem)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if len(lines) != 2 or lines[0] != KEY_FILE_HEADER:
            raise InputError(f"{what} {path} is not {not_key}")
        try:
            seed = base64.b64decode(lines[1], validate=True)
        except (binascii.Error, ValueError):
            raise InputError(f"{what} {path} is not {not_key}: its key is not valid "
                             "base64") from None
        if len(seed) != 32:
            raise InputError(f"{what} {path} is not {not_key}: it does not hold a 32-byte "
                             "Ed25519 seed")
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        if for_signing:  # a key it is, but one others may have read: not for signing
            _private_enough(path, what)
        return cls(Ed25519PrivateKey.from_private_bytes(seed), path)


def _private_enough(path: Path, what: str) -> None:
    """EnvironmentProblem when the key file at ``path`` is open to its group or others, or
    lies in a folder they can write (they could replace it with their own key), as ssh
    refuses."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return  # reading it says what is wrong
    if stat.S_ISREG(st.st_mode) and st.st_mode & 0o077:
        raise EnvironmentProblem(
            f"{what} {path} can be read or written by others (mode "
            f"{stat.S_IMODE(st.st_mode):04o}), so it is not used to sign: run `chmod 600 "
            f"{path}`")
    _private_folder(Path(path), what)


def _private_folder(path: Path, what: str) -> None:
    """EnvironmentProblem when the folder holding the key file ``path`` exists and its group
    or others can write it (a sticky /tmp-like folder included: ssh refuses those too)."""
    import stat

    folder = Path(os.path.realpath(path)).parent
    try:
        st = os.stat(folder)
    except OSError:
        return  # missing: created private; unreadable: reading the key says so
    if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o022:
        raise EnvironmentProblem(
            f"{what} {path} is in folder {folder}, which others can write (mode "
            f"{stat.S_IMODE(st.st_mode):04o}), so it is not used to sign: run `chmod 700 "
            f"{folder}`")




def default_key_path() -> Path:
    """LOGBOOK_KEY, else the user's default key (logbook.config)."""
    return config.key_path()


def key_path_name() -> str:
    """What to call the key at ``default_key_path()`` in an error: the variable naming it."""
    return "LOGBOOK_KEY" if config.key_setting() else "key file"


def load_or_create_key() -> tuple[SigningKey, bool]:
    """For ``init``: the key at the default path (or LOGBOOK_KEY), created if absent."""
    path = default_key_path()
    if path.exists():
        return SigningKey.read(path, key_path_name()), False
    key = SigningKey.generate()
    key.write(path, key_path_name())
    return key, True


def load_key(for_signing: bool = True) -> SigningKey:
    """For every command that writes: the key must exist (exit 3 otherwise), and be private
    to its owner when it will sign."""
    path = default_key_path()
    if not path.exists():
        env = config.key_setting()
        if env:
            named = "(named by LOGBOOK_KEY)"
        elif env is not None:
            named = "(the default key, as LOGBOOK_KEY is empty)"
        else:
            named = "(the default key)"
        raise EnvironmentProblem(
            f"signing key {path} {named} does not exist: `logbook init` or `logbook keys new` "
            "creates one"
        )
    return SigningKey.read(path, key_path_name(), for_signing=for_signing)
