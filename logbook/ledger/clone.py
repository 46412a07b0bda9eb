"""Copying a ledger between stores (`logbook clone SRC DEST`, docs/team.md): a SQLite file into
a PostgreSQL team ledger when a team starts, or the team ledger into a file an auditor takes
away.

SRC is verified first (in one read transaction) and DEST after; DEST must hold nothing or a
prefix of SRC's chain, and then gets only what is new, bytes and signatures as they are, in
one transaction, with the records kept beside the entries that reading commands show: the
checkpoints and the audit records (`brief` shows the last), so every reading command answers
alike on both, and the logs runs keep (blobs: files beside a SQLite file, rows of a server's
table), each hashed again as it is copied.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from logbook.errors import CheckFailed, EnvironmentProblem, InputError, StorageDamaged
from logbook.format import canonical
from logbook.ledger import suites
from logbook.ledger.entry import Entry
from logbook.ledger.service import DB_NAME, LEDGER_DIR, Ledger, find_db, is_url
from logbook.storage import index as derive
from logbook.storage import open_store
from logbook.storage.base import MAX_BLOB_BYTES, StoredEntry, is_blob_name
from logbook.verify.stored import verify_store


@dataclass(frozen=True)
class Cloned:
    src: str
    dest: str
    copied: int
    had: int
    blobs: int
    entries: int
    head: str | None


def open_or_create(where: Path | str) -> Ledger:
    """The ledger at ``where`` open for writing, or a new empty store there: a URL, a folder
    (its .logbook/ledger.db) or a .db file."""
    if isinstance(where, str) and is_url(where):
        try:
            return Ledger(open_store(where, create=True), where)
        except InputError:  # it holds a ledger already
            return Ledger(open_store(where, write=True), where)
    try:
        db = find_db(Path(where))
    except EnvironmentProblem:
        db = Path(where) if str(where).endswith(".db") else Path(where) / LEDGER_DIR / DB_NAME
        return Ledger(open_store(db, create=True), db)
    return Ledger(open_store(db, write=True), db)


def copy_in(ledger: Ledger, entries: list[Entry]) -> None:
    """Append entries copied from another store as they are (bytes and signatures, which the
    caller verified), in one transaction: each must hash to its digest and follow the head, or
    none is kept."""
    store = ledger._store  # the ledger package's own store: this module is part of it
    with store.transaction() as txn:
        size, prev = store.head()
        states = suites.Suites(store)
        for e in entries:
            if (e.seq != size or canonical.digest_bytes(e.raw).hex() != e.digest
                    or e.envelope.get("prev") != (prev or canonical.ZERO_DIGEST)):
                raise StorageDamaged(f"entry {e.seq} does not follow entry {size - 1} of "
                                     f"{ledger.location}; nothing was copied")
            txn.insert_entry(StoredEntry(e.seq, e.digest, e.raw, e.signature))
            env = orjson.loads(e.raw)
            derive.index_entry(txn, e.seq, e.digest, env)
            suites.advance(txn, states, e.seq, e.digest, env)
            size, prev = size + 1, e.digest


def clone(src: str, dest: str,
          on_progress: Callable[[int, int], None] | None = None) -> Cloned:
    """Copy SRC into DEST (see the module's docstring); CheckFailed (exit 1) when either does
    not verify, InputError (exit 2) when DEST holds another or a longer chain.
    ``on_progress(done, total)``: SRC's check is the first half of the work, DEST's the second."""

    def half(second: bool) -> Callable[[int, int], None] | None:
        if on_progress is None:
            return None
        report = on_progress
        return lambda done, total: report(done + (total if second else 0), 2 * total)

    with Ledger.open(src, write=False) as source, source.snapshot():
        checked = verify_store(source.entry_log, on_progress=half(False))
        if not checked.ok:
            raise CheckFailed(f"SRC {source.location} does not verify "
                              f"({len(checked.findings)} findings; `logbook --ledger SRC "
                              "verify` lists them); nothing was copied")
        entries = [e for e in source.entries() if e.seq < checked.entries]
        checkpoints = source.entry_log.checkpoints()
        audits = source._store.audits()  # the ledger package's own store, as in copy_in
        src_location = source.location
    with open_or_create(dest) as target:
        have = target.size()
        if have > len(entries):
            raise InputError(f"DEST {target.location} holds {have} entries, more than SRC's "
                             f"{len(entries)}: it is not a copy of SRC; nothing was copied")
        for e in entries[:have]:
            mine = target.entry_at(e.seq)
            if mine is None or mine.digest != e.digest:
                raise InputError(f"DEST {target.location} holds a different chain (entry "
                                 f"{e.seq} differs from SRC's); nothing was copied")
        copy_in(target, entries[have:])
        kept = {(c[1], c[2], c[3]) for c in target.entry_log.checkpoints()}
        for _id, size, root, note, created in checkpoints:
            if (size, root, note) not in kept:
                target.entry_log.add_checkpoint(size, root, note, created)
        copied = set(target._store.audits())
        for size, at, findings in audits:
            if (size, at, findings) not in copied:
                target.entry_log.record_audit(size, at, findings)
        with Ledger.open(src, write=False) as source:
            blobs = copy_blobs(source, target, entries)
        after = verify_store(target.entry_log, on_progress=half(True))
        if not after.ok:
            raise CheckFailed(f"DEST {target.location} does not verify after the copy "
                              f"({len(after.findings)} findings)")
        return Cloned(src_location, target.location, len(entries) - have, have, blobs,
                      len(entries), after.head)


def copy_blobs(source: Ledger, target: Ledger, entries: list[Entry]) -> int:
    """Copy the logs the runs name that ``target`` does not hold yet, each read with the bound
    its reference gives and hashed again (StorageDamaged when it changed since SRC was
    verified); how many were copied. A log SRC does not hold is one its run says was not
    kept (SRC verified): there is nothing to copy."""
    copied = 0
    for e in entries:
        logs = e.body.get("logs") if e.kind == "run" else None
        refs = list(logs) if isinstance(logs, list) else []
        traces = e.body.get("traces") if e.kind == "run" else None
        refs += [{**traces, "name": "item traces"}] if isinstance(traces, dict) else []
        evidence = e.body.get("evidence") if e.kind == "check" else None
        refs += [evidence] if isinstance(evidence, dict) else []
        for ref in refs:
            digest = str(ref.get("sha256", "")).removeprefix("sha256:")
            size = ref.get("size")
            if not is_blob_name(digest) or type(size) is not int \
                    or target.entry_log.blob(digest, 0) is not None:
                continue
            data = source.entry_log.blob(digest, min(size, MAX_BLOB_BYTES) + 1)
            if data is None:
                continue
            if hashlib.sha256(data).hexdigest() != digest:
                raise StorageDamaged(f"the log {ref.get('name')!r} of run {e.seq} changed in "
                                     f"{source.location} while it was copied; run the clone "
                                     "again")
            target.entry_log.keep_blob(digest, data)
            copied += 1
    return copied
