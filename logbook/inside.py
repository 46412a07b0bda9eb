"""Files inside a folder logbook fills (a published tree, a mirror): written and read without
ever following a symlink or blocking on a special file planted there (docs/publishing.md).

The folder itself is the one the user named (a symlink there is the user's own choice); below
it, every folder is opened relative to its parent with ``O_NOFOLLOW``, so a symlink planted at
``tile/`` or at a file's path can neither redirect a write outside the folder nor be written
through. A file is written as a temporary file in its real folder, synced and renamed over its
path: a symlink, FIFO or device standing there is replaced, never written through. A read opens
without blocking and takes only a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from contextlib import suppress
from pathlib import Path, PurePosixPath

from logbook.errors import EnvironmentProblem, InputError

__all__ = ["read_inside", "write_inside"]

_ENVIRONMENT = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT,
                          errno.EIO})
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _parts(rel: str) -> tuple[str, ...]:
    path = PurePosixPath(rel)
    parts = path.parts
    if not parts or path.is_absolute() or any(p in (".", "..") for p in parts):
        raise InputError(f"{rel!r} is not a path inside the folder")
    return parts


def _failed(exc: OSError, path: Path, what: str) -> InputError | EnvironmentProblem:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return InputError(f"{what} {path} cannot be written: a symlink or a file stands where "
                          "a folder should be, and logbook writes only inside the folder it "
                          "was given, never through a symlink")
    cls = EnvironmentProblem if exc.errno in _ENVIRONMENT else InputError
    return cls(f"{what} {path} cannot be written: {exc.strerror}")


def _open_folders(root: Path, parts: tuple[str, ...], what: str, create: bool) -> int | None:
    """A descriptor of the folder ``root/parts``, each step opened without following a
    symlink (created when missing and ``create``); None when one is missing."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    here = root
    try:
        for part in parts:
            here = here / part
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                with suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError as exc:
        os.close(fd)
        raise _failed(exc, here, what) from None
    return fd


def write_inside(root: Path, rel: str, data: bytes, what: str) -> None:
    """``root/rel`` holds ``data``, whole or not at all; never written through a symlink."""
    import secrets

    parts = _parts(rel)
    try:
        folder = _open_folders(root, parts[:-1], what, create=True)
    except FileNotFoundError:
        raise InputError(f"{what} {root / rel} cannot be written: folder {root} does not "
                         "exist") from None
    assert folder is not None
    target = root / rel
    tmp = f".logbook-{os.getpid()}-{secrets.token_hex(6)}.tmp"
    try:
        try:
            st = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise InputError(f"{what} {target} is a directory")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                     dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
        with suppress(OSError):
            os.fsync(folder)
    except OSError as exc:
        with suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise _failed(exc, target, what) from None
    finally:
        os.close(folder)


def read_inside(root: Path, rel: str, limit: int, what: str = "file") -> bytes | None:
    """The bytes of the regular file ``root/rel`` (at most ``limit`` + 1, so a caller can
    tell a file over its limit); None when it is absent. A symlink below ``root``, a FIFO, a
    device or a folder at that path is an InputError naming it: never followed, never waited
    on."""
    parts = _parts(rel)
    path = root / rel
    try:
        folder = _open_folders(root, parts[:-1], what, create=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except InputError:
        raise InputError(f"{what} {path} is not read: a symlink stands on its way, and logbook "
                         "reads only inside the folder it was given") from None
    if folder is None:
        return None
    try:
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{what} {path} is a symlink; logbook reads only files inside "
                             "the folder it was given") from None
        cls = EnvironmentProblem if exc.errno in _ENVIRONMENT else InputError
        raise cls(f"{what} {path} cannot be read: {exc.strerror}") from None
    finally:
        os.close(folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{what} {path} is not a regular file (a FIFO, a device or a "
                             "folder stands there)")
        os.set_blocking(fd, True)
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise EnvironmentProblem(f"{what} {path} cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
