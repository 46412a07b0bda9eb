"""The global options of one command, carried in typer's context, and small helpers every
command module uses."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Options:
    """What `logbook [--ledger L] [--debug]` set for this command (the root context's ``obj``);
    ``run`` is the command line itself, for a command that runs others (`logbook demo`)."""

    ledger: str | None = None
    debug: bool = False
    run: Callable[[list[str]], int] | None = None


def options() -> Options:
    """The options of the command being run (defaults outside a command: the lean start,
    logbook.cli.lean, never loads typer, so without it there is no command's context)."""
    if "typer" not in sys.modules:
        return Options()
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # pragma: no cover - typer before 0.26 uses click itself
        from click.globals import get_current_context  # type: ignore[no-redef]
    ctx = get_current_context(silent=True)
    found = ctx.find_root().obj if ctx is not None else None
    return found if isinstance(found, Options) else Options()


def json_flag() -> Any:
    """The `--json` option every command has: one definition, one help text."""
    import typer

    return typer.Option(False, "--json", help="Print the result as JSON (documented in "
                        "schemas/ where a schema exists) instead of text.")


def open_ledger(write: bool = False, at: str | None = None) -> Any:
    """The ledger the command line named (``at`` for code that runs without typer,
    logbook.cli.lean; else --ledger, LOGBOOK_DIR or the working folder), read-only unless
    ``write``: for a command that appends, or lists what is kept beside the chain."""
    from logbook.ledger.service import Ledger

    return Ledger.open(at if at is not None else options().ledger, write=write)


@contextmanager
def open_verified(keep: tuple[str, ...] | None = None, runs: bool = False,
                  at: str | None = None, label: str = "checking the ledger",
                  steps: int = 0) -> Iterator[tuple[Any, Any, Callable[[int, int], None]]]:
    """(ledger, what was verified, step) for every command that reads entries: the one way
    a command opens a ledger to read it. The ledger is checked (logbook.verify.integrity,
    carried on from this machine's checked copy) and stays in the read transaction that was
    checked while the caller reads: every read goes to the read model of that check. The
    entries of the ``keep`` kinds (None: every kind the analysis reads whole,
    logbook.ledger.read_model.ANALYSED_KINDS) come from what the check read (``runs``: the
    runs through their facts). A bar labelled ``label`` shows on a terminal over a large
    ledger: the check alone, or, with ``steps``, the check as step 1 and ``step(i, steps)``
    for the caller's. A ledger that fails the check exits 1 before anything is printed."""
    from logbook.cli.progress import progress, quiet
    from logbook.ledger.read_model import ANALYSED_KINDS, checked_reading

    kinds = ANALYSED_KINDS if keep is None else keep
    with open_ledger(at=at) as ledger, ExitStack() as stack:
        with progress(label, size=ledger.size()) as on_progress:
            if steps:
                on_progress(0, steps)
                checked = stack.enter_context(checked_reading(ledger, kinds, None, runs))
                on_progress(1, steps)
                yield ledger, checked, on_progress
                return
            # the check's read transaction stays open after its bar is cleared
            checked = stack.enter_context(checked_reading(ledger, kinds, on_progress, runs))
        yield ledger, checked, quiet


def emit_json(value: Any) -> None:
    import orjson

    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


def read_input(path: str, what: str = "file") -> bytes:
    """Bytes of a file argument, or of stdin for '-'; InputError naming the file otherwise."""
    from logbook.files import read_bytes, read_stdin

    if path == "-":
        return read_stdin()
    return read_bytes(path, what)


def parse_json(data: bytes, source: str) -> Any:
    import orjson

    from logbook.errors import InputError
    from logbook.limits import MAX_ENTRY_BYTES, MAX_LINE_BYTES, check_nesting, loads_bounded

    if len(data) > MAX_LINE_BYTES:  # refused before any parser holds it, in a bounded memory
        raise InputError(f"{source} is {len(data)} bytes: what it holds becomes one entry of at "
                         f"most {MAX_ENTRY_BYTES} bytes (16 MiB); keep large logs as blobs "
                         "(`logbook run --log FILE`)")
    check_nesting(data if isinstance(data, bytes) else bytes(data), source)
    try:
        value = loads_bounded(data)
    except orjson.JSONDecodeError as exc:
        if "Not enough memory" in str(exc):
            from logbook.errors import EnvironmentProblem

            raise EnvironmentProblem(f"{source} cannot be parsed: the machine has not enough "
                                     "memory left") from None
        where = _non_finite_path(data)
        if where:
            raise InputError(f"{source}: {where} is not a finite number (NaN and "
                             "infinities are refused)") from None
        raise InputError(f"{source} is not valid JSON ({exc})") from None
    _no_duplicate_names(data, value, source)
    return value


def _no_duplicate_names(data: bytes, value: Any, source: str) -> None:
    """Refuse an object that names a member twice: parsers disagree on which one counts (the
    last, for orjson), so what was signed could differ from what a reader of the file sees
    (logbook.format.strict)."""
    from logbook.errors import InputError
    from logbook.format.strict import repeated_key

    again = repeated_key(data, value, sort=False)
    if again is not None:
        raise InputError(f"{source}: the name {again!r} appears twice in one object")


class _NonFinite:
    pass


def _non_finite_path(data: bytes) -> str | None:
    """Where a NaN/Infinity literal sits, so the error can name the field."""
    import json

    try:
        value = json.loads(data, parse_constant=lambda _c: _NonFinite())
    except (ValueError, RecursionError):  # not JSON, or too deep to walk: no field to name
        return None

    def walk(v: Any, path: str) -> str | None:
        if isinstance(v, _NonFinite):
            return path or "value"
        if isinstance(v, dict):
            for k, x in v.items():
                found = walk(x, f"{path}.{k}" if path else str(k))
                if found:
                    return found
        if isinstance(v, list):
            for i, x in enumerate(v):
                found = walk(x, f"{path}[{i}]")
                if found:
                    return found
        return None

    try:
        return walk(value, "")
    except RecursionError:
        return None


def print_appended(entries: list[Any], as_json: bool) -> None:
    """What every writing command prints of what it appended (append, plan, amend, note,
    retract, claim, band, keys; `run` too): the data on stdout, one line ``SEQ DIGEST KIND``
    per entry (with --json, ``{seq, digest, entry}``, a list for several), so a script can
    take the digest from stdout; confirmations, warnings and progress go to stderr, each line
    starting ``logbook: ``."""
    if as_json:
        rows = [{"seq": e.seq, "digest": e.digest, "entry": e.envelope} for e in entries]
        emit_json(rows[0] if len(rows) == 1 else rows)
    else:
        for e in entries:
            print(f"{e.seq} {e.digest} {e.kind}")
    if entries and all(e.earlier for e in entries):
        seqs = ", ".join(f"@{e.seq}" for e in entries)
        print(f"logbook: --once: that key recorded these very drafts before ({seqs}); nothing "
              "new was appended", file=sys.stderr)
