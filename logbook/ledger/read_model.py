"""Where this machine keeps its checked copy of a ledger (logbook.storage.sqlite.read_model), and
opening it: one file per ledger and place, under the state folder (logbook.config.state_dir),
whatever the ledger's size: every analysis after the first reads through it
(docs/auditing.md §7)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logbook import config
from logbook.errors import LogbookError

if TYPE_CHECKING:  # the command line imports this module at its start: nothing heavy
    from logbook.ledger.service import Ledger
    from logbook.storage.sqlite.read_model import ReadModel

# what the analysis read model (logbook.analysis.view) reads whole: kept by the check as it
# reads them, so they are parsed once and come from the very bytes just checked
ANALYSED_KINDS = ("plan", "run", "amendment", "retraction", "claim", "band")
# what the audit reads whole: its rules read the runs through their facts (format.runfacts)
AUDITED_KINDS = tuple(k for k in ANALYSED_KINDS if k != "run")


def open_checked_copy(ledger: Ledger) -> ReadModel:
    """The checked copy of ``ledger`` to carry the check on from and read through: the file
    under the state folder, or one in memory for this command when LOGBOOK_STATE_DIR is
    "off" or no file can be kept (the check is then made in full, and the analysis reads the
    rows it compared through the copy all the same: docs/auditing.md §7)."""
    import hashlib

    from logbook.storage import is_url
    from logbook.storage.sqlite.read_model import ReadModel

    folder = config.state_dir()
    if folder is None:
        return ReadModel.in_memory()
    try:
        uuid = ledger.uuid
    except LogbookError:  # no readable genesis: the full check says what is wrong
        return ReadModel.in_memory()
    place = ledger.location
    if not is_url(place):  # a file is one place whichever folder the command runs in
        place = str(Path(place).resolve())
    where = hashlib.sha256(place.encode()).hexdigest()[:16]
    found = ReadModel.open(folder / "checked" / f"{uuid}-{where}.db")
    return found if found is not None else ReadModel.in_memory()


@contextmanager
def checked_reading(ledger: Any, keep: tuple[str, ...] = (),
                    on_progress: Callable[[int, int], None] | None = None,
                    runs: bool = False) -> Iterator[Any]:
    """The ledger checked (logbook.verify.integrity, carried on from this machine's checked
    copy when it has one), and read, until the block ends, from what was checked: the same
    read transaction, the ``keep`` kinds as the check parsed them, and after a resumed check
    the checked index (logbook.verify.checked_reads). Yields what was verified."""
    from logbook.verify.integrity import verified

    with ExitStack() as stack:
        copy = stack.enter_context(checked_copy_of(ledger))
        checked = stack.enter_context(verified(ledger.entry_log, copy, keep, on_progress,
                                               runs))
        stack.enter_context(ledger.reading_checked(checked.kept, checked.reads))
        yield checked


@contextmanager
def checked_copy_of(ledger: Any) -> Iterator[Any]:
    """This machine's checked copy of the ledger (open_checked_copy), closed afterwards."""
    copy = open_checked_copy(ledger)
    try:
        yield copy
    finally:
        copy.close()
