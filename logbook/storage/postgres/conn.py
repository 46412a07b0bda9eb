"""Connecting to a PostgreSQL ledger, and the one-sentence errors (part of the PostgreSQL
store: storage/ is the only code that speaks SQL).

The URL goes to libpq as it is, so libpq's own ways to give a password work (``PGPASSWORD``,
``~/.pgpass``, ``PGSERVICE``); no message ever repeats it: a ledger is named by ``display``,
the URL without its password, and any text from the server or libpq has every password it
could hold replaced before it is shown.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any

from logbook import config
from logbook.errors import EnvironmentProblem

try:  # the optional extra logbook[postgres]
    import psycopg
    from psycopg import conninfo, errors
except ImportError:  # pragma: no cover - exercised only where the extra is not installed
    psycopg = None  # type: ignore[assignment]


CONNECT_TIMEOUT = 10  # seconds to reach the server before exit 3


def require_driver() -> None:
    if psycopg is None:  # pragma: no cover - the test extra installs psycopg
        raise EnvironmentProblem("a postgresql:// ledger needs psycopg: install "
                                 "logbook[postgres] (pip install 'logbook[postgres]')")


def _secrets(url: str) -> list[str]:
    found = [os.environ.get("PGPASSWORD") or ""]
    with contextlib.suppress(psycopg.ProgrammingError):
        found.append(str(conninfo.conninfo_to_dict(url).get("password") or ""))
    return [s for s in found if s]


def scrub(text: str, url: str) -> str:
    """``text`` with every password of ``url`` (and PGPASSWORD) replaced."""
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text


def display(url: str) -> str:
    """The ledger's name in messages: its URL without the password."""
    require_driver()
    try:
        parts: dict[str, Any] = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(a URL libpq cannot parse)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = str(parts.get("host") or "")
    if host.startswith("/"):  # a unix socket folder
        host = ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


def first_line(exc: BaseException, url: str) -> str:
    text = str(exc).strip().splitlines()
    # libpq's "FATAL:  the database system is shutting down": one sentence, single spaces
    return scrub(" ".join((text[0] if text else type(exc).__name__).split()), url).rstrip(".")


def _pipeline_noise(record: logging.LogRecord) -> bool:
    """False for psycopg's warning that a pipeline could not be closed on a lost connection:
    the error itself is what the command says, once (``problem``)."""
    return not str(record.msg).startswith("error ignored terminating")


# a dead client is noticed by the server within about 10 + 3 x 5 seconds (TCP keepalives),
# and its transaction rolled back, so that it holds the head's lock no longer than that
KEEPALIVES: dict[str, Any] = {"keepalives": 1, "keepalives_idle": 10,
                              "keepalives_interval": 5, "keepalives_count": 3}


def writer_options() -> str:
    """The server settings of a writer's session: a transaction left idle (a client stopped or
    killed mid-append, its connection still open) is ended by the server after the lock
    timeout, the longest any other writer waits for it; the server probes the client's
    connection as the client probes the server's (KEEPALIVES)."""
    return (f"-c idle_in_transaction_session_timeout={lock_wait_ms()} "
            "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3")


def connect(url: str, writer: bool = False) -> psycopg.Connection[Any]:
    """An autocommit connection (transactions are opened explicitly); exit 3 when the server
    cannot be reached or refuses us, and a bad URL is bad input (exit 2). A ``writer``'s
    session has the server end a transaction it leaves idle (writer_options)."""
    require_driver()
    quiet = logging.getLogger("psycopg")
    if _pipeline_noise not in quiet.filters:
        quiet.addFilter(_pipeline_noise)
    try:
        conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        from logbook.errors import InputError

        raise InputError("--ledger: the postgresql:// URL cannot be parsed by libpq") from None
    try:
        extra: dict[str, Any] = {"options": writer_options()} if writer else {}
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT,
                               application_name="logbook", **KEEPALIVES, **extra)
    except psycopg.Error as exc:
        raise EnvironmentProblem(f"ledger {display(url)} cannot be reached: "
                                 f"{first_line(exc, url)}") from None


def lock_wait_ms() -> int:
    """LOGBOOK_LOCK_TIMEOUT in milliseconds for SET LOCAL lock_timeout (0 would mean wait for
    ever to PostgreSQL, so 0 seconds is one millisecond: no wait)."""
    return max(1, round(config.lock_timeout() * 1000))


def problem(exc: BaseException, url: str) -> EnvironmentProblem | None:
    """The one-sentence EnvironmentProblem (exit 3) for a server-side failure, or None."""
    if psycopg is None:  # pragma: no cover
        return None
    where = display(url)
    if isinstance(exc, errors.LockNotAvailable | errors.QueryCanceled):
        return EnvironmentProblem(f"ledger {where} is locked by another writer past the "
                                  "timeout (LOGBOOK_LOCK_TIMEOUT); nothing was appended")
    if isinstance(exc, errors.InsufficientPrivilege):
        return EnvironmentProblem(f"ledger {where} refused the write: "
                                  f"{first_line(exc, url)} (see docs/team.md for the grants)")
    if isinstance(exc, errors.ReadOnlySqlTransaction):
        return EnvironmentProblem(f"ledger {where} cannot be written: {first_line(exc, url)}")
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return EnvironmentProblem(f"the connection to ledger {where} failed: "
                                  f"{first_line(exc, url)}; an append that printed no digest "
                                  "may or may not be kept (retry it with the same --once KEY)")
    return None
