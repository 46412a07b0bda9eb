"""The spool: runs a harness integration could not append (no ledger, a lock held too long, a
full disk), kept beside the ledger until a writing command appends them (docs/recording.md,
"When the append fails: the spool").

A spooled run is one JSON file in ``.logbook/spool/``: the harness output it came from (its
source and path), the run bodies already read from it (None when even reading failed), the
plan and arm it was recorded for, its session and captured apparatus, and why it was spooled.
Draining appends each through the same path as `append --from`
(``logbook.ingest.appending``), with the file's name as the ``--once`` key, so a spool drained
twice records each run once; a spooled run the ledger still refuses stays in the spool.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logbook.errors import InputError, LogbookError

if TYPE_CHECKING:
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.entry import Entry
    from logbook.ledger.service import Ledger

SPOOL = "spool"
MAX_SPOOLED_BYTES = 64 * 1024 * 1024  # one run's record: bodies of a few million items


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


@dataclass(frozen=True)
class Kept:
    """Where a run was spooled (None when not even that could be written) and its text."""

    path: Path | None
    text: str


def keep(folder: Path, record: dict[str, Any]) -> Kept:
    """Write one run's record into the spool ``folder`` (created, private) as a new file."""
    import orjson

    from logbook.capture.recovery import now_stamp
    from logbook.files import write_new

    text = orjson.dumps(record).decode() + "\n"
    path = folder / f"{now_stamp()}-{os.getpid()}.json"
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


def _bodies(record: dict[str, Any], metric: str | None) -> list[dict[str, Any]]:
    from logbook.ingest import adapter_for

    bodies = record.get("bodies")
    if isinstance(bodies, list):
        return bodies
    return adapter_for(str(record.get("source"))).read_runs(Path(str(record.get("path"))),
                                                            metric=metric)


def append_one(ledger: Ledger, key: SigningKey, path: Path) -> list[Entry]:
    """Append one spooled run and remove its file; an InputError when the ledger refuses it
    (the file stays)."""
    import orjson

    from logbook.ingest.appending import Labels, append_output
    from logbook.ledger.intake import AlreadyRecorded
    from logbook.reading import read_bytes

    try:
        record = orjson.loads(read_bytes(path, "spooled run", limit=MAX_SPOOLED_BYTES))
    except orjson.JSONDecodeError as exc:
        raise InputError(f"spooled run {path} is not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise InputError(f"spooled run {path} is not a JSON object")
    try:
        done = append_output(ledger, key, str(record.get("source")),
                             lambda metric: _bodies(record, metric),
                             plan=record.get("plan"), arm=record.get("arm"),
                             declared=record.get("declared") or {},
                             session=record.get("session"), once=f"spool:{path.name}",
                             labels=Labels("plan", "arm"), what=f"spooled run {path.name}")
    except AlreadyRecorded:
        path.unlink()  # its output is in the ledger already: nothing is lost
        raise
    path.unlink()
    return done.entries


def drain(ledger: Ledger, key: SigningKey, say: Callable[[str], None]) -> list[Entry]:
    """Append every run in this ledger's spool, saying what each became."""
    appended: list[Entry] = []
    for path in pending(ledger.path.parent / SPOOL):
        try:
            entries = append_one(ledger, key, path)
        except InputError as exc:
            say(f"spooled run {path} not appended: {exc}")
            continue
        appended.extend(entries)
        for e in entries:
            say(f"appended run @{e.seq} {e.digest} ({e.body.get('status')}) from the spool "
                f"({path.name})")
    return appended
