"""Files named by the user: one sentence naming the file when it cannot be read or written.

Reading: ``read_bytes`` / ``read_text``. Writing: ``atomic_writer`` / ``write_atomic`` (the file
is whole or absent: a temporary file in the same folder, renamed over the target, removed on any
failure) and ``write_new`` (exclusive creation, for key files that are never overwritten).

A path that is a directory, lies in a folder that does not exist, or holds the wrong content is
bad input (InputError, exit 2); a folder or medium that refuses the write (permission denied,
read-only, full) is an environment problem (EnvironmentProblem, exit 3).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TextIO

from logbook.errors import EnvironmentProblem, InputError, LogbookError

# errors of the machine rather than of the path the user named
_ENVIRONMENT_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC,
                                 errno.EDQUOT, errno.EIO})


_ESCAPED_BYTE = re.compile(r"\\x([89a-f][0-9a-f])")


def on_disk(path: str | Path) -> str | Path:
    """``path``, or the file it names when the command line escaped bytes that are not UTF-8.

    cli.main turns such argv bytes into ``\\xNN`` text (so that text can enter entries); a
    file whose name holds them is then found by undoing exactly that escape, when the path as
    written does not exist.
    """
    text = str(path)
    if "\\x" not in text or Path(path).exists():
        return path
    raw = _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), text)
    return raw if Path(raw).exists() else path


def read_bytes(path: str | Path, what: str = "file", *, limit: int | None = None,
               kind: str | None = None, missing: type[LogbookError] = InputError,
               unreadable: type[LogbookError] = InputError) -> bytes:
    """The file's bytes; InputError (exit 2) naming ``what`` and the path otherwise.

    ``limit`` refuses a file larger than that many bytes (a key file named by mistake as
    /dev/zero or a binary); ``kind`` (e.g. "a logbook private key") is what the refusal says
    the file is not; ``missing`` and ``unreadable`` choose the error for a file that does not
    exist or cannot be read (a key file the environment should provide: exit 3).
    """
    try:
        with open(on_disk(path), "rb") as fh:
            data = fh.read() if limit is None else fh.read(limit + 1)
    except FileNotFoundError:
        raise missing(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} {path} is a directory") from None
    except NotADirectoryError:
        raise InputError(f"{what} {path} does not exist: a part of it is not a folder") from None
    except OSError as exc:
        raise unreadable(f"{what} {path} cannot be read: {exc.strerror}") from None
    if limit is not None and len(data) > limit:
        why = f"it is larger than {limit} bytes"
        raise InputError(f"{what} {path} is not {kind} ({why})" if kind else
                         f"{what} {path} is too large ({why})")
    return data


def read_text(path: str | Path, what: str = "file", *, limit: int | None = None,
              kind: str | None = None, missing: type[LogbookError] = InputError,
              unreadable: type[LogbookError] = InputError) -> str:
    """The file's UTF-8 text (see ``read_bytes``); InputError naming it for a binary file."""
    data = read_bytes(path, what, limit=limit, kind=kind, missing=missing,
                      unreadable=unreadable)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{what} {path} is not {kind or 'a text file'} (it is not UTF-8 "
                         "text)") from None


def _path_problem(path: str | Path, what: str) -> InputError | None:
    """What is wrong with ``path`` as an output before writing: a directory, or a folder that
    does not exist or is not a folder; None when the path looks writable."""
    target = Path(path)
    if target.is_dir():
        return InputError(f"{what} {path} is a directory")
    folder = target.parent
    if not folder.exists():
        return InputError(f"{what} {path} cannot be written: folder {folder} does not exist")
    if not folder.is_dir():
        return InputError(f"{what} {path} cannot be written: {folder} is not a folder")
    return None


def write_error(exc: OSError, path: str | Path, what: str) -> LogbookError:
    """The one-sentence error for a failed write of ``path``."""
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{what} {path} is a directory")
    problem = _path_problem(path, what)
    if problem is not None:
        return problem
    if exc.errno in _ENVIRONMENT_ERRNOS:
        return EnvironmentProblem(f"{what} {path} cannot be written: {exc.strerror}")
    return InputError(f"{what} {path} cannot be written: {exc.strerror}")


def check_writable(path: str | Path, what: str = "file") -> None:
    """Refuse, before anything is done, an output path that is a directory or whose folder
    does not exist (the checks that need no write)."""
    problem = _path_problem(path, what)
    if problem is not None:
        raise problem


@contextmanager
def atomic_writer(path: str | Path, what: str = "file") -> Iterator[TextIO]:
    """A text file (UTF-8, ``\\n`` line ends) that replaces ``path`` when the block ends.

    The temporary file is created on entry, so a path that cannot be written is refused before
    the block runs; if the block or the write fails, the temporary file is removed and ``path``
    is left as it was.
    """
    check_writable(path, what)
    target = Path(path)
    tmp = target.parent / f".logbook-{os.getpid()}-{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise write_error(exc, path, what) from None
    done = False
    fh = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
    try:
        yield fh
        try:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            os.replace(tmp, target)
        except OSError as exc:
            raise write_error(exc, path, what) from None
        done = True
    finally:
        if not fh.closed:
            with suppress(OSError):
                fh.close()
        if not done:
            with suppress(OSError):
                tmp.unlink()


def write_atomic(path: str | Path, text: str, what: str = "file") -> None:
    """Write ``text`` to ``path`` whole or not at all (see ``atomic_writer``)."""
    with atomic_writer(path, what) as fh:
        fh.write(text)


def write_new(path: str | Path, text: str, what: str = "file", *, mode: int = 0o600,
              parents: bool = False) -> None:
    """Create ``path`` holding ``text``, refusing to overwrite it; removed again on failure.

    ``parents`` creates missing folders (the default key's folder); otherwise a path in a
    folder that does not exist is refused.
    """
    target = Path(path)
    if parents:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            cls = EnvironmentProblem if exc.errno in _ENVIRONMENT_ERRNOS else InputError
            raise cls(f"{what} {path} cannot be written: folder {target.parent} cannot be "
                      f"created ({exc.strerror})") from None
    check_writable(path, what)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise InputError(f"{what} {path} already exists; it is never overwritten") from None
    except OSError as exc:
        raise write_error(exc, path, what) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        with suppress(OSError):
            target.unlink()
        if isinstance(exc, OSError):
            raise write_error(exc, path, what) from None
        raise
