"""lm-evaluation-harness from Python: ``record(results, plan=..., arm=..., ledger=...)`` appends
the runs of the dictionary ``lm_eval.simple_evaluate`` returns (docs/recording.md, "From Python
with lm-eval").

lm-eval has no plugin interface, so this is the one call a ``simple_evaluate`` user adds. The
dictionary is read by the lm-eval adapter (``runs_from_results``: the same per-task runs,
apparatus and checks as its results file) and appended as the Inspect AI hook appends a log
(``logbook.integrations.spool.append_record``), with what capture adds: a run the plan refuses
is kept as an exploratory run saying why. When the ledger cannot be written at all (missing,
locked, a full disk), the runs are spooled beside it for the next writing command, and the
error is raised all the same.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logbook.errors import LogbookError
from logbook.integrations import spool

if TYPE_CHECKING:
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.entry import Entry

SOURCE = "lm-eval"


def _say(message: str) -> None:
    print(f"logbook: {message}", file=sys.stderr, flush=True)


def record(results: Any, *, plan: str | None = None, arm: str | None = None,
           ledger: str | Path | None = None, session: str | None = None,
           apparatus: dict[str, Any] | None = None, metric: str | None = None,
           key: SigningKey | None = None) -> list[Entry]:
    """Append one run per task of ``results`` (``simple_evaluate(..., log_samples=True)``'s
    return value) to the ledger at ``ledger`` (default: LOGBOOK_DIR, else found from the
    working folder, as every command finds it): with ``plan`` and ``arm``, the run of the
    plan's suite goes to the arm and the others are exploratory. ``apparatus`` is what only
    you know (engine build, flags as applied), merged over what the results say; ``metric``
    names the primary metric (``acc`` or ``acc,filter``) instead of each task's first.

    All runs or none; the entries are returned. A result that is not lm-eval's raises
    InputError and nothing is written. The runs have happened, so none is ever lost: a run the
    plan refuses (an unknown plan or arm, another suite, metric or pinned value) is appended as
    an exploratory run whose note says why (said on stderr), as the Inspect AI hook keeps it;
    when the ledger cannot be written at all (missing, locked, a full disk) the runs are
    spooled beside it for the next writing command, and the error is raised all the same."""
    from logbook import config
    from logbook.capture.apparatus import capture
    from logbook.errors import InputError
    from logbook.ingest.lm_eval import runs_from_results

    where = None if ledger is None else str(ledger)
    bodies = runs_from_results(results, metric=metric)  # a bad result: refused, not spooled
    if apparatus is not None and "captured" in apparatus:
        raise InputError("apparatus: the key 'captured' is reserved for what logbook "
                         "captures itself")
    declared = {**(apparatus or {}),
                "captured": capture(sys.argv, Path.cwd(), ignore=spool.folder_for(where).parent)}
    record = {"source": SOURCE, "path": None, "bodies": bodies, "plan": plan, "arm": arm,
              "session": session or config.session(), "declared": declared,
              "switched_on_by": "record()"}
    try:
        from logbook.crypto.signing import load_key
        from logbook.ledger.service import Ledger

        with Ledger.open(where, write=True) as opened:
            signer = key or load_key()
            done = spool.append_record(opened, signer, record, say=_say)
            spool.drain(opened, signer, _say)
    except InputError:
        raise  # already in the ledger: nothing to keep for later
    except (LogbookError, OSError) as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        kept = spool.keep(spool.folder_for(where), record, why)
        if kept.path is not None:
            _say(f"the runs could not be appended ({why}); they are spooled in {kept.path}: "
                 "the next writing command (`logbook run`, `logbook append --from`, "
                 "`logbook append --spool`, a hooked run) appends them")
        raise
    return done.entries
