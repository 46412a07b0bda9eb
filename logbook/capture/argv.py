"""Command lines under the one redaction policy (logbook.capture.redact): which arguments hold
secrets (``--api-key X``, ``--token=X``, ``-u USER:PASSWORD``, secret-named assignments, a shell
string's own words), their values taken out and then scrubbed wherever they appear later (the
command's output, logs, error texts, notes)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from logbook.capture.redact import (
    REDACTED,
    is_secret_name,
    known_values,
    named_pattern,
    scrub_counted,
    secret_env_values,
)


def printable(arg: str | bytes) -> str:
    """A str that encodes as UTF-8: undecodable bytes become backslash escapes."""
    arg = os.fsdecode(arg) if isinstance(arg, bytes) else arg
    for errors in ("strict", "surrogateescape"):
        try:
            return arg.encode("utf-8", errors).decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            pass
    return arg.encode("utf-8", "backslashreplace").decode("utf-8")


def redact_argv(argv: list[str], env: Mapping[str, str] | None = None) -> list[str]:
    """Redact secrets in a command line, keeping every other argument byte-for-byte.

    ``--api-key X`` and ``--token=X`` lose their value; secret keys inside ``k=v,k=v`` lists,
    URL credentials, ``Bearer`` headers and secret-shaped values are replaced by ``[redacted]``.
    Arguments that are not valid UTF-8 come back with backslash escapes.
    """
    return argv_redaction(argv, env)[0]


# options whose value is USER:PASSWORD (curl -u, --user, --proxy-user, wget's --http-user
# is separate): the password after the first colon is taken out, the user kept
_USER_PASSWORD_FLAGS = frozenset({"-u", "--user", "-U", "--proxy-user"})
_USER_PASSWORD = re.compile(r"([^:\s/@]+):(?!//)(.+)", re.DOTALL)


def _user_password(value: str) -> tuple[str, str] | None:
    """(the value with its password replaced, the password) for USER:PASSWORD; None for
    anything else (a uid:gid pair of numbers is kept)."""
    m = _USER_PASSWORD.fullmatch(value)
    if m is None or (m.group(1).isdigit() and m.group(2).isdigit()):
        return None
    return f"{m.group(1)}:{REDACTED}", m.group(2)


def argv_redaction(argv: list[str],
                   env: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(the redacted command line, the secret values taken out of it): the values are then
    scrubbed wherever they appear later (the command's output, logs, error texts, notes).

    An argument holding spaces (a shell string: ``sh -c 'prog --api-key X'``) is split as
    the shell would and redacted as a command line of its own, its values then taken out of
    the string with its quoting kept."""
    out, taken = _argv_redaction(argv, env)
    return out, known_values(taken)


_SHELL_OPERATORS = frozenset({";", "&", "&&", "|", "||", "(", ")", "<", ">", ">>", ";;"})


def _argv_redaction(argv: list[str],
                    env: Mapping[str, str] | None) -> tuple[list[str], list[str]]:
    """``argv_redaction`` with every value taken, short ones too."""
    env_values = secret_env_values(env)
    out: list[str] = []
    taken: list[str] = []
    take_next: str | None = None  # "value" after --api-key, "userpass" after -u
    for raw in argv:
        arg = printable(raw)
        if arg in _SHELL_OPERATORS:  # in a shell string: the next command starts
            take_next = None
        if take_next == "value" and not arg.startswith("-"):
            out.append(REDACTED)
            taken.append(arg)
            take_next = None
            continue
        if take_next == "userpass" and (pair := _user_password(arg)) is not None:
            out.append(pair[0])
            taken.append(pair[1])
            take_next = None
            continue
        take_next = None
        m = named_pattern("flag").fullmatch(arg)
        if m and is_secret_name(m.group(2)):
            dashes, name, eq, value = m.groups()
            if eq:
                if value:
                    taken.append(value)
                arg = f"{dashes}{name}={REDACTED}" if value else arg
            else:
                take_next = "value"
        elif m and f"{m.group(1)}{m.group(2)}" in _USER_PASSWORD_FLAGS and m.group(3):
            pair = _user_password(m.group(4))
            if pair is not None:
                arg = f"{m.group(1)}{m.group(2)}={pair[0]}"
                taken.append(pair[1])
        elif arg in _USER_PASSWORD_FLAGS:
            take_next = "userpass"
        elif any(c.isspace() for c in arg):
            arg = _shell_string(arg, env, taken)
        out.append(scrub_counted(arg, env_values, taken)[0])
    return out, taken


def _shell_string(arg: str, env: Mapping[str, str] | None, taken: list[str]) -> str:
    """A command line in one argument with the values redaction takes out of its words
    replaced where they stand (quotes kept); the values are added to ``taken``."""
    import shlex

    try:
        lexer = shlex.shlex(arg, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:  # unbalanced quotes: words as the spaces give them
        words = arg.split()
    if len(words) < 2:
        return arg
    found = {v for v in _argv_redaction(words, env)[1] if v and v != REDACTED}
    for value in sorted(found, key=len, reverse=True):
        pattern = re.compile(r"(?<![^\s\"'=:])" + re.escape(value) + r"(?![^\s\"';&|)])")
        arg, n = pattern.subn(REDACTED, arg)
        if n:
            taken.append(value)
    return arg
