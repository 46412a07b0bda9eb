"""The logs a SQLite ledger keeps (``keep_blob``, ``blob``): files beside the ledger, in
``.logbook/blobs/<sha256 hex>``, each written whole (a temporary file, fsync, rename) so that
a blob under a name is always the bytes of that name or nothing.

The one owner of that folder: `logbook run` keeps logs through the store (the Ledger
service), `verify` reads them back through ``EntryLog.blob`` with a bound, `clone` copies
them. A file and not a table, so that an auditor can check them with `sha256sum`
(docs/recording.md).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from logbook.errors import EnvironmentProblem
from logbook.storage.base import check_blob, is_blob_name


def blob_dir(db: Path) -> Path:
    """The folder of kept logs beside the ledger database ``db``."""
    return db.parent / "blobs"


def _holds(path: Path, digest: str) -> bool:
    """Whether the file's bytes hash to ``digest`` (a file anyone could have written under
    that name is never taken for the log without it: replaced by the bytes that do)."""
    import hashlib

    h = hashlib.sha256()
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return False
    return h.hexdigest() == digest


class BlobFiles:
    """Mixed into SQLiteStore, whose ``path`` is the ledger database."""

    @property
    def path(self) -> Path:
        raise NotImplementedError  # pragma: no cover - SQLiteStore defines it

    def keep_blob(self, digest: str, data: bytes) -> None:
        check_blob(digest, data)
        folder = blob_dir(self.path)
        path = folder / digest
        tmp = folder / f".{digest}.{os.getpid()}.tmp"
        try:
            folder.mkdir(mode=0o755, parents=True, exist_ok=True)  # 0755 or tighter (umask)
            if path.is_file() and path.stat().st_size == len(data) and _holds(path, digest):
                return  # kept already: the file's bytes hash to its name
            try:
                with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
                          "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            finally:  # a failed write (a full disk) leaves no temporary file behind
                tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise EnvironmentProblem(f"{folder} could not be written: "
                                     f"{exc.strerror or exc}") from None

    def blob(self, digest: str, limit: int) -> bytes | None:
        if not is_blob_name(digest):
            return None
        path = blob_dir(self.path) / digest
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):  # none, or a link
                return None
            raise EnvironmentProblem(f"the kept log {path} could not be read: "
                                     f"{exc.strerror or exc}") from None
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None  # a FIFO or device in place of a kept log is no blob
            return fh.read(limit)
