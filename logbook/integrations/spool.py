"""How a harness integration appends a run, and the spool that keeps the runs it could not write
at all (docs/recording.md, "When the append fails: the spool").

A run reaches the ledger as a *record*: the harness output it came from (its source and path),
the run bodies already read from it (None: read again when appended), the plan and arm it was
recorded for, its session and declared (captured) apparatus. ``append_record`` appends one: the
Inspect AI hook and ``logbook.integrations.lm_eval.record`` call it at once, the spool when it
is drained, so a run ends the same way whichever appends it. A run the plan refuses (an unknown
plan or arm, another suite, metric or pinned value) is kept as an exploratory run whose note
says why (``logbook.ingest.appending.append_kept``); an output that cannot be read, or a record
the ledger refuses, is kept as a `failed` run saying why.

Only a run that could not be written at all (no ledger yet, a lock held past
LOGBOOK_LOCK_TIMEOUT, a full disk) goes to the spool: one JSON file in ``.logbook/spool/``, the
record and why it was spooled. Every writing command drains the spool after its own append,
keeping refused runs as above; `logbook append --spool` appends what it holds and leaves there
a run its plan refuses (or whose record cannot be read), naming why, unless ``--exploratory``.
Each spooled run is appended with its file's name as the ``--once`` key, so a spool drained
twice records each run once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logbook.errors import InputError, LogbookError

if TYPE_CHECKING:
    from logbook.analysis.brief_shapes import SpooledRun
    from logbook.crypto.signing import SigningKey
    from logbook.ingest.appending import Appended
    from logbook.ledger.entry import Entry
    from logbook.ledger.service import Ledger

SPOOL = "spool"
MAX_SPOOLED_BYTES = 64 * 1024 * 1024  # one run's record: bodies of a few million items
Say = Callable[[str], None]


def folder_for(ledger: str | None) -> Path:
    """The spool of the ledger named by ``ledger`` (or LOGBOOK_DIR, or found from here): its
    ``.logbook/spool``, also where the ledger is missing (``logbook init`` later finds it)."""
    from logbook import config
    from logbook.ledger.service import DB_NAME, LEDGER_DIR, find_db

    try:
        return find_db(Path(ledger) if ledger else None).parent / SPOOL
    except LogbookError:
        pass
    named = ledger or config.ledger_dir()
    base = Path(named).expanduser() if named else Path.cwd()
    if base.name == DB_NAME:
        return base.parent / SPOOL
    if base.name == LEDGER_DIR:
        return base / SPOOL
    return base / LEDGER_DIR / SPOOL


def folder_of(ledger: Ledger) -> Path:
    """The spool of an open ledger."""
    return ledger.path.parent / SPOOL


# -- appending one record ------------------------------------------------------------------
def _what(record: dict[str, Any]) -> str:
    path = record.get("path")
    return Path(str(path)).name if path else _text(record.get("what")) or "results"


def _read(record: dict[str, Any], metric: str | None, keep_refused: bool) -> list[Any]:
    """The record's run bodies: those it holds, else read from its output; an output that
    cannot be read is, with ``keep_refused``, one failed run saying why."""
    from logbook.ingest import adapter_for

    bodies = record.get("bodies")
    if isinstance(bodies, list):
        return bodies
    try:
        return adapter_for(str(record.get("source"))).read_runs(
            Path(str(record.get("path"))), metric=metric)
    except InputError as exc:
        if not keep_refused:
            raise
        return [{"status": "failed", "reason": f"{_what(record)} could not be read: {exc}"}]


def append_record(ledger: Ledger, key: SigningKey, record: dict[str, Any], *,
                  keep_refused: bool = True, once: str | None = None,
                  say: Say = lambda _message: None) -> Appended:
    """Append the runs of one record. With ``keep_refused`` (what a harness integration does:
    nobody is there to offer the run again), a run the plan refuses is appended exploratory,
    saying why, and one the ledger refuses otherwise as a `failed` run saying why; without it,
    they raise InputError (`append --spool`). A run already in the ledger raises
    AlreadyRecorded either way."""
    from logbook.ingest.appending import Labels, append_kept, append_output
    from logbook.ledger.intake import AlreadyRecorded

    if "drafts" in record:  # a `logbook run` whose append failed: its drafts, ready
        return _append_drafts(ledger, key, record, keep_refused, once, say)
    labels = Labels(*record.get("labels") or ("plan", "arm"))
    what = _what(record)
    common: dict[str, Any] = {
        "plan": record.get("plan"), "arm": record.get("arm"),
        "declared": record.get("declared") or {}, "session": record.get("session"),
        "once": once, "labels": labels, "what": what}
    source = str(record.get("source"))
    if not keep_refused:
        return append_output(ledger, key, source,
                             lambda metric: _read(record, metric, False), **common)
    try:
        return append_kept(ledger, key, source, lambda metric: _read(record, metric, True),
                           say=say, **common)
    except AlreadyRecorded:
        raise
    except InputError as exc:  # a run that happened is never lost: kept as failed, saying why
        failed = {"status": "failed", "reason": f"its record was refused: {exc}"}
        say(f"the run of {what} is kept as a failed run: its record was refused ({exc})")
        return append_kept(ledger, key, source, lambda _metric: [failed], say=say, **common)


def _drafts(record: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """A spooled command run's drafts and fallback run, their shapes checked (the file may
    have been edited)."""
    drafts, fallback = record.get("drafts"), record.get("fallback")
    if (not isinstance(drafts, list) or not drafts or not isinstance(fallback, dict)
            or not all(isinstance(d, list) and len(d) == 2 and isinstance(d[0], str)
                       and isinstance(d[1], dict) for d in drafts)):
        raise InputError("its drafts must be a non-empty list of [kind, body] pairs, with "
                         "its fallback run an object")
    return [(kind, body) for kind, body in drafts], fallback


def _append_drafts(ledger: Ledger, key: SigningKey, record: dict[str, Any],
                   keep_refused: bool, once: str | None, say: Say) -> Appended:
    """Append a spooled `logbook run`: its drafts were routed and scrubbed when it ran. With
    ``keep_refused`` they are admitted as the run would have admitted them (a run its plan
    refuses kept exploratory, one the ledger refuses kept as the failed fallback run);
    without, all of them or none (InputError: the file stays)."""
    from logbook.ingest import routing
    from logbook.ingest.appending import Appended

    drafts, fallback = _drafts(record)
    plan = record.get("plan")
    if not keep_refused:
        return Appended(ledger.append_many(drafts, key, once=once), None)
    entries, _code, _routed = routing.admit(ledger, drafts, key, 0, dict(fallback), [],
                                           str(plan) if plan else None, say, once=once)
    return Appended(entries, None)


# -- the spool -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Kept:
    """Where a run was spooled (None when not even that could be written) and its text."""

    path: Path | None
    text: str


def keep(folder: Path, record: dict[str, Any], why: str) -> Kept:
    """Write one run's record into the spool ``folder`` (created, private) as a new file,
    with when and ``why`` it was spooled."""
    from datetime import UTC, datetime

    import orjson

    from logbook.files import write_new
    from logbook.ledger.entry import now_rfc3339

    text = orjson.dumps({**record, "spooled_at": now_rfc3339(),
                         "spooled_because": why}).decode() + "\n"
    now = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{now}-{os.getpid()}.json"
    try:
        write_new(path, text, "spooled run", parents=True)
    except (LogbookError, OSError):
        return Kept(None, text)
    return Kept(path, text)


def pending(folder: Path) -> list[Path]:
    """The spooled runs, oldest first."""
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    except OSError:
        return []


class Gone(InputError):
    """The spooled run's file is no longer there: another writer appended it meanwhile."""


def load(path: Path) -> dict[str, Any]:
    """One spooled record; InputError when it cannot be read (Gone when it is not there)."""
    import orjson

    from logbook.limits import loads_bounded
    from logbook.reading import read_bytes

    try:
        record = loads_bounded(read_bytes(path, "spooled run", limit=MAX_SPOOLED_BYTES,
                                          missing=Gone))
    except orjson.JSONDecodeError as exc:
        raise InputError(f"spooled run {path} is not JSON ({exc})") from None
    except OSError as exc:
        raise InputError(f"spooled run {path} cannot be read ({exc})") from None
    if not isinstance(record, dict):
        raise InputError(f"spooled run {path} is not a JSON object")
    return record


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def listing(folder: Path) -> list[SpooledRun]:
    """What the spool holds, oldest first: each run's file, when it was spooled, its harness
    output, plan and arm, and why it was spooled."""
    from datetime import UTC, datetime

    from logbook.analysis.brief_shapes import SpooledRun

    rows = []
    for path in pending(folder):
        try:
            record = load(path)
        except Gone:
            continue
        except (LogbookError, OSError) as exc:
            rows.append(SpooledRun(file=path.name, spooled_at=None, source=None, output=None,
                                   runs=None, plan=None, arm=None, why=str(exc)))
            continue
        when = _text(record.get("spooled_at"))
        if when is None:  # spooled before the record said when: the file's time
            try:
                when = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime(
                    "%Y-%m-%dT%H:%M:%S.%fZ")
            except OSError:
                when = None
        bodies = record.get("bodies", record.get("drafts"))
        rows.append(SpooledRun(
            file=path.name, spooled_at=when, source=_text(record.get("source")),
            output=(_text(record.get("path")) or _text(record.get("what"))
                    or "simple_evaluate results"),
            runs=len(bodies) if isinstance(bodies, list) else None,
            plan=_text(record.get("plan")), arm=_text(record.get("arm")),
            why=_text(record.get("spooled_because")) or "not said"))
    return rows


def append_one(ledger: Ledger, key: SigningKey, path: Path, *, keep_refused: bool = True,
               say: Say = lambda _message: None) -> list[Entry]:
    """Append one spooled run and remove its file; an InputError when the ledger refuses it
    or its record cannot be read (the file stays)."""
    from logbook.ledger.intake import AlreadyRecorded

    record = load(path)
    try:
        done = append_record(ledger, key, record, keep_refused=keep_refused,
                             once=f"spool:{path.name}", say=say)
    except AlreadyRecorded:
        path.unlink(missing_ok=True)  # its output is in the ledger already: nothing is lost
        raise
    path.unlink(missing_ok=True)  # another writer draining the spool may have removed it
    return done.entries


@dataclass(frozen=True)
class Drained:
    """What a drain appended, and the spooled runs it left (each file and why)."""

    entries: list[Entry]
    left: list[tuple[Path, str]]


def drain(ledger: Ledger, key: SigningKey, say: Say, *,
          keep_refused: bool = True) -> Drained:
    """Append every run in this ledger's spool, saying what each became. With
    ``keep_refused`` (a writing command draining in passing), a run the plan refuses ends as
    an exploratory run, as its integration would have appended it; without (`append
    --spool`), it stays in the spool, and why is said and returned."""
    from logbook.ledger.intake import AlreadyRecorded

    appended: list[Entry] = []
    left: list[tuple[Path, str]] = []
    for path in pending(folder_of(ledger)):
        try:
            entries = append_one(ledger, key, path, keep_refused=keep_refused, say=say)
        except Gone:
            continue
        except AlreadyRecorded as exc:
            say(f"spooled run {path.name} was already in the ledger: {exc}")
            continue
        except InputError as exc:
            left.append((path, str(exc)))
            say(f"spooled run {path} stays in the spool: {exc}")
            continue
        if entries and all(e.earlier for e in entries):
            say(f"spooled run {path.name} was already appended by another writer "
                f"(@{entries[0].seq}); its file is removed")
            continue
        appended.extend(entries)
        for e in entries:
            say(f"appended run @{e.seq} {e.digest} ({e.body.get('status')}) from the spool "
                f"({path.name})")
    return Drained(appended, left)
