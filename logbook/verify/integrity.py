"""The check every analysis makes before it prints a number (docs/auditing.md, "What the
analysis commands check").

`report`, `compare`, `audit`, `brief` and `claim` (and `claim check`, `band`, `checkpoint`)
open one read transaction, run this check inside it, and compute inside the same
transaction, so every number comes from the bytes that were just checked, and every derived
row they read (the index that finds a plan's runs, the outcomes, the keys, the tree) was just
compared with those bytes. On any finding they print no figure: stderr says
``this ledger does not verify: ...`` and the command exits 1.

The check is `verify`'s, minus `--strict`: every entry's digest recomputed from its stored
bytes, the chain continuous from genesis to the head, every derived table compared with the
bytes, every stored checkpoint recomputed from the entries' digests and its signature checked,
and the signatures: every genesis and key entry's, and every other entry's after the latest
stored checkpoint (all of them when there is none). Why not just the head's signature: an
appender signs on top of whatever head the file holds, so an entry slipped in by someone
without a key would be covered by the next honest signature. Why a checkpoint may vouch for
the signatures below it: `logbook checkpoint` signs only a size it has just checked this way,
its root binds every entry below that size, and the key entries (always checked) decide which
keys could have signed it. docs/auditing.md gives the argument in full.

Imports nothing that signs and nothing heavy (no numpy, no pydantic).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logbook.errors import CopyDamaged
from logbook.storage.base import EntryLog, PlanShape, RunRow
from logbook.verify.refusal import BANNER, NotVerified

if TYPE_CHECKING:
    from logbook.storage.sqlite.read_model import ReadModel

__all__ = ["BANNER", "NotVerified", "Verified", "check", "verified"]

CHECKED_FORMAT = 3  # the layout of the state a checked copy records; another is made again


@dataclass(frozen=True)
class Verified:
    """What the check established: the entries it covered and the head they end in."""

    entries: int
    head: str | None
    ledger: str | None
    signatures: int  # signatures checked one by one
    vouched: int  # entries whose signatures the latest stored checkpoint vouches for
    # the entries of the kinds the caller asked for, as this check read them (by kind, in
    # ledger order: seq, digest, envelope, signature, bytes); empty when none were asked for
    kept: Mapping[str, list[tuple[int, str, dict[str, Any], str, bytes]]] = field(
        default_factory=dict, repr=False, compare=False)
    # the facts of every run this check parsed (logbook.format.runfacts), by seq, when the
    # caller keeps runs: what the analysis reads of each run instead of working it out again
    facts: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)
    resumed: int = 0  # entries this machine had checked before, which this check carried on
    checked_at: str | None = None  # when that earlier check was made
    # what the analysis reads (logbook.verify.checked_reads), after a resumed check and a full
    # one alike; None for a check made without a checked copy (LOGBOOK_STATE_DIR=off)
    reads: Any = field(default=None, repr=False, compare=False)
    # where the analysis reads the runs through their facts (`run_rows`, and `entries_at` for
    # a run it reads whole) when the caller asked for them (``runs``), else None
    runs: Any = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        if self.resumed:
            checks = (f"the ledger extends the {self.resumed} entries this machine checked "
                      f"({self.checked_at}); after them digests, chain, every signature and "
                      "derived rows; stored checkpoints; every entry read held to its checked "
                      "digest")
        else:
            how = (f"signatures after the checkpoint at size {self.vouched}" if self.vouched
                   else "every signature")
            checks = f"digests, chain, {how}, derived tables, stored checkpoints"
        return {"verified": True, "entries": self.entries, "head": self.head,
                "checks": checks,
                "signatures_checked": self.signatures, "vouched_by_checkpoint": self.vouched,
                "resumed_from": self.resumed}


def _latest_checkpoint_size(store: EntryLog) -> int:
    """The size the latest stored checkpoint claims (0 when none parses); whether it holds
    is for the check itself to find."""
    from logbook.errors import LogbookError
    from logbook.tlog.checkpoint import parse_checkpoint

    try:
        rows = store.checkpoints()
        return parse_checkpoint(rows[-1][3])[0].size if rows else 0
    except (LogbookError, IndexError, TypeError):
        return 0


def check(store: EntryLog, checked: ReadModel, keep: Iterable[str] = (),
          on_progress: Callable[[int, int], None] | None = None, runs: bool = False,
          before: int | None = None) -> Verified:
    """Run the check in one read transaction (the caller's, when it holds one); NotVerified
    on any finding. ``keep``: kinds whose entries the caller will compute from; they come
    back in `Verified.kept`, parsed once, from the bytes this check read. ``runs``: the
    caller reads runs through their facts (logbook.format.runfacts), worked out by this check
    (`Verified.runs`), and reads a run whole only when it asks for one.

    ``checked``: this machine's checked copy of the ledger (logbook.storage.sqlite.read_model,
    in memory when none can be kept): when it holds an earlier check of this ledger, only what
    was appended since is checked (logbook.verify.resume); after a full check that passes, the
    copy is made anew. Either way `Verified.reads` (the copy, with each entry's bytes held to
    its checked digest) is what the analysis then reads: one read path. ``before``: the size
    the copy covered before the caller's read transaction began (read here when the caller
    holds none)."""
    from logbook.verify.stored import verify_store

    kept = _kept(keep, copy=checked.lasting, runs=runs)
    if before is None:
        before = copy_size(checked)
    renew = True
    with store.snapshot():
        state = _usable_state(store, checked)
        if state is not None:
            try:
                found = _resumed(store, checked, state, kept, on_progress, before)
            except _CarriedPast:
                found, renew = None, False  # the copy is ahead of this snapshot: kept as is
            except CopyDamaged:  # removed: checked in full, and read from a copy in memory
                found, checked = None, checked.spare()
            if found is not None:
                return found
        vouched = _latest_checkpoint_size(store)
        # logs are not read by any analysis (its figures come from the signed entries alone),
        # and hashing every kept log before each report would cost more than the report:
        # `logbook verify` checks them (docs/auditing.md §7)
        result = verify_store(store, vouched=vouched, keep=kept, on_progress=on_progress,
                              logs=False)
        _raise_on_findings(result)
        reads = _renewed(store, checked if renew else checked.spare(), result, kept, before)
        return Verified(result.entries, result.head, result.ledger,
                        result.entries - result.unchecked, min(vouched, result.entries),
                        kept.entries, kept.facts, reads=reads, runs=reads if runs else None)


def _renewed(store: EntryLog, copy: ReadModel, result: Any, kept: Any, before: int) -> Any:
    """What the analysis reads after a full check: the checked copy made anew from the rows
    the check has just compared with the entries (another copy, in memory, when this one
    cannot take them: a full disk, a copy another check carried past this snapshot), each
    entry held to its checked digest, as after a resumed check. The runs' facts are the ones
    the check worked out (``kept.read``), not read back."""
    from logbook.verify.checked_reads import CheckedReads

    state = _state(result)

    def made(into: ReadModel) -> bool:  # the store's rows read afresh for each attempt
        return into.replace(store.derived_rows("entry_index"), store.derived_rows("tree"),
                            result.keys, kept.shapes, kept.rows, state,
                            before if into.lasting else 0)  # one in memory is this check's

    if not made(copy):
        copy = copy.spare()
        if not made(copy):
            raise RuntimeError("a checked copy in memory took none of the check's rows")
    return CheckedReads(store, copy, result.entries, result.head, str(state["checked_at"]),
                        runs=kept.read if kept.runs else None)


def _kept(kinds: Iterable[str], copy: bool, runs: bool) -> Any:
    """The `Keep` of a check: the entries of ``kinds``, and the facts of every run
    (logbook.format.runfacts) when they are kept (a checked copy on disk, read by later
    checks) or read (``runs``); a copy in memory never reads them back (the analysis of this
    command reads the ones worked out here), and a caller that keeps runs whole and nothing
    more works them out as it reads each run (logbook.analysis.run_view: from the item arrays
    it builds anyway)."""
    from logbook.format.runfacts import encode, facts_of
    from logbook.storage.index import run_row, shape_text
    from logbook.verify.stored import Keep

    class Kept(Keep):
        def __init__(self) -> None:
            super().__init__(kinds, share_ids=copy or runs)
            self.copy, self.kept_runs, self.runs = copy, "run" in self.kinds, runs
            self.facts: dict[int, Any] = {}  # by seq, for runs kept whole
            self.rows: list[RunRow] = []  # for the checked copy
            self.read: list[tuple[Any, ...]] = []  # index fields and facts, for `runs`
            self.shapes: list[PlanShape] = []  # every plan's, for the checked copy

        def add(self, seq: int, digest: str, env: dict[str, Any], signature: str,
                raw: bytes) -> None:
            super().add(seq, digest, env, signature, raw)  # first: it shares the item ids
            kind = env.get("kind")
            if kind == "plan" and type(body := env.get("body")) is dict:
                self.shapes.append((seq, digest, shape_text(body)))
            elif kind == "run" and (self.copy or self.runs):
                found = facts_of(env.get("body"))
                if self.kept_runs and found is not None:
                    self.facts[seq] = found
                row = run_row(seq, digest, env, None)
                if self.copy:
                    self.rows.append((*row[:6], encode(found)))
                if self.runs:
                    self.read.append((*row[:6], found))

    return Kept()


def _raise_on_findings(result: Any) -> None:
    if result.ok:
        return
    first = result.findings[0].message if result.findings else "it holds no entries"
    more = len(result.findings) - 1
    derived = all(f.check == "derived" for f in result.findings)
    raise NotVerified(f"{BANNER}: {first}" + (
        f" (and {more} more finding{'s' if more > 1 else ''}: `logbook verify` lists "
        "them)" if more > 0 else " (`logbook verify` says more)") + (
        "; the entries verify, and `logbook reindex` rebuilds derived tables from them"
        if derived else ""))


def _state(result: Any) -> dict[str, Any]:
    from datetime import UTC, datetime

    from logbook.format.runfacts import FACTS_VERSION

    return {"format": CHECKED_FORMAT, "facts": FACTS_VERSION, "ledger": result.ledger,
            "size": result.entries,
            "head": result.head,
            "checked_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00",
                                                                                  "Z")}


def _usable_state(store: EntryLog, checked: ReadModel) -> dict[str, Any] | None:
    """The checked copy's state, if it is of this ledger (its genesis names the same ledger:
    another ledger at the same place starts the copy again)."""
    import orjson

    from logbook.format.runfacts import FACTS_VERSION

    state = checked.state()
    if state is None or state.get("format") != CHECKED_FORMAT or state.get(
            "facts") != FACTS_VERSION or not all(
            isinstance(state.get(k), t) for k, t in (("size", int), ("head", str),
                                                      ("ledger", str))) or state["size"] < 1:
        return None  # none, or of another version: checked in full, and made again
    try:
        first = store.entries_at([0])
        ledger = orjson.loads(first[0].entry).get("ledger") if first else None
    except (orjson.JSONDecodeError, AttributeError, IndexError):
        return None
    return state if ledger is not None and ledger == state.get("ledger") else None


class _CarriedPast(Exception):
    """The checked copy covers more entries than the caller's snapshot holds, and covered no
    more than it before that snapshot began: another check, whose snapshot began later and
    saw entries appended since, carried it on meanwhile. That is no rollback: this snapshot
    is checked in full and the copy left as it is."""


def copy_size(checked: ReadModel) -> int:
    """The size the checked copy covers now (0: none yet)."""
    state = checked.state()
    size = state.get("size") if state is not None else None
    return size if isinstance(size, int) else 0


def _resumed(store: EntryLog, checked: ReadModel, state: dict[str, Any], kept: Any,
             on_progress: Callable[[int, int], None] | None,
             before: int | None) -> Verified | None:
    from logbook.verify.checked_reads import CheckedReads
    from logbook.verify.resume import StaleState, resume

    try:
        found = resume(store, checked, state, on_progress)
    except StaleState:
        return None  # checked in full instead
    result = found.result
    if any(f.check == "rollback" for f in result.findings) and before is not None \
            and before <= store.head()[0]:
        raise _CarriedPast
    if not result.ok and not any(f.check in ("rollback", "rewritten") for f in result.findings):
        # found with the copy's rows (its tree, its keys): made in full from the ledger alone,
        # which finds it again if it is the ledger's, and otherwise makes the copy anew
        return None
    _raise_on_findings(result)
    if result.entries > found.start and not checked.extend(
            found.start, found.index_rows, found.tree_rows, found.keys, found.shapes,
            found.facts, _state(result)) and (checked.state() or {}).get("size", 0) < \
            result.entries:
        return None  # the copy could not take the new rows: checked in full instead
    when = state.get("checked_at") or "an earlier check"
    reads = CheckedReads(store, checked, result.entries, result.head, str(when))
    entries = reads.kept(kept.kinds)
    return Verified(result.entries, result.head, result.ledger, result.entries - found.start,
                    0, entries, resumed=found.start, checked_at=str(when), reads=reads,
                    runs=reads)


@contextmanager
def verified(store: EntryLog, checked: ReadModel, keep: Iterable[str] = (),
             on_progress: Callable[[int, int], None] | None = None,
             runs: bool = False) -> Iterator[Verified]:
    """Check the ledger (``ledger.entry_log``), then keep its read transaction open for
    the caller's computation: whatever is appended meanwhile is neither checked nor read."""
    before = copy_size(checked)  # before the snapshot: see _CarriedPast
    with store.snapshot():
        yield check(store, checked, keep, on_progress, runs, before)
