"""What the rest of logbook needs of a ledger store, whatever holds it (DESIGN §3, §5): one
protocol, ``EntryLog``, and the append transaction it hands out (``Txn``).

The store keeps each entry's canonical bytes and signature (the source of truth) and the rows
derived from those bytes (logbook.storage.index). The embedded default is
logbook.storage.sqlite; ``logbook.storage.open_store`` picks a backend. The reads an analysis
makes after a check come from this machine's checked copy of the ledger
(logbook.storage.sqlite.read_model, through logbook.verify.checked_reads), not from here.

Stored values are described by SQLite's storage classes (blob, text, integer, real, null):
that is what an altered file can hold in place of the right one, and what `verify` names.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from logbook.errors import EnvironmentProblem, StorageDamaged
from logbook.storage.index import TreeSink

KeyRow = tuple[str, str, str, int, int | None]  # fingerprint, name, public, added, revoked
CheckpointRow = tuple[int, int, str, str, str]  # id, size, root, note, created
AuditRow = tuple[int, str, str]  # size, at, findings (JSON)
RawEntry = tuple[int, str, bytes, str, str]  # seq, digest, bytes, signature, storage class
PlanShape = tuple[int, str, str]  # seq, digest, JSON of [runs_per_arm, arms]
RunCount = tuple[str, str, str, int, int]  # plan, arm, status, count, last seq
# seq, digest, plan, arm, status, session, facts (JSON text, logbook.format.runfacts)
RunRow = tuple[int, str, str | None, str | None, str | None, str | None, str | None]

# The most bytes one kept log (a blob) may hold: the default input bound (LOGBOOK_MAX_INPUT_BYTES,
# 256 MiB), which is also what `logbook run` keeps of a command's output.
MAX_BLOB_BYTES = 256 * 1024 * 1024
_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")


def check_blob(digest: str, data: bytes) -> None:
    """ValueError (a bug: the caller hashes) unless ``data`` hashes to ``digest`` (bare hex);
    EnvironmentProblem when it is larger than a store keeps."""
    if not _HEX_DIGEST.fullmatch(digest) or hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"blob {digest[:16]}… does not hash to its name")
    if len(data) > MAX_BLOB_BYTES:
        raise EnvironmentProblem(f"it is {len(data)} bytes, more than the {MAX_BLOB_BYTES} "
                                 "(256 MiB) a ledger keeps of one log")


def is_blob_name(digest: str) -> bool:
    """Whether ``digest`` can name a blob (64 lowercase hex digits)."""
    return _HEX_DIGEST.fullmatch(digest) is not None


@dataclass(frozen=True)
class StoredEntry:
    seq: int
    digest: str
    entry: bytes
    signature: str


_SQL_TYPE = {bytes: "blob", str: "text", int: "integer", float: "real", type(None): "null"}


def sql_type(value: object) -> str:
    """The storage class a value read back had."""
    return _SQL_TYPE.get(type(value), type(value).__name__)


_CHECKPOINT_COLUMNS: tuple[tuple[str, type], ...] = (
    ("id", int), ("size", int), ("root", str), ("note", str), ("created", str))


def checkpoint_type_problems(row: tuple[Any, ...]) -> list[str]:
    """What is stored with the wrong storage class in one row of the checkpoints kept."""
    return [f"the {column} of stored checkpoint {row[0]} is stored as SQLite "
            f"{sql_type(value)}, not {sql_type(want())}"
            for (column, want), value in zip(_CHECKPOINT_COLUMNS, row, strict=True)
            if not isinstance(value, want)]


# A plan's suite state as stored: (since, first_seq, first_hash, n_known, items_key)
SuiteRow = tuple[int, int | None, str | None, int, int]


def suite_row(row: tuple[Any, ...], plan: str) -> SuiteRow:
    """A stored state row, its types checked (an altered file may hold anything): the door
    compares its numbers."""
    since, first_seq, first_hash, n_known, items_key = row
    if (type(since) is int and type(n_known) is int and type(items_key) is int
            and (first_seq is None or type(first_seq) is int)
            and (first_hash is None or type(first_hash) is str)):
        return since, first_seq, first_hash, n_known, items_key
    raise StorageDamaged(f"the suite state of plan {plan[:12]} is stored with the wrong types "
                         "(`logbook verify` lists what is wrong; `logbook reindex` rebuilds it)")


class Txn(TreeSink, Protocol):
    """The writes of one append transaction (``EntryLog.transaction``): all of them are kept,
    or none. Besides the derived rows and tree nodes every entry makes (TreeSink): the entry
    itself, a once-key, and a plan's suite state. And what the suites' door reads under the
    transaction's lock, which only an append asks (logbook.ledger.suites): a plan's suite state
    and which ids its item set holds, as the transaction's own writes have left them."""

    def suite_state(self, plan: str) -> SuiteRow | None:
        """The plan's latest suite state row, or None when none is kept (a ledger made before
        the rows were: the door then folds the plan's entries once)."""
        ...

    def known_items(self, plan: str, items_key: int, ids: list[str]) -> set[str]:
        """Those of ``ids`` in the plan's item set ``items_key``."""
        ...

    def insert_entry(self, stored: StoredEntry) -> None: ...

    def remember_once(self, key: str, digest: str) -> None: ...

    def insert_suite(self, plan: str, seq: int, row: SuiteRow) -> None:
        """A plan's suite state as entry ``seq`` left it (logbook.format.suite)."""
        ...

    def insert_suite_items(self, plan: str, items_key: int, items: Iterable[str]) -> None: ...

    # beside the chain, under the same lock (not entries, not derived)
    def add_checkpoint(self, size: int, root: str, note: str, created: str) -> None:
        """A signed checkpoint note of the first ``size`` entries (``EntryLog.checkpoints``)."""
        ...

    def record_audit(self, size: int, at: str, findings: str) -> None:
        """An audit's findings (JSON text) over the first ``size`` entries, for `brief`."""
        ...


class EntryLog(Protocol):
    """One ledger store, whatever holds it (logbook.storage.sqlite, logbook.storage.postgres),
    open for writing (migrated) or read-only (never migrated): the only storage protocol.

    What it offers, in the order a reader meets it: the head and one read transaction; the
    append transaction (``Txn``, with the suite rows the door reads under its lock) and the
    lookups admission makes, some of them before the lock too (the references a draft names,
    a run's source, a --once key); entries by digest, range, seq and what the index says of
    them; the stored rows a check compares with the entries' bytes; the tree; checkpoints,
    audits and kept logs. The analysis reads none of
    it directly: it reads the read model a check builds (logbook.verify.checked_reads), which
    takes from here only entries' bytes, held to the digests it checked."""

    @property
    def path(self) -> Path:
        """Where the store is, for messages."""
        ...

    def close(self) -> None: ...

    # -- the head, a read transaction, the append transaction --------------------------------
    def head(self) -> tuple[int, str | None]:
        """(size, digest of the last entry or None), as stored."""
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """One read transaction: every read inside sees the ledger as at the first one."""
        ...

    def transaction(self, plans: Mapping[str, list[str]] | None = None,
                    signers: Sequence[str] = ()) -> AbstractContextManager[Txn]:
        """One append transaction: appenders serialise here and never fork the chain.
        ``plans`` (with their runs' item ids) and ``signers``: what its drafts will ask, which
        a store whose reads cost a round trip asks with its lock."""
        ...

    # -- what admission looks up ---------------------------------------------------------------
    def kind_of(self, digest: str) -> tuple[int, str] | None:
        """(seq, kind) of the entry with this digest, or None."""
        ...

    def plan_digest_by_slug(self, slug: str) -> str | None: ...

    def retractions_of(self, digests: list[str]) -> dict[str, list[str]]:
        """target digest -> digests of the retractions of it, in ledger order."""
        ...

    def runs_with_source(self, keys: list[str]) -> list[tuple[int, str, bytes]]:
        """(seq, digest, bytes) of the runs recorded under any of the source ``keys``."""
        ...

    def once_digest(self, key: str) -> str | None: ...

    def signing_keys(self) -> list[KeyRow]:
        """Every key the ledger's key entries added, in the order they were added, with the
        seq that revoked it (None while it is valid)."""
        ...

    # -- entries -----------------------------------------------------------------------------
    def entry_by_digest(self, digest: str) -> StoredEntry | None: ...

    def digests_with_prefix(self, prefix: str, limit: int = 2) -> list[str]: ...

    def entries(self, start: int = 0, stop: int | None = None) -> Iterator[StoredEntry]: ...

    def entries_at(self, seqs: list[int]) -> list[StoredEntry]:
        """The entries at ``seqs`` (those that exist), in seq order."""
        ...

    def entries_where(self, kind: str | None = None, plan: str | None = None,
                      last: int | None = None,
                      targets: list[str] | None = None) -> list[StoredEntry]:
        """The entries the index finds, in seq order: of ``kind``; about ``plan`` (the plan
        itself included); whose indexed ``target`` is one of ``targets`` (a run's target is the
        plan it was refused by, an admission's the run it admits, a retraction's what it
        retracts; with ``targets``, ``kind`` is required and ``plan`` and ``last`` are not
        taken); the last ``last`` of them."""
        ...

    # -- what a check compares with the entries' bytes (logbook.verify) ----------------------
    def raw_entries(self, since: int = 0) -> Iterator[RawEntry]:
        """Every stored entry from ``since`` on in seq order, with the storage class its bytes
        were kept as."""
        ...

    def derived_rows(self, table: str, since: int = 0) -> Iterator[tuple[Any, ...]]:
        """The rows of one derived table (entry_index, outcomes, run_sources, tree; each
        plan's latest suite state, plan_suites, and the item sets, plan_items) from ``since``
        on (logbook.storage.sqlite.rows says which rows, in which order)."""
        ...

    def schema_problems(self) -> list[str]:
        """One sentence per table or column the store's migrations made that is missing or
        of another type (logbook.storage.schema_check)."""
        ...

    def tree_node(self, level: int, idx: int) -> bytes:
        """A complete subtree's hash (level 0: the leaf hash of entry ``idx``); LookupError
        (StorageDamaged) when it is missing or malformed."""
        ...

    # -- beside the chain: checkpoints, audits, logs, upkeep ----------------------------------
    def checkpoints(self, checked: bool = True) -> list[CheckpointRow]:
        """The checkpoints kept, oldest first; ``checked=False`` returns rows whose columns
        may hold the wrong storage class (``checkpoint_type_problems`` names them)."""
        ...

    def audits(self, last: int | None = None) -> list[AuditRow]:
        """The audit records kept (`brief` shows the last), oldest first; the last ``last``
        of them."""
        ...

    def blob(self, digest: str, limit: int) -> bytes | None:
        """At most the first ``limit`` bytes of the log kept under ``digest`` (bare sha256
        hex), or None when none is kept: a blob is never read whole without a bound."""
        ...

    def keep_blob(self, digest: str, data: bytes) -> None:
        """Keep a log's bytes under their sha256 (bare hex; ``check_blob`` holds them to it),
        once: keeping the same bytes again changes nothing. EnvironmentProblem (one
        sentence) when they cannot be kept."""
        ...

    def rebuild_derived(self, rows: Callable[[Txn], None]) -> dict[str, int]:
        """Drop every derived row and let ``rows`` write them again, in one transaction;
        the rows of each table afterwards."""
        ...
