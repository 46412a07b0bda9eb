"""What the analysis reads after its check (logbook.verify.integrity), resumed or full: the index,
the tree and the keys from this machine's checked copy (logbook.storage.sqlite.read_model), and
the entries' bytes from the ledger, each held to the digest the checked copy records for its seq.
Where no copy can be kept (LOGBOOK_STATE_DIR=off, a read-only home) the copy is one in memory,
made by the full check from the rows it has just compared, and read the same way.

The ledger's own derived rows below the size checked before are not compared again, so they
are never read: a slug, a plan's runs, a retraction's target, a root, all come from the copy.
An entry whose stored bytes no longer hash to the recorded digest stops the command with the
banner (NotVerified), like any other finding of the check; its bytes are never used.

Everything that is not an analysis read (writing a claim or a band, the stored checkpoints
and audits, the kept logs) goes to the ledger's store itself (logbook.ledger.service routes
each read and write).
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from logbook.errors import CopyDamaged, StorageDamaged
from logbook.storage.base import EntryLog, KeyRow, PlanShape, RunCount, RunRow, StoredEntry
from logbook.storage.index import IndexRow
from logbook.verify.refusal import BANNER, NotVerified

if TYPE_CHECKING:
    from logbook.storage.sqlite.read_model import ReadModel

_BATCH = 500
SCAN_BATCH = 5000  # entries per buffer in entries_mentioning's byte search


class CheckedReads:
    """The ledger's store as the analysis reads it after its check (see above)."""

    def __init__(self, store: EntryLog, checked: ReadModel, size: int, head: str | None,
                 when: str, runs: list[tuple[Any, ...]] | None = None) -> None:
        self._rows, self._checked, self._size, self._head = store, checked, size, head
        self._when = when
        self._runs = runs  # the runs' rows as the full check that made the copy decoded them

    # -- entries, held to the checked digests -------------------------------------------------
    def _held(self, found: Iterable[StoredEntry]) -> list[StoredEntry]:
        rows = list(found)
        want = self._checked.digests_at([e.seq for e in rows])
        lost = next((e.seq for e in rows if e.seq not in want), None)
        if lost is not None:  # below the size it covers: the copy lost the row, not the ledger
            self._checked.discard()
            raise CopyDamaged(f"this machine's checked copy of the ledger ({self._checked.path}) "
                              f"holds no digest for entry {lost}, which it covers: it is "
                              "damaged, and removed; the next command checks the ledger in full")
        return held(rows, want, f"this machine checked ({{digest}}, {self._when}; if "
                    f"`logbook verify` finds nothing, the copy {self._checked.path} changed)")

    def entries_at(self, seqs: list[int]) -> list[StoredEntry]:
        """Those of ``seqs`` this read checked (none beyond its size), each held to its
        checked digest; NotVerified when one of them is missing from the ledger."""
        out: list[StoredEntry] = []
        seqs = [s for s in seqs if 0 <= s < self._size]
        for i in range(0, len(seqs), _BATCH):
            chunk = seqs[i:i + _BATCH]
            found = self._held(self._rows.entries_at(chunk))
            if len(found) != len(set(chunk)):
                raise NotVerified(f"{BANNER}: entries this machine checked are missing from "
                                  "the ledger (`logbook verify` says more)")
            out += found
        return out

    def entry_by_digest(self, digest: str) -> StoredEntry | None:
        """The entry, its signature held to its signer's key too: one entry is asked for to be
        shown whole (`show`, an entry's page), and its signature column is not covered by
        the digest the copy holds it to."""
        seq = self._checked.seq_of(digest)
        if seq is None or seq >= self._size:
            return None
        found = self.entries_at([seq])[0]
        if not signature_holds(found, self.signing_keys()):
            raise NotVerified(f"{BANNER}: entry {seq}: its stored signature does not verify "
                              "with its signer's key: it was altered after this machine's "
                              "check (`logbook verify` says more)")
        return found

    def entries(self, start: int = 0, stop: int | None = None,
                batch: int = 2000) -> Iterator[StoredEntry]:
        end = self._size if stop is None else min(stop, self._size)
        for lo in range(max(start, 0), end, batch):
            yield from self.entries_at(list(range(lo, min(lo + batch, end))))

    def _below(self, seqs: list[int]) -> list[int]:
        """The seqs within the size this read checked: another process may have carried the
        shared copy on past this read's snapshot of the ledger meanwhile, and entries beyond
        it are not this read's to see (nor missing from the ledger)."""
        return [s for s in seqs if s < self._size]

    def _known(self, digest: str | None) -> bool:
        seq = self._checked.seq_of(digest) if digest is not None else None
        return seq is not None and seq < self._size

    def entries_where(self, kind: str | None = None, plan: str | None = None,
                      last: int | None = None,
                      targets: list[str] | None = None) -> list[StoredEntry]:
        if targets is not None:
            return self.entries_at(self._below(self._checked.seqs_where(kind,
                                                                        targets=targets)))
        seqs = self._checked.seqs_where(kind, plan, last)
        if seqs and seqs[-1] >= self._size:  # the copy went on meanwhile (rare): bound it
            seqs = self._below(self._checked.seqs_where(kind, plan, None))
            seqs = seqs[-last:] if last is not None and last > 0 else (
                [] if last is not None else seqs)
        return self.entries_at(seqs)

    def entries_mentioning(self, kinds: tuple[str, ...], after: int,
                           needles: list[str]) -> list[StoredEntry]:
        """As the ledger's own: every candidate is read and held to its digest before its
        bytes are searched, so an altered entry cannot drop out of the search unseen."""
        if not needles:
            return []
        wanted = [n.encode() for n in needles]
        seqs = self._below(self._checked.seqs_where(kinds=kinds, after=after))
        found: list[StoredEntry] = []
        for i in range(0, len(seqs), SCAN_BATCH):
            rows = self.entries_at(seqs[i:i + SCAN_BATCH])
            found += (rows[j] for j in mentioning([r.entry for r in rows], wanted))
        return found

    def plan_shapes(self) -> list[PlanShape]:
        """Every plan's shape, as the checks read it from the plans' checked bytes."""
        return self._checked.plan_shapes(self._size)

    # -- the index, the tree and the keys, from the checked copy ----------------------------
    def head(self) -> tuple[int, str | None]:
        return self._size, self._head

    def kind_of(self, digest: str) -> tuple[int, str] | None:
        found = self._checked.kind_of(digest)
        return found if found is not None and found[0] < self._size else None

    def digests_with_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        found = [d for d in self._checked.digests_with_prefix(prefix, limit + 8)
                 if self._known(d)]
        return found[:limit]

    def plan_digest_by_slug(self, slug: str) -> str | None:
        found = self._checked.plan_digest_by_slug(slug)
        return found if self._known(found) else None

    def retractions_of(self, digests: list[str]) -> dict[str, list[str]]:
        out = {}
        for target, by in self._checked.retractions_of(digests).items():
            kept = [d for d in by if self._known(d)]
            if kept:
                out[target] = kept
        return out

    def signing_keys(self) -> list[KeyRow]:
        """The keys as the entries this read checked left them (a key added or revoked by an
        entry beyond them, which another process may have carried the copy to, is not yet)."""
        return [(fp, name, public, added, revoked if revoked is None or revoked < self._size
                 else None) for fp, name, public, added, revoked in self._checked.signing_keys()
                if added < self._size]

    def tree_node(self, level: int, idx: int) -> bytes:
        found = self._checked.tree_node(level, idx)
        if found is None:
            raise StorageDamaged(f"tree node ({level}, {idx}) is not in this machine's "
                                 "checked copy of the ledger")
        return found

    def completed_counts(self) -> dict[tuple[str, str], int]:
        return self._checked.completed_counts(self._size)

    def plans_touched(self, retracted: list[str]) -> set[str]:
        return self._checked.plans_touched(retracted, self._size)

    def run_counts(self, plans: list[str]) -> list[RunCount]:
        return self._checked.run_counts(plans, self._size)

    def latest_session(self) -> str | None:
        return self._checked.latest_session(self._size)

    def session_runs(self, session: str) -> list[IndexRow]:
        return self._checked.session_runs(session, self._size)

    def run_rows(self) -> Iterator[RunRow]:
        """Every run's index fields and facts (logbook.format.runfacts), from the checked
        copy: what the analysis reads of a run without reading the run."""
        if self._runs is not None:
            return iter(self._runs)
        if not self._checked.lasting:  # a copy in memory keeps no facts (verify.integrity)
            raise RuntimeError("run_rows() of a copy in memory: ask the check for runs=True")
        return self._checked.run_rows(self._size)

    def kept(self, kinds: Iterable[str]) -> Mapping[str, list[Kept]]:
        """The entries of these kinds as the analysis computes from them (logbook.verify.stored
        Keep), each held to its checked digest; each kind is read when first asked for (the
        audit reads runs' facts, not their entries: `run_rows`)."""
        return _KeptKinds(self, frozenset(kinds))

    def read_kind(self, kind: str) -> list[Kept]:
        from logbook.verify.stored import Keep

        keep = Keep((kind,))
        seqs = self._checked.seqs_where(kind=kind)
        seqs = seqs[:bisect.bisect_left(seqs, self._size)]
        for i in range(0, len(seqs), 5000):
            for e in self.entries_at(seqs[i:i + 5000]):
                keep.add(e.seq, e.digest, orjson.loads(e.entry), e.signature, e.entry)
        return keep.entries[kind]


Kept = tuple[int, str, dict[str, Any], str, bytes]


def signature_holds(entry: StoredEntry, keys: list[KeyRow]) -> bool:
    """Whether ``entry``'s stored signature is its signer's (a key of the ledger's whose
    fingerprint the envelope names) on its digest."""
    import base64
    import binascii

    from logbook.format.canonical import signing_input
    from logbook.verify.signatures import checker

    try:
        signer = orjson.loads(entry.entry).get("signer")
        signature = binascii.a2b_base64(entry.signature, strict_mode=True)
        message = signing_input(bytes.fromhex(entry.digest))
        return any(fp == signer and checker()(base64.b64decode(public), signature, message)
                   for fp, _name, public, _added, _revoked in keys)
    except (AttributeError, binascii.Error, ValueError, TypeError, orjson.JSONDecodeError):
        return False


def held(rows: list[StoredEntry], want: Mapping[int, str], what: str) -> list[StoredEntry]:
    """``rows`` each held to the digest ``want`` records for its seq; NotVerified naming the
    first whose bytes hash to another (``what``: whose digest, with ``{digest}`` in it)."""
    out = []
    for e in rows:
        digest = want.get(e.seq)
        got = hashlib.sha256(e.entry).hexdigest()
        if digest is None or got != digest:
            whose = what.format(digest=f"{str(digest)[:16]}…")
            raise NotVerified(
                f"{BANNER}: entry {e.seq}: its stored bytes hash to {got[:16]}…, not to the "
                f"digest {whose}: the entry was altered after that check (`logbook verify` "
                "says more)")
        out.append(StoredEntry(e.seq, digest, e.entry, e.signature))
    return out


class _KeptKinds(Mapping[str, list[Kept]]):
    """`CheckedReads.kept`: the kinds asked for, each read whole on first use."""

    def __init__(self, reads: CheckedReads, kinds: frozenset[str]) -> None:
        self._reads, self._kinds = reads, kinds
        self._read: dict[str, list[Kept]] = {}

    def __getitem__(self, kind: str) -> list[Kept]:
        if kind not in self._kinds:
            raise KeyError(kind)
        if kind not in self._read:
            self._read[kind] = self._reads.read_kind(kind)
        return self._read[kind]

    def __contains__(self, kind: object) -> bool:
        return kind in self._kinds

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._kinds))

    def __len__(self) -> int:
        return len(self._kinds)


def mentioning(blobs: list[bytes], needles: list[bytes]) -> list[int]:
    """The positions, in order, of the entry bytes that contain any of ``needles``: one byte
    search over the whole batch (NUL separates entries, as canonical JSON never holds a raw
    control character), so no entry is parsed to be passed over. `entries_mentioning` uses it."""
    from bisect import bisect_right
    from itertools import accumulate

    buf = b"\0".join(blobs)
    starts = list(accumulate((len(b) + 1 for b in blobs[:-1]), initial=0))
    hits: set[int] = set()
    for needle in needles:
        pos = buf.find(needle)
        while pos != -1:
            hits.add(bisect_right(starts, pos) - 1)
            pos = buf.find(needle, pos + 1)
    return sorted(hits)
