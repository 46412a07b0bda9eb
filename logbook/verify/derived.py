"""The derived tables compared with the entries' bytes as the chain is read, in bounded memory.

A store's derived tables (the entry index, the outcomes, the run sources, the Merkle tree) are
conveniences that anyone with the file can edit; `verify` and the analysis check recompute each
row from the entries' bytes and compare. Rows of the first three are keyed by the entry they
come from, and both sides come in ledger order, so they are compared a window of entries at a
time (`StreamedTable`): only the window's rows are held, whatever the ledger's size. The tree is
compared level by level (`check_tree`), holding two levels of hashes as packed bytes. What
either finds is what a whole-table comparison finds: a row that differs from what its entry's
bytes say, a row not derived from any entry, a row that is missing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from logbook.errors import StorageDamaged
from logbook.findings import Finding

_END = object()
HASH = 32


class Digests(Sequence[bytes]):
    """The 32-byte digests of the entries in order (the Merkle leaves), packed in one buffer:
    32 bytes an entry instead of a Python object each."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def append(self, digest: bytes) -> None:
        self._buf += digest

    def __len__(self) -> int:
        return len(self._buf) // HASH

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("digest index out of range")
        return bytes(self._buf[i * HASH:(i + 1) * HASH])

    def __iter__(self) -> Iterator[bytes]:
        buf = self._buf
        return (bytes(buf[i:i + HASH]) for i in range(0, len(buf), HASH))


def derived_finding(table: str, key: Any, digests: Sequence[bytes], row: Any,
                    why: str) -> Finding:
    """A finding about a derived row, naming the entries the row is derived from."""
    if table == "tree" and isinstance(key, tuple):
        level, idx = key
        first, last = idx << level, min((idx + 1) << level, len(digests)) - 1
        seq: int | None = first if first < len(digests) else None
        covered = range(first, min(last + 1, first + 4)) if seq is not None else range(0)
        entries = [digests[i].hex() for i in covered]
        where = f"tree node {key!r} (over entries {first}–{last})"
    else:
        if table == "signing_keys":  # (fingerprint, name, public, added_seq, revoked_seq)
            seq = row[3] if isinstance(row[3], int) else None
        elif table == "run_sources":  # ((seq, key),)
            seq = key[0] if isinstance(key, tuple) and isinstance(key[0], int) else None
        else:
            seq = key if isinstance(key, int) else None
        entries = [digests[seq].hex()] if seq is not None and 0 <= seq < len(digests) else []
        where = f"row {key!r}"
    return Finding("derived", "error", f"derived table {table}, {where}: {why}", seq, entries)


def entry_of(key: Any) -> int | None:
    """The seq a row of the index or the outcomes is keyed by (None: not an entry's seq)."""
    return key if type(key) is int else None


def source_entry_of(key: Any) -> int | None:
    """The seq a run_sources row ((seq, key),) is keyed by."""
    return key[0] if type(key) is tuple and len(key) == 2 and type(key[0]) is int else None


class StreamedTable:
    """One derived table compared a window at a time: `add` the rows the entries make, `flush`
    after each window of entries (and once with None at the end), `findings` afterwards."""

    def __init__(self, table: str, stored: Callable[[], Iterable[tuple[Any, ...]]],
                 entry: Callable[[Any], int | None], digests: Sequence[bytes]) -> None:
        self.table, self._open, self._entry, self._digests = table, stored, entry, digests
        self._rows: Iterator[tuple[Any, ...]] | None = None
        self._next: Any = None  # the stored row read but not yet compared
        self._expected: dict[Any, tuple[Any, ...]] = {}
        self.findings: list[Finding] = []
        self.missing_table = False

    def add(self, row: tuple[Any, ...]) -> None:
        self._expected[row[0]] = row

    def _peek(self) -> Any:
        if self._next is None:
            if self._rows is None:
                self._rows = iter(self._open())
            row = next(self._rows, None)
            self._next = _END if row is None else tuple(row)
        return self._next

    def flush(self, upto: int | None) -> None:
        """Compare every stored row of the entries up to seq ``upto`` (all: None) with what
        those entries make; rows the store lacks are missing."""
        if self.missing_table:
            self._expected.clear()
            return
        seen: set[Any] = set()
        try:
            while (row := self._peek()) is not _END:
                key = row[0]
                at = self._entry(key)
                if at is not None and upto is not None and at > upto:
                    break
                self._next = None
                seen.add(key)
                want = self._expected.get(key) if at is not None else None
                if want != row:
                    self.findings.append(derived_finding(
                        self.table, key, self._digests, row if want is None else want,
                        "a row not derived from any entry" if want is None else
                        "it differs from what the entry's bytes say"))
        except StorageDamaged:
            self.missing_table = True
            self.findings.append(Finding(
                "derived", "error", f"derived table {self.table} is missing from the file "
                "(`logbook reindex` rebuilds it)", None, []))
            self._expected.clear()
            return
        for key, want in self._expected.items():
            if key not in seen:
                self.findings.append(derived_finding(self.table, key, self._digests, want,
                                                     "the row is missing"))
        self._expected.clear()


def _level_hashes(prev: bytes | bytearray, prefix: bytes) -> bytes:
    """The next level up: SHA-256(prefix || left || right) of each pair of ``prev``."""
    sha = hashlib.sha256
    return b"".join(sha(prefix + prev[i:i + 2 * HASH]).digest()
                    for i in range(0, len(prev) - 2 * HASH + 1, 2 * HASH))


def check_tree(stored: Iterable[tuple[int, int, Any]], digests: Digests,
               wanted: set[tuple[int, int]]) -> tuple[list[Finding], dict[tuple[int, int], bytes]]:
    """Compare the stored tree (interior nodes, in level and index order) with the tree over
    ``digests``, a level at a time; findings, and the recomputed nodes in ``wanted`` (what the
    stored checkpoints' roots are made of; level 0 nodes are leaf hashes)."""
    findings: list[Finding] = []
    kept: dict[tuple[int, int], bytes] = {}
    level_buf = _level_hashes_leaves(digests)
    level, seen = 0, bytearray(0)

    def keep(lv: int, buf: bytes) -> None:
        for wl, wi in wanted:
            if wl == lv and (wi + 1) * HASH <= len(buf):
                kept[(wl, wi)] = buf[wi * HASH:(wi + 1) * HASH]

    def missing_of_level() -> None:
        for i in range(len(seen)):
            if not seen[i]:
                findings.append(derived_finding(
                    "tree", (level, i), digests, level_buf[i * HASH:(i + 1) * HASH],
                    "the row is missing"))

    def up() -> None:
        nonlocal level_buf, level, seen
        if level > 0:
            missing_of_level()
        level_buf = _level_hashes(level_buf, b"\x01")
        level += 1
        seen = bytearray(len(level_buf) // HASH)
        keep(level, level_buf)

    keep(0, level_buf)
    for row in stored:
        try:
            lv, ix, h = row
        except (TypeError, ValueError):
            continue
        key = (lv, ix)
        if type(lv) is not int or type(ix) is not int or lv < 1:
            findings.append(derived_finding("tree", key, digests, row,
                                            "a row not derived from any entry"))
            continue
        while level < lv and len(level_buf) >= 2 * HASH:
            up()
        count = len(level_buf) // HASH
        if lv != level or not 0 <= ix < count:
            findings.append(derived_finding("tree", key, digests, row,
                                            "a row not derived from any entry"))
            continue
        want = level_buf[ix * HASH:(ix + 1) * HASH]
        seen[ix] = 1  # a node stored twice is compared twice, like any other row
        got = bytes(h) if isinstance(h, bytes | bytearray | memoryview) else h
        if got != want:
            findings.append(derived_finding("tree", key, digests, want,
                                            "it differs from what the entry's bytes say"))
    while len(level_buf) >= 2 * HASH:  # the levels above the last stored row
        up()
    if level > 0:
        missing_of_level()
    return findings, kept


def _level_hashes_leaves(digests: Digests) -> bytes:
    sha = hashlib.sha256
    return b"".join(sha(b"\x00" + d).digest() for d in digests)
