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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from logbook.errors import CheckFailed, EnvironmentProblem, InputError, StorageDamaged
from logbook.format import canonical
from logbook.ledger import suites
from logbook.ledger.entry import Entry, parse_stored
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


def copy_in(ledger: Ledger, entries: Iterable[StoredEntry]) -> int:
    """Append entries copied from another store as they are (bytes and signatures, which the
    caller verified), read one at a time, in one transaction: each must hash to its digest
    and follow the head, or none is kept. How many were copied."""
    store = ledger._store  # the ledger package's own store: this module is part of it
    copied = 0
    with store.transaction() as txn:
        size, prev = store.head()
        states = suites.Suites(store, txn)
        for e in entries:
            env = parse_stored(e)
            if (e.seq != size or canonical.digest_bytes(e.entry).hex() != e.digest
                    or type(env) is not dict
                    or env.get("prev") != (prev or canonical.ZERO_DIGEST)):
                raise StorageDamaged(f"entry {e.seq} does not follow entry {size - 1} of "
                                     f"{ledger.location}; nothing was copied")
            txn.insert_entry(e)
            derive.index_entry(txn, e.seq, e.digest, env)
            suites.advance(txn, states, e.seq, e.digest, env)
            size, prev, copied = size + 1, e.digest, copied + 1
    return copied


def _same_prefix(source: Ledger, target: Ledger, have: int) -> None:
    """InputError unless ``target``'s ``have`` entries are SRC's first ones, both read one
    batch at a time."""
    theirs = target.entry_log.entries(0, have)
    for mine in source.entry_log.entries(0, have):
        other = next(theirs, None)
        if other is None or (other.seq, other.digest) != (mine.seq, mine.digest):
            raise InputError(f"DEST {target.location} holds a different chain (entry "
                             f"{mine.seq} differs from SRC's); nothing was copied")
    next(theirs, None)  # the end of DEST's read: its batches are let go


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

    # SRC is read in one read transaction, entry by entry as it is copied, never whole; DEST
    # is opened (or made) only once SRC verifies
    with Ledger.open(src, write=False) as source, source.snapshot():
        checked = verify_store(source.entry_log, on_progress=half(False))
        if not checked.ok:
            raise CheckFailed(f"SRC {source.location} does not verify "
                              f"({len(checked.findings)} findings; `logbook --ledger SRC "
                              "verify` lists them); nothing was copied")
        with open_or_create(dest) as target:
            return _copy(source, target, checked.entries, half(True))


def _copy(source: Ledger, target: Ledger, size: int,
          on_progress: Callable[[int, int], None] | None) -> Cloned:
    """SRC's first ``size`` entries (verified), its checkpoints, audit records and logs into
    ``target``, which is then verified."""
    have = target.size()
    if have > size:
        raise InputError(f"DEST {target.location} holds {have} entries, more than SRC's "
                         f"{size}: it is not a copy of SRC; nothing was copied")
    _same_prefix(source, target, have)
    copied = copy_in(target, source.entry_log.entries(have, size))
    kept = {(c[1], c[2], c[3]) for c in target.entry_log.checkpoints()}
    recorded = set(target.entry_log.audits())
    with target.entry_log.transaction() as txn:  # both kept beside the chain, or neither
        for _id, at, root, note, created in source.entry_log.checkpoints():
            if (at, root, note) not in kept:
                txn.add_checkpoint(at, root, note, created)
        for audit in source.entry_log.audits():
            if audit not in recorded:
                txn.record_audit(*audit)
    blobs = copy_blobs(source, target, source.entry_log.entries(0, size))
    after = verify_store(target.entry_log, on_progress=on_progress)
    if not after.ok:
        raise CheckFailed(f"DEST {target.location} does not verify after the copy "
                          f"({len(after.findings)} findings)")
    return Cloned(source.location, target.location, copied, have, blobs, size, after.head)


def copy_blobs(source: Ledger, target: Ledger, entries: Iterable[StoredEntry]) -> int:
    """Copy the logs the runs name that ``target`` does not hold yet, each read with the bound
    its reference gives and hashed again (StorageDamaged when it changed since SRC was
    verified); how many were copied. A log SRC does not hold is one its run says was not
    kept (SRC verified): there is nothing to copy."""
    copied = 0
    for stored in entries:
        e = Entry.from_stored(stored)
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
