"""Where this machine keeps its checked copy of a ledger (logbook.storage.sqlite.checked_copy), and
opening it: one file per ledger and place, under the state folder (logbook.config.state_dir),
whatever the ledger's size: every analysis after the first reads through it
(docs/auditing.md §7)."""

from __future__ import annotations

import hashlib

from logbook import config
from logbook.errors import LogbookError
from logbook.ledger.service import Ledger
from logbook.storage.base import CheckedCopy


def open_checked_copy(ledger: Ledger) -> CheckedCopy | None:
    """The checked copy of ``ledger`` to carry the check on from; None when LOGBOOK_STATE_DIR
    is "off", or when no copy can be kept (the check is then made in full)."""
    from logbook.storage.sqlite.checked_copy import CheckedIndex

    folder = config.state_dir()
    if folder is None:
        return None
    try:
        uuid = ledger.uuid
    except LogbookError:  # no readable genesis: the full check says what is wrong
        return None
    where = hashlib.sha256(ledger.location.encode()).hexdigest()[:16]
    return CheckedIndex.open(folder / "checked" / f"{uuid}-{where}.db")
