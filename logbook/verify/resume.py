"""The analysis check resumed from what this machine checked of the ledger before
(logbook.storage.sqlite.read_model; docs/auditing.md §7).

An earlier check of ``n`` entries passed and left, in the user's state folder, the digest of
every one of them, the index and tree rows it compared with their bytes, and the key history
at ``n``. This check then establishes that the ledger still extends exactly those entries and
checks everything after them as the full check would:

* entry ``n - 1`` is read and its bytes must hash to the head the earlier check ended in
  (entry 0 names the same ledger): a ledger rewritten or cut below ``n`` is a finding, which a
  full check of a ledger re-signed by a key holder would not give (a transparency-log client's
  consistency check against its last verified checkpoint);
* every entry from ``n`` on: its digest, its place in the chain (its ``prev`` is the head
  above), its signature under the key history carried on from the earlier check, its
  references (to earlier entries, looked up in the checked copy);
* the derived rows of those entries (index, outcomes, run sources), every stored tree node
  that covers one of them (recomputed from the checked tree's frontier and their digests),
  the whole table of signing keys, and every checkpoint kept in the ledger (its root from
  the checked tree and the new nodes).

The rows below ``n`` in the ledger's own derived tables are not read again: the analysis reads
the checked copy instead (logbook.verify.checked_reads), and any entry's bytes it reads are
held to the digest the earlier check recorded.

Imports nothing that signs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logbook.findings import Finding
from logbook.format import runfacts
from logbook.storage import index as derive
from logbook.storage.base import EntryLog, KeyRow, RunRow
from logbook.tlog import merkle
from logbook.verify.chain import ChainVerifier, Result, compare_rows
from logbook.verify.derived import (
    Digests,
    derived_finding,
)
from logbook.verify.signatures import SignatureBatch, worth_a_pool
from logbook.verify.stored import (
    WINDOW,
    ExpectedRows,
    check_checkpoint_rows,
    flush_window,
    stored_as_found,
    stored_tables,
)

if TYPE_CHECKING:
    from logbook.storage.sqlite.read_model import ReadModel


class StaleState(Exception):
    """The checked copy cannot be used (incomplete or of another layout): check in full."""


@dataclass
class Resumed:
    """What the resumed check found, and the rows to add to the checked copy."""

    result: Result
    start: int  # the entries the earlier check covered
    index_rows: list[tuple[Any, ...]] = field(default_factory=list)
    tree_rows: list[tuple[int, int, bytes]] = field(default_factory=list)
    keys: list[KeyRow] = field(default_factory=list)
    shapes: list[tuple[int, str, str]] = field(default_factory=list)  # the new plans' shapes
    # the new runs' facts (logbook.format.runfacts), as the checked copy keeps them
    facts: list[RunRow] = field(default_factory=list)


class CheckedDigests(Sequence[bytes]):
    """The entries' digests: those below ``start`` from the checked copy (looked up only to
    name an entry in a finding), those after it as this check computes them."""

    def __init__(self, checked: ReadModel, start: int) -> None:
        self._checked, self.start, self.tail = checked, start, Digests()

    def append(self, digest: bytes) -> None:
        self.tail.append(digest)

    def __len__(self) -> int:
        return self.start + len(self.tail)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if i >= self.start:
            return self.tail[i - self.start]
        found = self._checked.digests_at([i]).get(i) if i >= 0 else None
        if found is None:
            raise IndexError("digest index out of range")
        return bytes.fromhex(found)

    def __iter__(self) -> Iterator[bytes]:
        return (self[i] for i in range(len(self)))


class CheckedKinds(dict[bytes, str]):
    """The kind of every entry by its digest: the new ones as read, the earlier ones from the
    checked copy (what a reference may name)."""

    def __init__(self, checked: ReadModel) -> None:
        super().__init__()
        self._checked = checked

    def get(self, key: bytes, default: Any = None) -> Any:
        found = dict.get(self, key)
        if found is None:
            row = self._checked.kind_of(key.hex())
            found = row[1] if row is not None else None
        return default if found is None else found


class _Capturing(ExpectedRows):
    """The expected rows, also kept to be added to the checked copy once they compare equal."""

    captured: list[tuple[Any, ...]]

    def insert_index(self, row: tuple[Any, ...]) -> None:
        self.captured.append(row)
        super().insert_index(row)


def resume(store: EntryLog, checked: ReadModel, state: dict[str, Any],
           on_progress: Callable[[int, int], None] | None = None) -> Resumed:
    """The check of the entries after the ``state["size"]`` this machine checked, inside the
    caller's read transaction; StaleState when the copy cannot carry it."""
    start, when = state["size"], state.get("checked_at", "an earlier check")
    size = store.head()[0]
    result = Result(entries=start, head=state["head"], ledger=state["ledger"])
    out = Resumed(result, start)
    if size < start:
        result.checks += 1
        result.findings.append(Finding(
            "rollback", "error", f"the ledger holds {size} entries, but this machine checked "
            f"{start} of it ({when}): entries were removed, or an older copy was put in its "
            f"place (`logbook verify` checks it as it is; {_forget(checked)})", None, []))
        return out
    genesis = store.entries_at([0])
    first = checked.digests_at([0]).get(0)
    if not genesis or first is None or _digest(genesis[0].entry) != first:
        return _rewritten(out, checked, 0, genesis[0].entry if genesis else None, first, when)
    rows = store.raw_entries(start - 1)
    link = next(iter(rows), None)
    if link is None or link[0] != start - 1 or _digest(link[2]) != state["head"]:
        return _rewritten(out, checked, start - 1, link[2] if link else None, state["head"],
                          when)
    batch = SignatureBatch() if worth_a_pool(size - start) else None
    try:
        chain = _seeded(checked, state, batch)
        _scan(store, checked, chain, rows, out, size, on_progress)
    finally:
        if batch is not None:
            batch.close()
    return out


def _digest(raw: Any) -> str:
    return hashlib.sha256(bytes(raw)).hexdigest()


def _rewritten(out: Resumed, checked: ReadModel, seq: int, raw: Any, digest: str | None,
               when: str) -> Resumed:
    """The finding for an entry below the size checked before whose bytes changed since."""
    now = "is missing" if raw is None else f"hashes to {_digest(raw)[:16]}…"
    out.result.checks += 1
    out.result.findings.append(Finding(
        "rewritten", "error", f"entry {seq} is not the one this machine checked ({when}): it "
        f"{now}, not to {str(digest)[:16]}…: the ledger was rewritten below the size checked "
        f"then (`logbook verify` checks it as it is; {_forget(checked)})", seq,
        [digest] if digest else []))
    return out


def _forget(checked: ReadModel) -> str:
    return f"if that was meant, remove {checked.path} to start this machine's checks again"


def _seeded(checked: ReadModel, state: dict[str, Any],
            batch: SignatureBatch | None) -> ChainVerifier:
    """A chain verifier carried on from the end of the earlier check."""
    chain = ChainVerifier(None, 0, batch)
    chain.expected_seq = state["size"]
    chain.prev = state["head"]
    chain.result.entries, chain.result.head = state["size"], state["head"]
    chain.result.ledger = state["ledger"]
    chain.kinds = CheckedKinds(checked)
    chain.digests = CheckedDigests(checked, state["size"])  # type: ignore[assignment]
    for fp, _name, public, _added, revoked in checked.signing_keys():
        if revoked is not None:
            chain.revoked.add(fp)
            continue
        try:
            raw = base64.b64decode(public, validate=True)
        except (binascii.Error, ValueError):
            raise StaleState("a checked key is not base64") from None
        chain.valid[fp] = raw
    if not chain.valid:
        raise StaleState("the checked copy holds no valid key")
    return chain


def _scan(store: EntryLog, checked: ReadModel, chain: ChainVerifier, rows: Iterator[Any],
          out: Resumed, size: int, on_progress: Callable[[int, int], None] | None) -> None:
    start, digests = out.start, chain.digests
    tables = stored_tables(store, digests, start)
    expected = _Capturing(*tables)
    expected.captured = out.index_rows
    for fp, name, public, added, revoked in checked.signing_keys():
        expected.keys[fp] = [fp, name, public, added, revoked]
    upto, pending, new_leaves = start - 1, 0, []
    for seq, stored_digest, raw, signature, stored_as in rows:
        if pending >= WINDOW:
            flush_window(tables, upto, chain, size, on_progress)
            pending = 0
        if type(seq) is int and seq > upto:
            upto = seq
        pending += 1
        raw = bytes(raw)
        stored_digest, signature = stored_as_found(chain, seq, stored_digest, raw, signature,
                                                   stored_as)
        env = chain.feed(seq, stored_digest, raw, signature)
        new_leaves.append(bytes.fromhex(chain.prev))
        if env is not None:
            derive.derive(expected, seq, chain.prev, env)
            if env.get("kind") == "run":
                out.facts.append(derive.run_row(seq, chain.prev, env, runfacts.encode(
                    runfacts.facts_of(env.get("body")))))
            elif env.get("kind") == "plan" and type(body := env.get("body")) is dict:
                out.shapes.append((seq, chain.prev, derive.shape_text(body)))
    for table in tables:
        table.flush(None)
    result = out.result = chain.finish()
    if on_progress is not None:
        on_progress(chain.expected_seq, max(size, chain.expected_seq))
    for table in tables:
        result.checks += 1
        result.findings += table.findings
    result.digests, result.keys = digests, expected.rows()
    result.unchecked = 0
    out.keys = result.keys
    compare_rows(result, "signing_keys", [tuple(v) for v in expected.keys.values()],
                 store.signing_keys(), digests)
    whole = _TreeView({}, checked)
    tree = tail_tree(out.start, new_leaves, lambda lv, ix: whole[(lv, ix)])
    _compare_tree(result, store.derived_rows("tree", out.start), tree, digests)
    out.tree_rows = [(lv, ix, h) for (lv, ix), h in tree.items()]
    whole.update(tree)
    whole.update(((0, start + i), merkle.leaf_hash(d)) for i, d in enumerate(new_leaves))
    check_checkpoint_rows(result, store, whole)


def tail_tree(start: int, leaves: list[bytes],
              frontier: Callable[[int, int], bytes]) -> dict[tuple[int, int], bytes]:
    """Every interior node of the tree over ``start + len(leaves)`` entries that covers one
    of the new ``leaves`` (the digests of entries ``start`` on), from those leaves and the
    nodes of the tree over the first ``start`` entries that they complete (``frontier``)."""
    end = start + len(leaves)
    current = {start + i: merkle.leaf_hash(d) for i, d in enumerate(leaves)}
    out: dict[tuple[int, int], bytes] = {}
    level = 0
    while end >> (level + 1):
        above: dict[int, bytes] = {}
        for i in range((start >> (level + 1)), end >> (level + 1)):
            left = current.get(2 * i)
            if left is None:  # the left half is a complete subtree of the earlier tree
                left = frontier(level, 2 * i)
            above[i] = merkle.node_hash(left, current[2 * i + 1])
        level += 1
        out.update(((level, i), h) for i, h in above.items())
        current = above
    return out


def _compare_tree(result: Result, stored: Any, tree: dict[tuple[int, int], bytes],
                  digests: Sequence[bytes]) -> None:
    result.checks += 1
    seen: set[tuple[int, int]] = set()
    for row in stored:
        lv, ix, h = row
        key = (lv, ix)
        want = tree.get(key)
        got = bytes(h) if isinstance(h, bytes | bytearray | memoryview) else h
        if want is None:
            result.findings.append(derived_finding("tree", key, digests, row,
                                                   "a row not derived from any entry"))
            continue
        seen.add(key)
        if got != want:
            result.findings.append(derived_finding(
                "tree", key, digests, want, "it differs from what the entry's bytes say"))
    for key in tree.keys() - seen:
        result.findings.append(derived_finding("tree", key, digests, tree[key],
                                               "the row is missing"))


class _TreeView(dict[tuple[int, int], bytes]):
    """The tree over all the entries: the new nodes, else the checked copy's."""

    def __init__(self, new: dict[tuple[int, int], bytes], checked: ReadModel) -> None:
        super().__init__(new)
        self._checked = checked

    def __missing__(self, key: tuple[int, int]) -> bytes:
        found = self._checked.tree_node(*key)
        if found is None:
            raise StaleState(f"the checked tree lacks node {key}")
        return found
