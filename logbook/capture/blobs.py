"""Content-addressed log files beside the ledger (`.logbook/blobs/<sha256 hex>`).

A run records each log's name, sha256, size and a short excerpt; the full file is kept here so an
auditor can check it against the hash. Text is scrubbed of secrets before it is hashed and kept:
what is stored is exactly what the hash names.

A ledger on a PostgreSQL server has no folder beside it (``ledger_db`` is None): its runs keep
each log's reference (name, hash, size, excerpt) and say that the file itself was not kept
(docs/team.md), rather than leave it in a folder of the machine that ran the command.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

EXCERPT_LINES = 20
EXCERPT_CHARS = 2000


def blob_dir(ledger_db: Path) -> Path:
    return ledger_db.parent / "blobs"


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


def keep(ledger_db: Path | None, name: str, data: bytes, env: Mapping[str, str] | None = None,
         values: Iterable[str] = ()) -> dict[str, Any]:
    """Store ``data`` (scrubbed when it is text) and return the run's log reference.

    ``values`` are secrets known from elsewhere (the command line) scrubbed wherever they
    appear. BlobNotKept when the blob cannot be written: the reference comes with it."""
    from logbook.capture.redact import scrub_text

    # bytes that are not UTF-8 survive as surrogates, so a secret in a Latin-1 log is scrubbed too
    text = data.decode("utf-8", "surrogateescape")
    text, _count = scrub_text(text, env=os.environ if env is None else env, values=values)
    data = text.encode("utf-8", "surrogateescape")
    digest = hashlib.sha256(data).hexdigest()
    ref: dict[str, Any] = {"name": name, "sha256": f"sha256:{digest}", "size": len(data)}
    if text.strip():
        ref["excerpt"] = excerpt(text.encode("utf-8", "surrogateescape").decode("utf-8",
                                                                               "backslashreplace"))
    if ledger_db is None:
        raise BlobNotKept(ref, f"log {name!r} ({len(data)} bytes, sha256:{digest[:16]}…) was "
                               "not kept: a ledger on a PostgreSQL server keeps no log files "
                               "yet; keep the file yourself (its hash is recorded)")
    folder = blob_dir(ledger_db)
    path = folder / digest
    tmp = folder / f".{digest}.{os.getpid()}.tmp"
    try:
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)  # 0755 or tighter (umask)
        if not path.exists():
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
        raise BlobNotKept(ref, f"log {name!r} ({len(data)} bytes, sha256:{digest[:16]}…) could "
                               f"not be kept in {folder}: {exc.strerror or exc}") from None
    return ref


def check(ledger_db: Path, ref: Mapping[str, Any]) -> str | None:
    """None when the kept blob matches its reference; otherwise what is wrong."""
    digest = str(ref.get("sha256", "")).removeprefix("sha256:")
    path = blob_dir(ledger_db) / digest
    if not path.is_file():
        return f"log {ref.get('name')!r}: blob {digest[:16]}… is missing"
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != digest:
        return f"log {ref.get('name')!r}: blob {digest[:16]}… does not match its hash"
    return None


def keep_logs(ledger_db: Path | None, output: bytes, logs: list[str],
              taken: list[str]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Log references for a command's output and each ``--log`` file (read with logbook's
    bound), what was unreadable, and which blobs could not be kept (their references are
    kept all the same). ``ledger_db`` is None for a ledger on a server (see the module)."""
    from logbook.errors import LogbookError
    from logbook.files import read_bytes

    refs: list[dict[str, Any]] = []
    unreadable: list[str] = []
    lost: list[str] = []

    def one(label: str, data: bytes) -> None:
        try:
            refs.append(keep(ledger_db, label, data, values=taken))
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
        one(Path(name).name, data)
        del data
    return refs, unreadable, lost
