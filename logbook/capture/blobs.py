"""A run's log references: each log (the command's output, every ``--log`` file) scrubbed of
secrets, hashed and handed to the ledger to keep.

A run records each log's name, sha256, size and a short excerpt; the bytes themselves are kept
by the ledger's store (``EntryLog.keep_blob``): files beside a SQLite ledger
(``.logbook/blobs/<sha256 hex>``, logbook.storage.sqlite.blobs), rows of a PostgreSQL ledger's
``blobs`` table. Text is scrubbed before it is hashed and kept: what is stored is exactly what
the hash names. A log that cannot be kept still has its reference, and the run's reason says
it was not kept (``not_kept``): `verify` reads that sentence to tell a blob lost since from
one that never was (logbook.verify.logs).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

EXCERPT_LINES = 20
EXCERPT_CHARS = 2000


def excerpt(text: str) -> str:
    """The last lines of a log: where the reason for a failure usually is."""
    tail = "\n".join(text.rstrip("\n").splitlines()[-EXCERPT_LINES:])
    return tail[-EXCERPT_CHARS:]


class BlobNotKept(Exception):
    """The blob could not be written (a full disk, permissions); ``ref`` is its reference all
    the same (name, hash, size, excerpt), so the run can still say what the log was."""

    def __init__(self, ref: dict[str, Any], why: str) -> None:
        super().__init__(why)
        self.ref, self.why = ref, why


Keeper = Callable[[str, bytes], None]  # (sha256 hex, bytes): EntryLog.keep_blob


def not_kept(name: str, size: int, digest: str) -> str:
    """How a run's reason begins its sentence about a log that was not kept (``digest``: bare
    hex); logbook.verify.logs looks for it (and for "was not kept", which runs recorded on a
    PostgreSQL ledger said before it kept logs)."""
    return f"log {name!r} ({size} bytes, sha256:{digest[:16]}…) could not be kept"


def keep(keeper: Keeper, name: str, data: bytes, env: Mapping[str, str] | None = None,
         values: Iterable[str] = ()) -> dict[str, Any]:
    """Scrub ``data`` (when it is text), have ``keeper`` keep it and return the run's log
    reference.

    ``values`` are secrets known from elsewhere (the command line) scrubbed wherever they
    appear. BlobNotKept when the blob cannot be kept: the reference comes with it."""
    from logbook.capture.redact import scrub_text
    from logbook.errors import LogbookError

    # bytes that are not UTF-8 survive as surrogates, so a secret in a Latin-1 log is scrubbed too
    text = data.decode("utf-8", "surrogateescape")
    text, _count = scrub_text(text, env=os.environ if env is None else env, values=values)
    data = text.encode("utf-8", "surrogateescape")
    digest = hashlib.sha256(data).hexdigest()
    ref: dict[str, Any] = {"name": name, "sha256": f"sha256:{digest}", "size": len(data)}
    if text.strip():
        ref["excerpt"] = excerpt(text.encode("utf-8", "surrogateescape").decode("utf-8",
                                                                               "backslashreplace"))
    try:
        keeper(digest, data)
    except (LogbookError, OSError) as exc:
        raise BlobNotKept(ref, f"{not_kept(name, len(data), digest)}: {exc}") from None
    return ref


def keep_logs(keeper: Keeper, output: bytes, logs: list[str], taken: list[str],
              seen: Callable[[str, bytes], None] | None = None
              ) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Log references for a command's output and each ``--log`` file (read with logbook's
    bound), what was unreadable, and which blobs could not be kept (their references are
    kept all the same). ``seen`` is shown each ``--log`` file's name and bytes as read (the
    load-log readers, logbook.capture.loadlogs)."""
    from logbook.errors import LogbookError
    from logbook.files import read_bytes

    refs: list[dict[str, Any]] = []
    unreadable: list[str] = []
    lost: list[str] = []

    def one(label: str, data: bytes) -> None:
        try:
            refs.append(keep(keeper, label, data, values=taken))
        except BlobNotKept as exc:
            refs.append(exc.ref)
            lost.append(exc.why)

    if output:
        one("output", output)
    for name in logs:  # one at a time: each may be large
        try:
            data = read_bytes(name, "log file")
        except LogbookError as exc:
            why = str(exc).removeprefix(f"log file {name} ")
            unreadable.append(f"log file {name} could not be read: {why}")
            continue
        if seen is not None:
            seen(Path(name).name, data)
        one(Path(name).name, data)
        del data
    return refs, unreadable, lost
