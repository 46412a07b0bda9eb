"""Reading a file named by the user: one sentence naming the file when it cannot be read."""

from __future__ import annotations

from pathlib import Path

from logbook.errors import InputError


def read_bytes(path: str | Path, what: str = "file") -> bytes:
    """The file's bytes; InputError (exit 2) naming ``what`` and the path otherwise."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} {path} is a directory") from None
    except OSError as exc:
        raise InputError(f"{what} {path} cannot be read: {exc.strerror}") from None
