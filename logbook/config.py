"""Every ``LOGBOOK_*`` environment variable, read here and nowhere else (DESIGN §3).

Each value is read when a command asks for it (once per command), so that a process that sets
one for itself (the demo, a test) is seen; its name, meaning, default and bounds are written
here once, and a bad value is one sentence naming the variable (exit 2). The table below is
the one list: the README and docs/ name every variable, and tests/test_docs.py holds the docs
and this table to each other.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from logbook.errors import InputError

VARIABLES: dict[str, str] = {
    "LOGBOOK_DIR": "the ledger (a folder, its .logbook folder or the ledger.db file), when "
                   "--ledger is not given",
    "LOGBOOK_KEY": "the signing key file (default $XDG_CONFIG_HOME/logbook/keys/default.key)",
    "LOGBOOK_SESSION": "the session recorded on runs that name none",
    "LOGBOOK_DEBUG": "1 prints the traceback of a user error, as --debug does",
    "LOGBOOK_LOCK_TIMEOUT": "seconds a writer waits for the ledger's lock (default 30)",
    "LOGBOOK_MAX_INPUT_BYTES": "the most bytes read from a file or stream named on the command "
                               "line (default 256 MiB)",
    "LOGBOOK_READ_TIMEOUT": "seconds a FIFO or device may send nothing before it is refused "
                            "(default 30)",
    "LOGBOOK_DEADLINE": "seconds one command may run while it waits on servers, FIFOs and "
                        "devices: a wait that would end past it is cut (default 600)",
    "LOGBOOK_REQUEST_DEADLINE": "seconds a client of `logbook serve` or `logbook witness "
                                "serve` has to send a whole request (default 10)",
    "LOGBOOK_PLAN": "inside a harness (the Inspect AI hook): the plan the runs belong to",
    "LOGBOOK_ARM": "inside a harness: the plan's arm the runs measure",
    "LOGBOOK_RECORD": "inside a harness: 1 records runs even with no plan (exploratory runs)",
    "LOGBOOK_STATE_DIR": "where this machine keeps what it has checked of each ledger, so that "
                         "an analysis checks only what was appended since (default "
                         "$XDG_STATE_HOME/logbook, else ~/.local/state/logbook); off keeps "
                         "nothing and checks every ledger in full each time",
    "LOGBOOK_WRAPPED": "set by `logbook run` for the command it runs: 1 tells a harness's "
                       "logbook hook that `logbook run` records the run itself",
}

DEFAULT_LOCK_TIMEOUT = 30.0
MAX_LOCK_WAIT = 86_400.0  # a day: longer is a typo (and SQLite needs a finite wait)
DEFAULT_MAX_INPUT = 256 * 1024 * 1024
DEFAULT_READ_TIMEOUT = 30.0
DEFAULT_DEADLINE = 600.0
DEFAULT_REQUEST_DEADLINE = 10.0
# when the running command started (`start_command`); None in a process that runs no
# command (logbook used as a library, the Inspect hook inside a harness): no deadline counts
_STARTED: list[float | None] = [None]


def _get(name: str) -> str | None:
    assert name in VARIABLES, name  # a variable read here is documented here
    return os.environ.get(name)


def _number(name: str, default: float, low: float, high: float, unit: str = "",
            blank_is_default: bool = True) -> float:
    text = _get(name)
    if text is None or (blank_is_default and not text.strip()):
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not low <= value <= high:
        raise InputError(f"{name}={text!r} must be a number{unit} from {low:g} to {high:g}")
    return value


def state_dir() -> Path | None:
    """LOGBOOK_STATE_DIR, else $XDG_STATE_HOME/logbook, else ~/.local/state/logbook; None for
    "off"."""
    named = (_get("LOGBOOK_STATE_DIR") or "").strip()
    if named.lower() == "off":
        return None
    if named:
        return Path(named).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".local" / "state") / "logbook"


def ledger_dir() -> str | None:
    """LOGBOOK_DIR as given (None when unset or empty)."""
    return _get("LOGBOOK_DIR") or None


def key_setting() -> str | None:
    """LOGBOOK_KEY as given: None when unset, "" when set empty (the default key is used)."""
    return _get("LOGBOOK_KEY")


def key_path() -> Path:
    """The signing key's file: LOGBOOK_KEY, else the user's default key."""
    named = key_setting()
    if named:
        return Path(named)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "logbook" / "keys" / "default.key"


def session() -> str | None:
    return _get("LOGBOOK_SESSION") or None


def harness_plan() -> str | None:
    """LOGBOOK_PLAN (None when unset or empty)."""
    return _get("LOGBOOK_PLAN") or None


def harness_arm() -> str | None:
    """LOGBOOK_ARM (None when unset or empty)."""
    return _get("LOGBOOK_ARM") or None


def record_exploratory() -> bool:
    """LOGBOOK_RECORD=1."""
    return _get("LOGBOOK_RECORD") == "1"


def wrapped_by_logbook_run() -> bool:
    """LOGBOOK_WRAPPED=1: this process is a command `logbook run` runs (and records)."""
    return _get("LOGBOOK_WRAPPED") == "1"


def wrapped_marker() -> dict[str, str]:
    """What `logbook run` adds to its command's environment."""
    return {"LOGBOOK_WRAPPED": "1"}


def debug() -> bool:
    return _get("LOGBOOK_DEBUG") == "1"


def lock_timeout() -> float:
    """LOGBOOK_LOCK_TIMEOUT: seconds, 0 to a day (default 30; set but blank is refused)."""
    return _number("LOGBOOK_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT, 0.0, MAX_LOCK_WAIT,
                   " of seconds", blank_is_default=False)


def max_input_bytes() -> int:
    """LOGBOOK_MAX_INPUT_BYTES (default 256 MiB)."""
    return int(_number("LOGBOOK_MAX_INPUT_BYTES", DEFAULT_MAX_INPUT, 1, 2**62))


def read_timeout() -> float:
    """LOGBOOK_READ_TIMEOUT: seconds (default 30)."""
    return _number("LOGBOOK_READ_TIMEOUT", DEFAULT_READ_TIMEOUT, 0.001, 86400)


def start_command() -> None:
    """The command starts now: LOGBOOK_DEADLINE counts from here (`logbook.cli.main.run`)."""
    _STARTED[0] = time.monotonic()


def deadline() -> float:
    """LOGBOOK_DEADLINE: seconds (default 600)."""
    return _number("LOGBOOK_DEADLINE", DEFAULT_DEADLINE, 0.001, 7 * 86400, " of seconds")


def request_deadline() -> float:
    """LOGBOOK_REQUEST_DEADLINE: seconds (default 10)."""
    return _number("LOGBOOK_REQUEST_DEADLINE", DEFAULT_REQUEST_DEADLINE, 0.001, 3600,
                   " of seconds")


def time_left() -> float:
    """Seconds before the running command's deadline (at most 0 once it has passed; the
    whole deadline where no command started one)."""
    started = _STARTED[0]
    if started is None:
        return deadline()
    return max(0.0, deadline() - (time.monotonic() - started))


@contextmanager
def overridden(**values: str) -> Iterator[None]:
    """Set these variables for the duration (a command that runs others in this process, as
    `logbook demo` does), then put back what was there."""
    for name in values:
        assert name in VARIABLES, name
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
