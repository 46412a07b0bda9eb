"""The command line: parses and prints, nothing else. Exit codes are mapped here, once (§6).

0 success; 1 a check found a problem; 2 bad input or usage (nothing written); 3 environment
(no ledger, no key, locked); 70 an internal error (a bug), with its traceback.
"""

from __future__ import annotations

import sys
import traceback

import typer

from logbook import config
from logbook.cli import state

app = typer.Typer(
    name="logbook",
    help="An append-only, hash-chained, signed logbook for LLM benchmark runs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _global(
    ctx: typer.Context,
    ledger: str = typer.Option(None, "--ledger", help="The ledger: a folder holding .logbook/, "
                               "the .logbook folder, or the ledger.db file (or LOGBOOK_DIR)."),
    debug: bool = typer.Option(False, "--debug", help="Show the traceback of a user error."),
) -> None:
    ctx.obj = state.Options(ledger=ledger, debug=debug, run=run)


_REGISTERED = False


def _register() -> None:
    global _REGISTERED
    if _REGISTERED:
        return
    from logbook.cli import (
        analysis,
        audit,
        brief,
        demo,
        keys,
        proofs,
        read,
        record,
        verify,
        write,
    )

    for module in (write, record, read, verify, proofs, analysis, audit, keys, demo, brief):
        module.register(app)
    _REGISTERED = True


def run(argv: list[str] | None = None) -> int:
    """Entry point of the `logbook` console script."""
    from logbook.errors import LogbookError

    click = _click_module()

    from logbook.format.canonical import escape_text

    # argv bytes that are not UTF-8 arrive as lone surrogates: escape them before any model
    args = [escape_text(a) for a in (sys.argv[1:] if argv is None else argv)]
    _register()
    command = typer.main.get_command(app)
    debug = "--debug" in args or config.debug()
    try:
        rv = command.main(args=args, prog_name="logbook", standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except LogbookError as exc:
        if debug:
            traceback.print_exc()
        print(f"logbook: {exc}", file=sys.stderr)
        code = exc.exit_code
    except typer.Exit as exc:
        code = exc.exit_code
    except typer.Abort:
        print("logbook: interrupted", file=sys.stderr)
        code = 130
    except click.ClickException as exc:
        print(f"logbook: {exc.format_message()}", file=sys.stderr)
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            print(f"(see `{exc.ctx.command_path} --help`)", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("logbook: interrupted", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        code = 0
    except Exception:
        print("logbook: internal error (a bug; please report it with this traceback):",
              file=sys.stderr)
        traceback.print_exc()
        code = 70
    sys.stdout.flush()
    return code


def _click_module():  # type: ignore[no-untyped-def]
    """Typer >= 0.26 vendors click as typer._click; older releases use click itself."""
    from types import SimpleNamespace

    try:
        from typer._click.exceptions import ClickException, UsageError
    except ImportError:  # pragma: no cover - older typer
        from click.exceptions import ClickException, UsageError
    return SimpleNamespace(ClickException=ClickException, UsageError=UsageError)


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":  # pragma: no cover
    main()
