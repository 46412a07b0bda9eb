"""Ledger stores: ``open_store`` picks the backend from the locator (DESIGN §3, §10).

A path is an SQLite database (logbook.storage.sqlite, the embedded default); a
``postgresql://`` (or ``postgres://``) URL is a team ledger on PostgreSQL
(logbook.storage.postgres, the optional extra ``logbook[postgres]``); any other ``scheme://``
is refused. What every backend offers is logbook.storage.base.EntryLog.
"""

from __future__ import annotations

import re
from pathlib import Path

from logbook.errors import InputError
from logbook.storage.base import EntryLog

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_POSTGRES = ("postgresql", "postgres")


def is_url(locator: str | Path) -> bool:
    """Whether ``locator`` is a ``scheme://`` URL rather than a path."""
    return isinstance(locator, str) and _SCHEME.match(locator) is not None


def _postgres_url(locator: str | Path) -> str | None:
    """The locator when it names a PostgreSQL ledger; InputError (exit 2) for a URL no backend
    serves (the URL itself is not repeated: it may carry a password)."""
    if not isinstance(locator, str):
        return None
    match = _SCHEME.match(locator)
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme not in _POSTGRES:
        raise InputError(f"{scheme}:// is not a kind of ledger logbook knows; name a ledger "
                         "folder, its ledger.db file or a postgresql:// URL")
    return locator


def describe(locator: str | Path) -> str:
    """The locator as messages may show it: a URL without its password."""
    url = _postgres_url(locator)
    if url is None:
        return str(locator)
    from logbook.storage.postgres.conn import display

    return display(url)


def open_store(locator: str | Path, write: bool = False, create: bool = False) -> EntryLog:
    """The store at ``locator``: read-only unless ``write``; ``create`` makes a new one (and
    refuses one that exists). InputError (exit 2) for a URL no backend serves."""
    url = _postgres_url(locator)
    if url is not None:
        from logbook.storage.postgres.conn import require_driver

        require_driver()
        from logbook.storage.postgres.store import PostgresStore

        if create:
            return PostgresStore.create(url)
        return PostgresStore.open_write(url) if write else PostgresStore.open_read(url)
    from logbook.storage.sqlite.store import SQLiteStore

    path = Path(locator)
    if create:
        return SQLiteStore.create(path)
    return SQLiteStore.open_write(path) if write else SQLiteStore.open_read(path)
