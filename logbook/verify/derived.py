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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice, repeat
from operator import itemgetter
from typing import Any

from logbook.errors import StorageDamaged
from logbook.findings import Finding
from logbook.format.kinds import KINDS

_END = object()
HASH = 32
TREE_BLOCK = 4096  # tree nodes compared at a time (their rows are held meanwhile)


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
        if not -n <= i < n:
            raise IndexError("digest index out of range")
        i %= n
        return bytes(self._buf[i * HASH:(i + 1) * HASH])

    def __iter__(self) -> Iterator[bytes]:
        buf = self._buf
        return (bytes(buf[i:i + HASH]) for i in range(0, len(buf), HASH))


class KindIndex(Mapping[bytes, str]):
    """The kind of each entry by its 32-byte digest (what a reference may name), packed: the
    digests are spread over BUCKETS byte strings by their hash (Python's, keyed afresh in each
    process, so entries made to collide cannot pile into one), each record the 32 bytes and a
    byte for the kind, found by a byte search: 33 bytes an entry instead of a hundred in a
    dict. The chain holds a dict (the fastest to fill) until it has `pack_at` entries."""

    pack_at = 250_000

    def __init__(self, kinds: Mapping[bytes, str] | None = None) -> None:
        self._buckets: list[bytearray | None] = [None] * BUCKETS
        self._odd: dict[bytes, str] = {}  # kinds outside the registry (a tampered entry)
        self._len = 0
        for digest, kind in (kinds or {}).items():
            self[digest] = kind

    def __setitem__(self, digest: bytes, kind: str) -> None:
        if self.get(digest) is not None:  # the same bytes again: the same kind
            return
        code = _KIND_CODE.get(kind, _ODD)
        if code == _ODD:
            self._odd[digest] = kind
        i = hash(digest) & (BUCKETS - 1)
        if (bucket := self._buckets[i]) is None:
            bucket = self._buckets[i] = bytearray()
        bucket += digest
        bucket.append(code)
        self._len += 1

    def get(self, digest: bytes, default: Any = None) -> Any:
        if type(digest) is not bytes or len(digest) != HASH:
            return default
        bucket = self._buckets[hash(digest) & (BUCKETS - 1)]
        at = -1 if bucket is None else bucket.find(digest)
        while at != -1 and at % (HASH + 1):  # a match across two records: look on
            at = bucket.find(digest, at + 1)  # type: ignore[union-attr]
        if at == -1:
            return default
        code = bucket[at + HASH]  # type: ignore[index]
        return self._odd[digest] if code == _ODD else _KIND_NAME[code]

    def __getitem__(self, digest: bytes) -> str:
        if (kind := self.get(digest, _END)) is _END:
            raise KeyError(digest)
        return kind  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return self._len

    def __reduce__(self) -> tuple[Any, ...]:  # rebuilt by digest: the bucket hash is per process
        return KindIndex, (dict(self.items()),)

    def __iter__(self) -> Iterator[bytes]:
        for bucket in self._buckets:
            for at in range(0, len(bucket or b""), HASH + 1):
                yield bytes(bucket[at:at + HASH])  # type: ignore[index]


BUCKETS = 1 << 16
_KIND_NAME = sorted(KINDS)  # a kind's code: its place here (_ODD: not in the registry)
_KIND_CODE, _ODD = {k: i for i, k in enumerate(_KIND_NAME)}, 255


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
        try:
            if not self._same(upto):
                self._compare(upto)
        except StorageDamaged:
            self.missing_table = True
            self.findings.append(Finding(
                "derived", "error", f"derived table {self.table} is missing from the file "
                "(`logbook reindex` rebuilds it)", None, []))
        self._expected.clear()

    def _same(self, upto: int | None) -> bool:
        """The common case at C speed: the window's stored rows are exactly the rows its
        entries make, in key order, and the next stored row is past the window. When not,
        what it read is handed back to `_compare`, which finds what it always found."""
        want = list(self._expected.values())
        if not want:
            return False
        try:
            want.sort(key=_first)
            ats: list[Any] = list(map(_first, want))
            if self._entry is entry_of:  # keyed by seq: its keys are its seqs, seen at C speed
                if set(map(type, ats)) != {int}:
                    return False
            else:
                ats = list(map(self._entry, ats))
            if None in ats or (upto is not None and max(ats) > upto):
                return False
        except TypeError:
            return False
        if self._rows is None:
            self._rows = iter(self._open())
        if self._next is _END:
            return False
        got: list[Any] = [] if self._next is None else [self._next]
        self._next = None
        try:
            got += islice(self._rows, len(want) - len(got))
            after = next(self._rows, None)
        except StorageDamaged as exc:  # `_compare` meets it after the rows read before it
            self._rows = chain(got, _raising(exc))
            return False
        got = list(map(tuple, got))
        at = self._entry(after[0]) if after is not None else None
        if got == want and (after is None or (upto is not None and at is not None
                                              and at > upto)):
            self._next = _END if after is None else tuple(after)
            return True
        self._rows = chain(got, () if after is None else (after,), self._rows)
        return False

    def _compare(self, upto: int | None) -> None:
        seen: set[Any] = set()
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
        for key, want in self._expected.items():
            if key not in seen:
                self.findings.append(derived_finding(self.table, key, self._digests, want,
                                                     "the row is missing"))


_first = itemgetter(0)


def _raising(exc: Exception) -> Iterator[Any]:
    raise exc
    yield  # pragma: no cover - makes this a generator


def _level_hashes(prev: bytes | bytearray, prefix: bytes) -> bytearray:
    """The next level up: SHA-256(prefix || left || right) of each pair of ``prev``, written
    into one buffer (no list of a million hashes on the way)."""
    sha = hashlib.sha256
    view = memoryview(prev)
    out = bytearray()
    for i in range(0, len(prev) - 2 * HASH + 1, 2 * HASH):
        out += sha(prefix + view[i:i + 2 * HASH]).digest()
    return out


def _same_nodes(rows: list[Any], level: int, first: int, buf: bytearray) -> bool:
    """Whether ``rows`` are exactly the nodes (level, first), (level, first + 1), ... whose
    hashes ``buf`` holds, each index an int and each hash 32 bytes: compared at C speed."""
    count = len(buf) // HASH
    try:
        if len(rows) != count or list(map(_pos, rows)) != list(zip(repeat(level),
                                                                    range(first, first + count))):
            return False
        if set(map(type, chain.from_iterable(map(_pos, rows)))) != {int}:
            return False
        hashes = list(map(_hash, rows))
        return set(map(len, hashes)) == {HASH} and b"".join(hashes) == buf
    except (TypeError, IndexError):
        return False


_pos, _hash = itemgetter(0, 1), itemgetter(2)


def check_tree(stored: Iterable[tuple[int, int, Any]], digests: Sequence[bytes],
               wanted: set[tuple[int, int]]) -> tuple[list[Finding], dict[tuple[int, int], bytes]]:
    """Compare the stored tree (interior nodes, in level and index order) with the tree over
    ``digests``, a level at a time; findings, and the recomputed nodes in ``wanted`` (what the
    stored checkpoints' roots are made of; level 0 nodes are leaf hashes).

    Each level is first compared TREE_BLOCK nodes at a time (`_same_nodes`); from the first
    block that differs, row by row, which names every row that differs, is missing or is not
    derived."""
    findings: list[Finding] = []
    kept: dict[tuple[int, int], bytes] = {}
    level_buf = _level_hashes_leaves(digests)
    level, seen = 0, bytearray(0)

    def keep(lv: int, buf: bytearray) -> None:
        for wl, wi in wanted:
            if wl == lv and (wi + 1) * HASH <= len(buf):
                kept[(wl, wi)] = bytes(buf[wi * HASH:(wi + 1) * HASH])

    def missing_of_level() -> None:
        i = seen.find(0)
        while i != -1:
            findings.append(derived_finding(
                "tree", (level, i), digests, level_buf[i * HASH:(i + 1) * HASH],
                "the row is missing"))
            i = seen.find(0, i + 1)

    def up() -> None:
        nonlocal level_buf, level, seen
        if level > 0:
            missing_of_level()
        level_buf = _level_hashes(level_buf, b"\x01")
        level += 1
        seen = bytearray(len(level_buf) // HASH)
        keep(level, level_buf)

    keep(0, level_buf)
    rows: Iterator[Any] = iter(stored)
    matching = True
    while matching and len(level_buf) >= 2 * HASH:
        head = next(rows, None)  # up a level where the row by row check would: at its row
        if head is None:
            break
        rows = chain((head,), rows)
        if (type(head) is not tuple or len(head) != 3 or type(head[0]) is not int
                or head[0] != level + 1):
            break
        up()  # the level below was all seen: nothing missing
        count = len(level_buf) // HASH
        for first in range(0, count, TREE_BLOCK):
            part = level_buf[first * HASH:min(first + TREE_BLOCK, count) * HASH]
            chunk = list(islice(rows, len(part) // HASH))
            if not _same_nodes(chunk, level, first, part):
                rows, matching = chain(chunk, rows), False
                break
            seen[first:first + len(chunk)] = b"\x01" * len(chunk)
    for row in rows:
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
            findings.append(derived_finding("tree", key, digests, bytes(want),
                                            "it differs from what the entry's bytes say"))
    while len(level_buf) >= 2 * HASH:  # the levels above the last stored row
        up()
    if level > 0:
        missing_of_level()
    return findings, kept


def _level_hashes_leaves(digests: Sequence[bytes]) -> bytearray:
    sha = hashlib.sha256
    out = bytearray()
    view = memoryview(digests._buf if isinstance(digests, Digests) else b"".join(digests))
    for i in range(0, len(view), HASH):
        out += sha(b"\x00" + view[i:i + HASH]).digest()
    return out
