"""Reading files and streams named on the command line: bounded, and one sentence naming the
file when it cannot be read (``logbook.files`` re-exports these).

Every read is bounded: at most ``max_input_bytes()`` (LOGBOOK_MAX_INPUT_BYTES, default 256 MiB)
unless the caller gives a smaller limit; a FIFO or device is read with that bound and a timeout
(LOGBOOK_READ_TIMEOUT, default 30 s) for each wait, so one with no writer is refused rather than
waited on for ever; a file without line ends is never read whole as one line.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from logbook import config
from logbook.errors import InputError, LogbookError

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


_CHUNK = 1 << 20


def max_input_bytes() -> int:
    """The most bytes read from a file or stream named on the command line
    (LOGBOOK_MAX_INPUT_BYTES, default 256 MiB; logbook.config)."""
    return config.max_input_bytes()


def read_timeout() -> float:
    """How long a FIFO or device may send nothing before it is refused (LOGBOOK_READ_TIMEOUT,
    seconds, default 30; logbook.config)."""
    return config.read_timeout()


def _too_large(path: str | Path, what: str, limit: int, kind: str | None) -> InputError:
    why = f"it is larger than {limit} bytes"
    if kind:
        return InputError(f"{what} {path} is not {kind} ({why})")
    return InputError(f"{what} {path} is too large ({why}; LOGBOOK_MAX_INPUT_BYTES raises the "
                      "limit)")


def _read_stream(fd: int, path: str | Path, what: str, limit: int,
                 kind: str | None) -> bytes:
    """A FIFO or device: at most ``limit`` bytes, none of them waited for longer than the read
    timeout (a FIFO with no writer is refused, never waited on for ever), and the whole read
    over by the command's deadline (a writer sending a byte now and then is cut there)."""
    import select

    timeout = read_timeout()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    total = 0
    while True:
        left = config.time_left()
        ready = left > 0 and poller.poll(min(timeout, left) * 1000)
        if not ready:
            if left < timeout:
                raise InputError(f"{what} {path} was still sending when the command reached "
                                 f"its deadline, {config.deadline():g} s (LOGBOOK_DEADLINE)")
            raise InputError(f"{what} {path} sent nothing for {timeout:g} seconds (a FIFO or "
                             "device with no writer?); LOGBOOK_READ_TIMEOUT sets the wait")
        try:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
        except BlockingIOError:
            continue
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large(path, what, limit, kind)


def read_bytes(path: str | Path, what: str = "file", *, limit: int | None = None,
               kind: str | None = None, missing: type[LogbookError] = InputError,
               unreadable: type[LogbookError] = InputError) -> bytes:
    """The file's bytes; InputError (exit 2) naming ``what`` and the path otherwise.

    At most ``limit`` bytes are read (default: ``max_input_bytes()``): a larger file is
    refused, so that a file named by mistake (/dev/zero, a binary) cannot exhaust memory; a
    FIFO or device is read with that bound and the read timeout. ``kind`` (e.g. "a logbook
    private key") is what the refusal says the file is not; ``missing`` and ``unreadable``
    choose the error for a file that does not exist or cannot be read (a key file the
    environment should provide: exit 3).
    """
    limit = max_input_bytes() if limit is None else limit
    try:
        # O_NONBLOCK: opening a FIFO that has no writer must not wait (it has no effect on
        # the reads of a regular file)
        fd = os.open(on_disk(path), os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise missing(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} {path} is a directory") from None
    except NotADirectoryError:
        raise InputError(f"{what} {path} does not exist: a part of it is not a folder") from None
    except OSError as exc:
        raise unreadable(f"{what} {path} cannot be read: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{what} {path} is a directory")
        if not stat.S_ISREG(st.st_mode):
            return _read_stream(fd, path, what, limit, kind)
        if st.st_size > limit:
            raise _too_large(path, what, limit, kind)
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as fh:
            # what its size says first (no buffer of the whole limit for a small file), then
            # whatever it grew by (or holds, as /proc files do, beyond a size of 0)
            data = fh.read(min(st.st_size, limit) + 1)
            if len(data) > st.st_size:
                data += fh.read(limit + 1 - len(data))
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise InputError(f"{what} {path} is a directory") from None
        raise unreadable(f"{what} {path} cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _too_large(path, what, limit, kind)
    return data


def read_stdin(what: str = "stdin") -> bytes:
    """Standard input, at most ``max_input_bytes()`` of it."""
    import sys

    limit = max_input_bytes()
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise _too_large("-", what, limit, None)
    return data


def bounded_lines(fh: BinaryIO, what: str, limit: int) -> Iterator[bytes]:
    """The lines of an open file, each refused (InputError naming its number) when longer
    than ``limit`` bytes: a file without line ends is never read whole."""
    number = 0
    while line := fh.readline(limit + 1):
        number += 1
        if len(line) > limit:
            raise InputError(f"{what}: line {number} is longer than {limit} bytes, more than "
                             "any entry may hold")
        yield line


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
