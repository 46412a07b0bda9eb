"""The lean start (issue 22): `logbook append FILE`, `logbook note TEXT`, `logbook log` and
`logbook brief`, the commands an agent calls at every step, run without importing typer, which
alone costs a cold process more than the append's own work.

`lean_call` reads the command line by click's rules for exactly the options of those
commands (the table below, held to the typer declarations in logbook.cli.write, .read and
.brief by tests/cli/test_lean_dispatch.py) and returns the call to make. Anything else it declines
(returns None) and the full typer application runs instead: help, completion, --version,
another command, an option it does not know or that leaves the lean path (`append --from`,
`--spool`), a missing or extra argument, `--`, an option's value that starts with a dash, an
option given twice, a number option's value that is not an integer, a short option written
with `=`. Usage errors are therefore always typer's own; what the command itself refuses is
refused by the same code (logbook.cli.append_and_note, logbook.cli.log_and_brief) on either
path, and the exceptions typer turns into exit codes are turned into the same ones here
(`_as_typer_does`).
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any


class Spec:
    """A command's options as the lean start reads them: positional arguments in order (the
    first ``required`` of them required), flags, single-valued options (``ints``: those whose
    value is an integer, read as click's INT reads it), repeatable options, and the declared
    options it leaves to typer (``declined``; -h/--help, like any option not named here, is
    always left to typer). A plain class: a dataclass would cost every lean start about 0.7 ms
    to build."""

    __slots__ = ("arguments", "declined", "flags", "ints", "multiple", "required", "values")

    def __init__(self, arguments: tuple[str, ...], required: int,
                 flags: dict[str, str] | None = None, values: dict[str, str] | None = None,
                 multiple: dict[str, str] | None = None,
                 declined: frozenset[str] = frozenset(),
                 ints: frozenset[str] = frozenset()) -> None:
        self.arguments = arguments
        self.required = required
        self.flags: dict[str, str] = flags or {}
        self.values: dict[str, str] = values or {}
        self.multiple: dict[str, str] = multiple or {}
        self.declined = declined
        self.ints = ints


COMMANDS: dict[str, Spec] = {
    "append": Spec(arguments=("file",), required=0,
                   flags={"--jsonl": "jsonl", "--json": "as_json"},
                   values={"--once": "once"},
                   declined=frozenset({"--from", "--plan", "--arm", "--session", "--apparatus",
                                       "--spool", "--exploratory", "--reproduces",
                                       "--commit-items", "--suite", "--split", "--log",
                                       "--cost", "--tokens-in", "--tokens-out"}),
                   ints=frozenset({"tokens_in", "tokens_out"})),  # declined: typer reads them
    "note": Spec(arguments=("text",), required=1, flags={"--json": "as_json"},
                 multiple={"--ref": "refs"}),
    "log": Spec(arguments=(), required=0,
                flags={"--checkpoints": "checkpoints", "--json": "as_json"},
                values={"--kind": "kind", "--plan": "plan", "-n": "n"}, ints=frozenset({"n"})),
    "brief": Spec(arguments=(), required=0, flags={"--json": "as_json"},
                  values={"--since": "since"}, ints=frozenset({"since"})),
}

# the root's options (logbook.cli.app's callback): --ledger and --debug are read here; the
# others (--version, -h/--help, the completion options) go to typer
ROOT_VALUES = {"--ledger": "ledger"}
ROOT_FLAGS = {"--debug": "debug"}

# typer answers shell completion when this variable is set, whatever the command line says
COMPLETE_VAR = "_LOGBOOK_COMPLETE"


def _read(args: Sequence[str], spec: Spec,
          stop_at_command: bool = False) -> tuple[dict[str, Any], list[str]] | None:
    """The options and positional arguments of ``args`` by click's rules, or None when the
    lean start declines them. With ``stop_at_command``, reading stops at the first positional
    argument (the command's name) and the rest is returned unread."""
    values: dict[str, Any] = {name: False for name in spec.flags.values()}
    values.update({name: None for name in spec.values.values()})
    values.update({name: [] for name in spec.multiple.values()})
    seen: set[str] = set()
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            return None
        if not arg.startswith("-") or arg == "-":
            if stop_at_command:
                return values, list(args[i - 1:])
            positional.append(arg)
            continue
        name, eq, explicit = arg.partition("=")
        if name in spec.flags and not eq:
            values[spec.flags[name]] = True
            continue
        if name not in spec.values and name not in spec.multiple:
            return None  # unknown, declined, a flag given a value, or a short option
        if eq and not name.startswith("--"):
            return None  # click reads `-n=5` as the value "=5"
        if eq:
            value = explicit
        elif i < len(args) and not args[i].startswith("-"):
            value = args[i]
            i += 1
        else:
            return None  # no value, or one that looks like an option: typer decides
        if name in spec.multiple:
            values[spec.multiple[name]].append(value)
        elif name in seen:
            return None
        else:
            seen.add(name)
            dest = spec.values[name]
            if dest in spec.ints:
                try:
                    values[dest] = int(value)  # what click's INT does with the text
                except ValueError:
                    return None  # typer's usage error
            else:
                values[dest] = value
    if stop_at_command:
        return None  # no command named
    if not spec.required <= len(positional) <= len(spec.arguments):
        return None
    padded: list[str | None] = [*positional, *[None] * (len(spec.arguments) - len(positional))]
    values.update(zip(spec.arguments, padded, strict=True))
    return values, positional


ROOT = Spec(arguments=(), required=0, flags=ROOT_FLAGS, values=ROOT_VALUES)


def lean_call(args: Sequence[str], environ: Mapping[str, str]) -> Callable[[], int] | None:
    """The call that runs ``args`` without typer, or None when typer must run them."""
    if COMPLETE_VAR in environ:
        return None
    root = _read(args, ROOT, stop_at_command=True)
    if root is None:
        return None
    options, rest = root
    spec = COMMANDS.get(rest[0])
    if spec is None:
        return None
    read = _read(rest[1:], spec)
    if read is None:
        return None
    values = read[0]
    ledger = options["ledger"]
    command = rest[0]

    def call() -> None:
        if command == "append":
            from logbook.cli.append_and_note import append_drafts

            append_drafts(ledger, values["file"], values["jsonl"], values["once"],
                          values["as_json"])
        elif command == "note":
            from logbook.cli.append_and_note import append_note

            append_note(ledger, values["text"], values["refs"], values["as_json"])
        elif command == "log":
            from logbook.cli.log_and_brief import show_log

            show_log(ledger, values["kind"], values["plan"], values["n"],
                     values["checkpoints"], values["as_json"])
        else:
            from logbook.cli.log_and_brief import show_brief

            show_brief(ledger, values["as_json"], values["since"])

    return lambda: _as_typer_does(call)


class _Pacified:
    """A stream whose flush ignores a closed pipe (click's PacifyFlushWrapper, which typer
    puts on stdout and stderr when a command hits one)."""

    def __init__(self, wrapped: IO[Any]) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.wrapped, attr)


def _as_typer_does(call: Callable[[], None]) -> int:
    """Run a command as typer's main (standalone_mode=False, under logbook.cli.main) does:
    Ctrl-C is exit 130 in silence, end of input an interruption, a closed pipe exit 1; a
    LogbookError, or any other exception, goes on to logbook.cli.main's one mapping."""
    try:
        call()
    except EOFError:
        print(file=sys.stderr)
        print("logbook: interrupted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        sys.stdout = _Pacified(sys.stdout)  # type: ignore[assignment]
        sys.stderr = _Pacified(sys.stderr)  # type: ignore[assignment]
        return 1
    return 0
