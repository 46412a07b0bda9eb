"""Recording one Inspect AI log from inside Inspect: what the hook (inspect_hooks) calls when a
task ends (docs/recording.md, "Recording from inside Inspect AI").

The log is read by the same adapter as `logbook append --from inspect` and appended through the
same path (``logbook.integrations.spool.append_record``), with what capture adds (git, packages,
the command line, the machine). Every run the hook sees ends in an entry: a run the plan refuses
(an unknown plan or arm, another suite, metric or pinned value) is appended as an exploratory
run whose note says why, as under `logbook run`; a log the adapter refuses is a `failed` run
saying why. Only a run that cannot be written at all (a missing ledger, a lock held past
LOGBOOK_LOCK_TIMEOUT, a full disk) goes to the spool beside the ledger, which the next writing
command appends; before its own append the hook appends what an earlier one spooled.
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
LABELS = ("LOGBOOK_PLAN", "LOGBOOK_ARM")


def say(message: str) -> None:
    """One line on stderr, as logbook says things."""
    print(f"logbook: {message}", file=sys.stderr, flush=True)


def _read(path: Path) -> list[dict[str, Any]] | None:
    """The log's run bodies, or None when they could not be read (read again, and the
    refusal kept as a failed run, when the record is appended)."""
    from logbook.ingest import adapter_for

    try:
        return adapter_for(SOURCE).read_runs(path)
    except LogbookError:
        return None


def _captured(argv: list[str], ledger: str | None) -> dict[str, Any]:
    from logbook.capture.apparatus import capture

    ignore = spool.folder_for(ledger).parent
    return capture(argv, Path.cwd(), ignore=ignore)


def record_log(location: str, recording: Recording, argv: list[str],
               tell: Callable[[str], None] = say) -> list[Any]:
    """Append the runs of the Inspect log at ``location`` to the ledger ``recording`` names
    (the entries appended, the spool's and this log's), or spool it, saying which."""
    from logbook import config
    from logbook.ledger.intake import AlreadyRecorded

    path = Path(location).absolute()
    record = {"source": SOURCE, "path": str(path), "bodies": _read(path),
              "plan": recording.plan, "arm": recording.arm, "labels": list(LABELS),
              "session": config.session(),
              "declared": {"captured": _captured(argv, recording.ledger)},
              "switched_on_by": recording.by}
    earlier: list[Any] = []
    try:
        from logbook.crypto.signing import load_key
        from logbook.ledger.service import Ledger

        with Ledger.open(recording.ledger, write=True) as ledger:
            key = load_key()
            earlier = spool.drain(ledger, key, tell).entries
            done = spool.append_record(ledger, key, record, say=tell)
    except AlreadyRecorded as exc:
        tell(str(exc))
        return earlier
    except BaseException as exc:
        _spool(path, record, recording, exc, tell)
        if isinstance(exc, LogbookError | OSError):
            return earlier
        raise  # a bug: Inspect logs it with its traceback; the run is in the spool
    for e in done.entries:
        tell(f"appended run @{e.seq} {e.digest} ({e.body.get('status')}) from {path.name}")
    return earlier + done.entries


def _spool(path: Path, record: dict[str, Any], recording: Recording, exc: BaseException,
           tell: Callable[[str], None]) -> None:
    why = " ".join(str(exc).split()) or type(exc).__name__
    kept = spool.keep(spool.folder_for(recording.ledger), record, why)
    if kept.path is None:
        tell(f"the run of {path.name} could not be appended ({why}) nor spooled; its record "
             "follows: save it as a .json file in the ledger's .logbook/spool/ folder, and "
             "the next writing command appends it")
        sys.stderr.write(kept.text)
        return
    tell(f"the run of {path.name} could not be appended ({why}); it is spooled in "
         f"{kept.path}: the next writing command (`logbook run`, `logbook append --from`, "
         "`logbook append --spool`, a hooked run) appends it; `logbook spool list` shows it")
