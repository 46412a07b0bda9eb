"""Recording one Inspect AI log from inside Inspect: what the hook (inspect_hooks) calls when a
task ends (docs/recording.md, "Recording from inside Inspect AI").

The log is read by the same adapter as `logbook append --from inspect` and appended through the
same path (``logbook.ingest.appending``), with what capture adds (git, packages, the command
line, the machine). Whatever fails on the way (a missing ledger, a lock held past
LOGBOOK_LOCK_TIMEOUT, a full disk, a log the adapter refuses) the run goes to the spool beside
the ledger, which the next writing command appends; before its own append the hook appends
what an earlier one spooled.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logbook.errors import LogbookError
from logbook.integrations import spool
from logbook.integrations.switch import Recording

SOURCE = "inspect"


def say(message: str) -> None:
    """One line on stderr, as logbook says things."""
    print(f"logbook: {message}", file=sys.stderr, flush=True)


def _read(path: Path) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The log's run bodies, or None and why they could not be read."""
    from logbook.ingest import adapter_for

    try:
        return adapter_for(SOURCE).read_runs(path), None
    except LogbookError as exc:
        return None, str(exc)


def _captured(argv: list[str], ledger: str | None) -> dict[str, Any]:
    from logbook.capture.apparatus import capture

    ignore = spool.folder_for(ledger).parent
    return capture(argv, Path.cwd(), ignore=ignore)


def record_log(location: str, recording: Recording, argv: list[str],
               tell: Callable[[str], None] = say) -> list[Any]:
    """Append the runs of the Inspect log at ``location`` to the ledger ``recording`` names
    (the entries appended, this log's and the spool's), or spool it, saying which."""
    from logbook import config
    from logbook.ingest.appending import Labels, append_output
    from logbook.ledger.intake import AlreadyRecorded

    path = Path(location).absolute()
    bodies, unreadable = _read(path)
    declared = {"captured": _captured(argv, recording.ledger)}
    session = config.session()
    labels = Labels("LOGBOOK_PLAN", "LOGBOOK_ARM")
    try:
        from logbook.crypto.signing import load_key
        from logbook.ledger.service import Ledger

        with Ledger.open(recording.ledger, write=True) as ledger:
            key = load_key()
            earlier = spool.drain(ledger, key, tell)
            if bodies is None:
                raise LogbookError(unreadable)
            done = append_output(ledger, key, SOURCE, lambda _metric: bodies,
                                 plan=recording.plan, arm=recording.arm, declared=declared,
                                 session=session, labels=labels, what=str(path))
    except AlreadyRecorded as exc:
        tell(str(exc))
        return []
    except BaseException as exc:
        _spool(path, bodies, recording, declared, session, exc, tell)
        if isinstance(exc, LogbookError | OSError):
            return []
        raise  # a bug: Inspect logs it with its traceback; the run is in the spool
    for e in done.entries:
        tell(f"appended run @{e.seq} {e.digest} ({e.body.get('status')}) from {path.name}")
    return earlier + done.entries


def _spool(path: Path, bodies: list[dict[str, Any]] | None, recording: Recording,
           declared: dict[str, Any], session: str | None, exc: BaseException,
           tell: Callable[[str], None]) -> None:
    why = " ".join(str(exc).split()) or type(exc).__name__
    record = {"source": SOURCE, "path": str(path), "bodies": bodies, "plan": recording.plan,
              "arm": recording.arm, "session": session, "declared": declared,
              "spooled_because": why, "switched_on_by": recording.by}
    kept = spool.keep(spool.folder_for(recording.ledger), record)
    if kept.path is None:
        tell(f"the run of {path.name} could not be appended ({why}) nor spooled; its record "
             "follows: save it as a .json file in the ledger's .logbook/spool/ folder, and "
             "the next writing command appends it")
        sys.stderr.write(kept.text)
        return
    tell(f"the run of {path.name} could not be appended ({why}); it is spooled in "
         f"{kept.path}: the next writing command (`logbook run`, `logbook append --from`, a "
         "hooked run) appends it")
