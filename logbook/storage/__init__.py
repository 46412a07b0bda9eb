"""Ledger stores: ``open_store`` picks the backend from the locator (DESIGN §3, §10).

A path is an SQLite database (logbook.storage.sqlite, the embedded default); a
``postgresql://`` URL names the team mode's server, which is not supported yet; any other
``scheme://`` is refused. What every backend offers is logbook.storage.base.Store.
"""

from __future__ import annotations

import re
from pathlib import Path

from logbook.errors import InputError
from logbook.storage.base import Store

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_POSTGRES = ("postgresql", "postgres")


def is_url(locator: str | Path) -> bool:
    """Whether ``locator`` is a ``scheme://`` URL rather than a path."""
    return isinstance(locator, str) and _SCHEME.match(locator) is not None


def open_store(locator: str | Path, write: bool = False, create: bool = False) -> Store:
    """The store at ``locator``: read-only unless ``write``; ``create`` makes a new one (and
    refuses one that exists). InputError (exit 2) for a URL no backend serves."""
    if isinstance(locator, str):
        match = _SCHEME.match(locator)
        if match is not None:
            scheme = match.group(1).lower()
            # the URL itself is not repeated: it may carry a password
            if scheme in _POSTGRES:
                raise InputError(f"{scheme}:// ledgers (PostgreSQL) are not supported yet; "
                                 "name a ledger folder or its ledger.db file")
            raise InputError(f"{scheme}:// is not a kind of ledger logbook knows; name a "
                             "ledger folder or its ledger.db file")
    from logbook.storage.sqlite.store import SQLiteStore

    path = Path(locator)
    if create:
        return SQLiteStore.create(path)
    return SQLiteStore.open_write(path) if write else SQLiteStore.open_read(path)
