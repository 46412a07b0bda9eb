"""`verify` on a ledger database: the chain and signatures (chain.py), how the bytes are
stored, every derived table, and the checkpoints kept in the store.

Everything is read through the auditor's port (logbook.storage.base.EntryLog) inside one
read transaction (its ``snapshot``), so appends made while it
runs are simply not seen: they can never look like a derived row that disagrees with the
bytes. A table the file lost, or text that is not UTF-8, is a finding, never a crash. Nothing
here writes: auditors verify copies, on read-only media too.
"""

from __future__ import annotations

import base64
import binascii
import gc
import hashlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import orjson

from logbook.errors import StorageDamaged
from logbook.findings import Finding
from logbook.format.runfacts import items_digest, shared_ids
from logbook.format.suite import SuiteFold
from logbook.storage import index as derive
from logbook.storage.base import EntryLog, KeyRow, checkpoint_type_problems, sql_type
from logbook.tlog import merkle
from logbook.verify.chain import (
    ChainVerifier,
    ExpectedKeys,
    Result,
    compare_rows,
    strict_checks,
)
from logbook.verify.derived import (
    Digests,
    StreamedTable,
    check_tree,
    entry_of,
    source_entry_of,
)
from logbook.verify.logs import LogRefs
from logbook.verify.signatures import SignatureBatch, worth_a_pool
from logbook.verify.suites import check_suites


class ExpectedRows(ExpectedKeys):
    """Every derived row the entries' bytes make (a logbook.storage.index.DerivedSink), handed
    to the tables that compare them with what the store holds, a window at a time."""

    def __init__(self, index: StreamedTable, outcomes: StreamedTable,
                 sources: StreamedTable) -> None:
        super().__init__()
        self.index, self.outcomes, self.sources = index, outcomes, sources

    def insert_index(self, row: tuple[Any, ...]) -> None:
        self.index.add(row)

    def insert_outcome(self, row: tuple[Any, ...]) -> None:
        self.outcomes.add(row)

    def insert_sources(self, seq: int, keys: list[str]) -> None:
        for k in keys:
            self.sources.add(((seq, k),))


def stored_tables(store: EntryLog, digests: Digests, since: int = 0) -> list[StreamedTable]:
    """The index, outcomes and sources tables as stored from ``since`` on, each to be compared
    with the rows the entries' bytes make (ExpectedRows), a window at a time."""
    def rows(table: str) -> Callable[[], Iterable[tuple[Any, ...]]]:
        return lambda: store.derived_rows(table, since)

    return [StreamedTable("entry_index", rows("entry_index"), entry_of, digests),
            StreamedTable("outcomes", rows("outcomes"), entry_of, digests),
            StreamedTable("run_sources", lambda: (((seq, k),) for k, seq in
                                                  store.derived_rows("run_sources", since)),
                          source_entry_of, digests)]


def verify_store(store: EntryLog, trusted: str | None = None, strict: bool = False,
                 vouched: int = 0, keep: Keep | None = None,
                 on_progress: Callable[[int, int], None] | None = None,
                 logs: bool = True) -> Result:
    """Every check on a ledger database: chain, signatures, references, how each entry is
    stored, the derived tables and the stored checkpoints, from one read transaction.

    ``vouched`` (logbook.verify.integrity only): the signatures of entries below it, other than
    genesis and key entries, are left to a stored checkpoint of that size, which must then
    hold like every other (a finding otherwise).

    ``keep`` (logbook.verify.integrity only): the entries of these kinds, as they were just
    read and parsed, are collected into it, so that the caller computes from the very bytes
    this check read instead of reading and parsing them a second time.

    ``on_progress(done, total)`` is called as the entries are read (a command's progress bar,
    logbook.cli.progress). ``logs``: each run's kept logs are checked (logbook.verify.logs;
    the integrity check leaves them to `verify`)."""
    with store.snapshot(), _no_collector_pauses():
        damaged = store.schema_problems()
        if damaged:  # what reads the missing tables would only fail further on
            return _damaged(damaged)
        size = store.head()[0]
        batch = SignatureBatch() if worth_a_pool(size - vouched) else None
        try:
            return _verify(store, ChainVerifier(trusted, vouched, batch), strict, keep,
                           on_progress, size, LogRefs() if logs else None)
        finally:
            if batch is not None:
                batch.close()


def _damaged(problems: list[str]) -> Result:
    """The findings of a store whose tables are not the ones its migrations made: nothing
    else is read from it (`logbook reindex` rebuilds derived tables; a missing table of
    entries or records is lost)."""
    result = Result()
    result.checks += 1
    result.findings += [Finding("schema", "error", f"the store is damaged: {p}", None, [])
                        for p in problems]
    return result


@contextmanager
def _no_collector_pauses() -> Iterator[None]:
    """The scan parses every entry into objects that hold no reference cycles; the cyclic
    garbage collector would walk that growing heap again and again (a fifth of the scan's
    time on a large ledger). It pauses while the scan runs, and what the scan leaves alive
    (the entries kept for the caller) is moved out of its sight afterwards (`gc.freeze`):
    reference counting still frees all of it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


class Keep:
    """Entries of the named kinds, in ledger order, as (seq, digest, envelope, signature,
    raw bytes): filled by `verify_store` as it reads them. Runs share their item ids
    (``_share_ids``) when they are kept, or with ``share_ids`` (runs' facts worked out)."""

    def __init__(self, kinds: Iterable[str], share_ids: bool = False) -> None:
        self.kinds = frozenset(kinds)
        self.share_ids = share_ids or "run" in self.kinds
        self._ids: dict[Any, list[Any]] = {}
        self.entries: dict[str, list[tuple[int, str, dict[str, Any], str, bytes]]] = {
            k: [] for k in self.kinds}

    def add(self, seq: int, digest: str, env: dict[str, Any], signature: str,
            raw: bytes) -> None:
        kind = env.get("kind")
        if kind == "run" and self.share_ids:
            self._share_ids(env)
        found = self.entries.get(kind)  # type: ignore[arg-type]
        if found is not None:
            found.append((seq, digest, env, signature, raw))

    def _share_ids(self, env: dict[str, Any]) -> None:
        """Runs of one suite list the same item ids: equal lists become one list (a long one
        known by its digest, a short one by its ids), held once, and the list's digest is
        worked out once, for the facts of each run listing it (runfacts.shared_ids)."""
        body = env.get("body")
        outcomes = body.get("outcomes") if type(body) is dict else None
        ids = outcomes.get("id") if type(outcomes) is dict else None
        if type(ids) is list and ids:
            try:
                key: Any = tuple(ids) if len(ids) < DIGEST_KEPT_FROM else items_digest(ids)
            except (TypeError, orjson.JSONEncodeError):  # an id that is not hashable (a
                return  # tampered or odd entry)
            shared = outcomes["id"] = self._ids.setdefault(key, ids)  # type: ignore[index]
            if shared is ids:  # the first (an id past 64 bits has no digest: read whole)
                with suppress(TypeError, orjson.JSONEncodeError):
                    shared_ids(ids, key if type(key) is str else items_digest(ids))


DIGEST_KEPT_FROM = 1024  # ids from which Keep knows a list by its digest (by a tuple below)
WINDOW = 2000  # entries whose derived rows are held at a time (logbook.verify.derived)


def _verify(store: EntryLog, chain: ChainVerifier, strict: bool,
            keep: Keep | None = None, on_progress: Callable[[int, int], None] | None = None,
            size: int = 0, logs: LogRefs | None = None) -> Result:
    kept: list[tuple[int, bytes, Any]] = []
    digests = chain.digests
    tables = stored_tables(store, digests)
    rows = ExpectedRows(*tables)
    suites = SuiteFold()
    upto, pending = -1, 0
    feed, derive_rows = chain.feed, derive.derive
    for seq, stored_digest, raw, signature, stored_as in store.raw_entries():
        if pending >= WINDOW:  # every row of the entries read so far is made: compare them
            flush_window(tables, upto, chain, size, on_progress)
            pending = 0
        if type(seq) is int and seq > upto:
            upto = seq
        pending += 1
        if stored_as != "blob" or type(stored_digest) is not str or type(signature) is not str:
            stored_digest, signature = stored_as_found(chain, seq, stored_digest, raw,
                                                       signature, stored_as)
        env = feed(seq, stored_digest, raw, signature)
        if env is None:
            continue
        if strict:
            kept.append((seq, raw, env))
        if keep is not None:
            keep.add(seq, stored_digest, env, signature, raw)
        if logs is not None:
            logs.add(seq, stored_digest, env)
        derive_rows(rows, seq, chain.prev, env)  # chain.prev: the digest of these bytes
        suites.add(seq, chain.prev, env)
    for table in tables:
        table.flush(None)
    if on_progress is not None:
        on_progress(chain.expected_seq, max(size, chain.expected_seq))
    # What follows reads no entry: it runs while the pool checks the last signatures, and
    # its findings follow the chain's, in the same order as ever.
    result = chain.result
    found, result.findings = result.findings, []
    if strict:
        strict_checks(result, kept)
    result.digests, result.keys = digests, rows.rows()
    result.unchecked = chain.unchecked
    for table in tables:
        result.checks += 1
        result.findings += table.findings
    compare_rows(result, "signing_keys", [tuple(v) for v in rows.keys.values()],
                 store.signing_keys(), digests)
    if not found and not result.findings:  # a fold of a sound chain only: a damaged entry
        result.checks += 1  # is found as itself, not again as every plan state it feeds
        result.findings += check_suites(store, suites, digests)
    stored_checkpoints(result, store, digests)
    if logs is not None:
        checks, later = logs.check(store)
        result.checks, result.findings = result.checks + checks, result.findings + later
    later, result.findings = result.findings, found
    result = chain.finish()
    result.findings += later
    return result


def flush_window(tables: list[StreamedTable], upto: int, chain: ChainVerifier, size: int,
                 on_progress: Callable[[int, int], None] | None) -> None:
    """Compare every stored row of the entries read so far, then say how far the scan is."""
    for table in tables:
        table.flush(upto)
    if on_progress is not None:
        on_progress(chain.expected_seq, size)


def stored_as_found(chain: ChainVerifier, seq: Any, digest: Any, raw: bytes, signature: Any,
                    stored_as: str) -> tuple[str, str]:
    """An entry's row read as its text columns, with a finding for each column stored as
    another SQLite type than logbook writes (the bytes a blob, the digest and signature text)."""
    if stored_as != "blob":
        chain._find("storage", f"entry {seq} is stored as SQLite {stored_as}, not as the "
                    "blob of its canonical bytes: the file was altered", seq,
                    [hashlib.sha256(raw).hexdigest()])
    return (_as_text(chain, seq, "digest", digest, raw),
            _as_text(chain, seq, "signature", signature, raw))


def _as_text(chain: ChainVerifier, seq: int, column: str, value: Any, raw: bytes) -> str:
    """A text column of an entry as text: one stored as another SQLite type (an altered file)
    is a finding naming the column, and is then read as the text it holds, so the other checks
    still run and nothing downstream meets bytes."""
    if isinstance(value, str):
        return value
    chain._find("storage", f"entry {seq}: its {column} is stored as SQLite {sql_type(value)}, "
                "not text: the file was altered", seq, [hashlib.sha256(raw).hexdigest()])
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return "" if value is None else str(value)


def _blob(value: Any) -> Any:
    return bytes(value) if isinstance(value, bytes | bytearray | memoryview) else value


def keys_at(keys: list[KeyRow], size: int) -> list[bytes]:
    """The raw public keys valid when the ledger had ``size`` entries (from the entries'
    bytes: added by an entry before ``size`` and not revoked by one before it)."""
    out = []
    for _fp, _name, public, added, revoked in keys:
        if added < size and (revoked is None or revoked >= size):
            try:
                raw = base64.b64decode(public, validate=True)
            except (binascii.Error, ValueError):
                continue
            if len(raw) == 32:
                out.append(raw)
    return out


def check_stored_checkpoint(result: Result, row: tuple[Any, ...],
                            tree: dict[tuple[int, int], bytes]) -> bool:
    """Whether one checkpoint kept in the store holds: its note parses, names this ledger,
    is signed by a key valid at its size, and its size and root are the ledger's own
    (recomputed from the entries' digests, not read from the stored tree). A finding if not."""
    from logbook.errors import InputError
    from logbook.tlog.checkpoint import parse_checkpoint, verify_checkpoint_signature

    number, size, root, note = row[0], row[1], row[2], row[3]
    result.checks += 1

    def fail(why: str) -> bool:
        result.findings.append(Finding("checkpoint", "error",
                                       f"stored checkpoint {number}: {why}", None, []))
        return False

    try:
        cp, sigs = parse_checkpoint(note if isinstance(note, str) else "")
    except InputError as exc:
        return fail(f"its note is not a checkpoint ({exc})")
    if (size, root) != (cp.size, cp.root.hex()):
        return fail(f"its row (size {size!r}) does not match its signed note (size {cp.size})")
    if result.ledger is None or cp.origin != f"logbook/{result.ledger}":
        return fail(f"its origin {cp.origin!r} does not name this ledger")
    n = len(result.digests)
    if cp.size > n:
        return fail(f"it records {cp.size} entries but the ledger holds {n}: the ledger was "
                    "cut, or the checkpoint is not this ledger's")
    if cp.size == 0:
        ours = merkle.empty_root()
    else:
        ours = merkle.root_from_nodes(cp.size, lambda lv, ix: tree[(lv, ix)])
    if ours != cp.root:
        return fail(f"its root {cp.root.hex()[:16]}… is not the ledger's root at size "
                    f"{cp.size} ({ours.hex()[:16]}…): the ledger was rewritten")
    if not verify_checkpoint_signature((cp, sigs), keys_at(result.keys, cp.size)):
        return fail(f"it is not signed by a key valid at size {cp.size}")
    return True


def stored_checkpoints(result: Result, store: EntryLog, digests: Digests) -> None:
    """Compare the stored tree with the tree over the entries' digests, and check every
    checkpoint kept in the store against the latter (a missing table is a finding)."""
    rows = _checkpoint_rows(result, store)
    size = len(digests)
    wanted = nodes_of_root(size) if size else set()  # the ledger's own root: Result.root
    for row in rows:
        if type(row[1]) is int and 0 < row[1] <= len(digests):
            wanted |= nodes_of_root(row[1])
    result.checks += 1
    try:
        found, tree = check_tree(store.derived_rows("tree"), digests, wanted)
    except StorageDamaged:
        found = [Finding("derived", "error", "derived table tree is missing from the file "
                         "(`logbook reindex` rebuilds it)", None, [])]
        tree = check_tree((), digests, wanted)[1]  # the checkpoints are checked all the same
    result.findings += found
    if size:
        result.root = merkle.root_from_nodes(size, lambda lv, ix: tree[(lv, ix)])
    _check_checkpoints(result, rows, tree)


def _checkpoint_rows(result: Result, store: EntryLog) -> list[Any]:
    try:
        return list(store.checkpoints(checked=False))
    except StorageDamaged:
        result.findings.append(Finding("checkpoint", "error", "the table of checkpoints is "
                                       "missing from the file", None, []))
        return []


def check_checkpoint_rows(result: Result, store: EntryLog,
                          tree: dict[tuple[int, int], bytes]) -> None:
    """Every checkpoint kept in the store checked against ``tree`` (the nodes their roots
    are made of, looked up by (level, index); logbook.verify.resume)."""
    _check_checkpoints(result, _checkpoint_rows(result, store), tree)


def _check_checkpoints(result: Result, rows: list[Any],
                       tree: dict[tuple[int, int], bytes]) -> None:
    for row in rows:
        problems = checkpoint_type_problems(row)
        for problem in problems:
            result.findings.append(Finding("storage", "error", f"{problem}: the file was "
                                           "altered", None, []))
        read: tuple[Any, ...] = row
        if problems:  # read as the text it holds, so the note is still checked
            read = tuple(bytes(v).decode("utf-8", "replace")
                         if isinstance(v, bytes | bytearray | memoryview) else v for v in row)
        check_stored_checkpoint(result, read, tree)


def nodes_of_root(size: int) -> set[tuple[int, int]]:
    """The nodes (level, index) the root of a tree of ``size`` leaves is made of."""
    used: set[tuple[int, int]] = set()

    def note(level: int, idx: int) -> bytes:
        used.add((level, idx))
        return bytes(32)

    merkle.root_from_nodes(size, note)
    return used
