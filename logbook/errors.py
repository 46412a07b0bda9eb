"""One error root. The CLI maps these to exit codes in one place (DESIGN §6).

Anything that is not a LogbookError is a bug and exits 70 with its traceback.
"""

from __future__ import annotations


class LogbookError(Exception):
    """A user-facing problem: one sentence naming the field or file at fault."""

    exit_code = 2


class InputError(LogbookError):
    """Bad input or usage; nothing was written (exit 2)."""

    exit_code = 2


class EnvironmentProblem(LogbookError):
    """The environment is not usable: no ledger, no key, ledger locked (exit 3)."""

    exit_code = 3


class CopyDamaged(EnvironmentProblem):
    """This machine's checked copy of a ledger cannot be read (a damaged file): it is removed,
    and the next check reads the ledger in full (exit 3 when met after the check)."""


class CheckFailed(LogbookError):
    """A check ran and found a problem (exit 1)."""

    exit_code = 1


class StorageDamaged(CheckFailed):
    """The ledger file is damaged: a table is missing or SQLite cannot read it (exit 1)."""
