"""Files named by the user: one sentence naming the file when it cannot be read or written.

Reading: ``read_bytes`` / ``read_text``. Writing: ``atomic_writer`` / ``write_atomic`` (a
regular file is whole or absent: a temporary file in the same folder, synced, renamed over the
target, removed on any failure; a symlink is followed and its target written so; a character
device or FIFO is written through, never replaced) and ``write_new`` (exclusive creation, for key
files that are never overwritten).

A path that is a directory, lies in a folder that does not exist, or holds the wrong content is
bad input (InputError, exit 2); a folder or medium that refuses the write (permission denied,
read-only, full) is an environment problem (EnvironmentProblem, exit 3).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from logbook.errors import EnvironmentProblem, InputError, LogbookError
from logbook.reading import (
    bounded_lines,
    max_input_bytes,
    on_disk,
    read_bytes,
    read_stdin,
    read_text,
    read_timeout,
)

__all__ = ["Output", "atomic_writer", "bounded_lines", "check_writable", "max_input_bytes",
           "on_disk", "read_bytes", "read_stdin", "read_text", "read_timeout", "sync_folder",
           "write_atomic", "write_error", "write_new"]

# errors of the machine rather than of the path the user named
_ENVIRONMENT_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC,
                                 errno.EDQUOT, errno.EIO})


def _resolved(path: str | Path, what: str) -> tuple[Path, os.stat_result | None]:
    """The file ``path`` names once symlinks are followed, and its stat (None when absent)."""
    real = Path(os.path.realpath(path))
    try:
        return real, os.stat(real)
    except FileNotFoundError:
        return real, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{what} {path} cannot be written: it is a loop of symlinks") \
                from None
        return real, None


def _path_problem(path: str | Path, what: str) -> InputError | None:
    """What is wrong with ``path`` as an output before writing: a directory, a special file
    that cannot be written through, or a folder that does not exist or is not a folder; None
    when the path looks writable. A symlink is judged by the file it points to."""
    target, st = _resolved(path, what)
    if st is not None and stat.S_ISDIR(st.st_mode):
        return InputError(f"{what} {path} is a directory")
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISCHR(st.st_mode)
                               or stat.S_ISFIFO(st.st_mode)):
        kind = "a block device" if stat.S_ISBLK(st.st_mode) else (
            "a socket" if stat.S_ISSOCK(st.st_mode) else "a special file")
        return InputError(f"{what} {path} is {kind}: name a regular file, a character "
                          "device or a FIFO")
    if st is not None and stat.S_ISREG(st.st_mode):
        precious = _precious(target)
        if precious is not None:
            return InputError(f"{what} {path} is {precious}: it is never overwritten, name "
                              "another file")
    folder = target.parent
    if not folder.exists():
        return InputError(f"{what} {path} cannot be written: folder {folder} does not exist")
    if not folder.is_dir():
        return InputError(f"{what} {path} cannot be written: {folder} is not a folder")
    return None


_SQLITE_HEADER = b"SQLite format 3\0"


def _head(path: Path, size: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def _precious(target: Path) -> str | None:
    """What an existing regular file at ``target`` holds that an output must never replace:
    an SQLite database (a ledger), the ``-wal``/``-shm`` file of one, or a logbook private
    key; None otherwise. Judged by content, so a hard link or a copy is protected too."""
    from logbook.format.keyfile import KEY_FILE_HEADER

    head = _head(target, 256)
    if head.startswith(_SQLITE_HEADER):
        return "an SQLite database (a ledger?)"
    if head.lstrip().startswith(KEY_FILE_HEADER.encode()):
        return "a logbook private key"
    for suffix in ("-wal", "-shm", "-journal"):
        if target.name.endswith(suffix):
            db = target.with_name(target.name[: -len(suffix)])
            if _head(db, len(_SQLITE_HEADER)) == _SQLITE_HEADER:
                return f"the {suffix[1:]} file of the SQLite database {db}"
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
    """Refuse, before anything is done, an output path that is a directory, a block device or
    socket, or whose folder does not exist (the checks that need no write)."""
    problem = _path_problem(path, what)
    if problem is not None:
        raise problem


# what fsync says of a file that has nothing to sync (a character device, a pipe)
_NO_SYNC_ERRNOS = frozenset({errno.EINVAL, errno.EROFS, errno.ENOTSUP, errno.EBADF})
_BUFFER = 1 << 20


class Output:
    """An output being written: ``write`` text (UTF-8, ``\\n`` kept) or ``write_bytes``, then
    ``commit`` (which ``atomic_writer`` calls at the end of its block if the caller did not).

    A regular file is a temporary file beside the target, synced and renamed over it at
    commit; a character device or FIFO is written through (no rename) and synced where it can
    be. Every failed write is one sentence naming the path (exit 2, or 3 for a full disk).
    """

    def __init__(self, fd: int, path: str | Path, what: str, tmp: Path | None,
                 target: Path) -> None:
        self._fd: int | None = fd
        self.path, self.what, self.tmp, self.target = path, what, tmp, target
        self._buf = bytearray()
        self.committed = False

    def write(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8"))

    def write_bytes(self, data: bytes) -> None:
        if len(data) >= _BUFFER:  # large already: written as it is, not copied in first
            self._flush()
            self._write(data)
            return
        self._buf += data
        if len(self._buf) >= _BUFFER:
            self._flush()

    def _flush(self) -> None:
        self._write(self._buf)
        self._buf.clear()

    def _write(self, data: bytes | bytearray) -> None:
        assert self._fd is not None, "the output is closed"
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            raise write_error(exc, self.path, self.what) from None
        finally:
            view.release()

    def commit(self) -> None:
        """Write out, sync and (for a regular file) rename into place: after this returns the
        bytes are on the medium, so what depends on them may be kept."""
        if self.committed:
            return
        self._flush()
        assert self._fd is not None
        try:
            os.fsync(self._fd)
        except OSError as exc:
            if self.tmp is not None or exc.errno not in _NO_SYNC_ERRNOS:
                raise write_error(exc, self.path, self.what) from None
        self.close()
        if self.tmp is not None:
            try:
                os.replace(self.tmp, self.target)
            except OSError as exc:
                raise write_error(exc, self.path, self.what) from None
            sync_folder(self.target.parent)
        self.committed = True

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with suppress(OSError):
                os.close(fd)


def sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: some file systems cannot)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _open_output(path: str | Path, what: str) -> Output:
    """The Output for ``path``: see ``atomic_writer``."""
    check_writable(path, what)
    target, st = _resolved(path, what)
    if st is not None and not stat.S_ISREG(st.st_mode):
        # a character device or FIFO: written through. A FIFO is opened without blocking, so
        # one that nobody reads is refused rather than waited on for ever
        fifo = stat.S_ISFIFO(st.st_mode)
        try:
            fd = os.open(target, os.O_WRONLY | (os.O_NONBLOCK if fifo else 0))
        except OSError as exc:
            if fifo and exc.errno == errno.ENXIO:
                raise InputError(f"{what} {path} is a FIFO that nobody is reading") from None
            raise write_error(exc, path, what) from None
        if fifo:
            os.set_blocking(fd, True)
        return Output(fd, path, what, None, target)
    import secrets  # here, not at the top: only a file being written needs it

    tmp = target.parent / f".logbook-{os.getpid()}-{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise write_error(exc, path, what) from None
    return Output(fd, path, what, tmp, target)


@contextmanager
def atomic_writer(path: str | Path, what: str = "file") -> Iterator[Output]:
    """An Output that replaces ``path`` when the block ends (or when it is committed).

    A regular file (or a new one) is written atomically: a temporary file in the same folder,
    synced, renamed over it; a symlink is followed and the file it points to is written so. A
    character device or a FIFO is written through, never replaced; a FIFO nobody reads, a
    block device or a socket is refused (exit 2). The output is opened on entry, so a path
    that cannot be written is refused before the block runs; if the block or the write fails,
    the temporary file is removed and ``path`` is left as it was.
    """
    out = _open_output(path, what)
    try:
        yield out
        out.commit()
    finally:
        out.close()
        if not out.committed and out.tmp is not None:
            with suppress(OSError):
                out.tmp.unlink()


def write_atomic(path: str | Path, text: str, what: str = "file") -> None:
    """Write ``text`` to ``path`` whole or not at all (see ``atomic_writer``)."""
    with atomic_writer(path, what) as fh:
        fh.write(text)


def make_private_folders(folder: Path, what: str, path: str | Path) -> None:
    """Create ``folder`` and any missing parents mode 0700, whatever the umask (a key's
    folder: nobody else may list or replace the keys in it)."""
    missing = []
    here = folder
    while not here.exists():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    try:
        for created in reversed(missing):
            created.mkdir(mode=0o700)
            os.chmod(created, 0o700)  # mkdir's mode is cut by the umask; this is not
    except FileExistsError:
        pass  # another process made it meanwhile
    except OSError as exc:
        cls = EnvironmentProblem if exc.errno in _ENVIRONMENT_ERRNOS else InputError
        raise cls(f"{what} {path} cannot be written: folder {folder} cannot be "
                  f"created ({exc.strerror})") from None


def write_new(path: str | Path, text: str, what: str = "file", *, mode: int = 0o600,
              parents: bool = False) -> None:
    """Create ``path`` holding ``text`` with exactly ``mode`` (whatever the umask), refusing
    to overwrite it; removed again on failure.

    ``parents`` creates missing folders, mode 0700 (the default key's folder); otherwise a
    path in a folder that does not exist is refused.
    """
    target = Path(path)
    if parents:
        make_private_folders(target.parent, what, path)
    check_writable(path, what)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise InputError(f"{what} {path} already exists; it is never overwritten") from None
    except OSError as exc:
        raise write_error(exc, path, what) from None
    try:
        os.fchmod(fd, mode)
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
