"""The command line: parses and prints, nothing else. Exit codes are mapped here, once (§6).

0 success; 1 a check found a problem; 2 bad input or usage (nothing written); 3 environment
(no ledger, no key, locked); 70 an internal error (a bug), with its traceback.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import typer

from logbook import config
from logbook.cli import state

app = typer.Typer(
    name="logbook",
    help="An append-only, hash-chained, signed logbook for LLM benchmark runs.",
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"logbook {version('logbook')}")
        raise typer.Exit(0)


@app.callback()
def _global(
    ctx: typer.Context,
    ledger: str = typer.Option(None, "--ledger", help="The ledger: a folder holding .logbook/, "
                               "the .logbook folder, the ledger.db file or a postgresql:// "
                               "URL (or LOGBOOK_DIR)."),
    debug: bool = typer.Option(False, "--debug", help="Show the traceback of a user error."),
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                 help="Print logbook's version and exit."),
) -> None:
    ctx.obj = state.Options(ledger=ledger, debug=debug, run=run)


# the command modules in the order `logbook --help` lists them, and the commands each holds:
# a command imports only its own module (an agent's `append` or `brief` pays for nothing else);
# help, completion and an unknown name import them all
MODULES: dict[str, tuple[str, ...]] = {
    "write": ("init", "append", "plan", "amend", "note", "retract", "reindex"),
    "record": ("run",),
    "read": ("log", "show", "export"),
    "verify": ("verify",),
    "proofs": ("checkpoint", "prove", "verify-proof"),
    "publish": ("publish", "mirror"),
    "analysis": ("report", "compare", "power", "band", "claim"),
    "audit": ("audit",),
    "keys": ("keys",),
    "demo": ("demo",),
    "brief": ("brief",),
    "clone": ("clone",),
    "serve": ("serve",),
    "witness": ("witness",),
}
_MODULE_OF = {command: module for module, commands in MODULES.items() for command in commands}
_registered: list[str] = []


def _command_of(args: list[str]) -> str | None:
    """The command named in ``args`` (after the global options), or None."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--ledger":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _register(args: list[str] | None = None) -> None:
    """Register the module of the command in ``args`` (every module when there is none, or
    it is not a command), keeping the commands in `--help`'s order whatever came first."""
    import importlib

    command = _command_of(args) if args is not None else None
    wanted = [_MODULE_OF[command]] if command in _MODULE_OF else list(MODULES)
    missing = [m for m in wanted if m not in _registered]
    for name in missing:
        importlib.import_module(f"logbook.cli.{name}").register(app)
        _registered.append(name)
    if missing:
        order = {c: i for i, c in enumerate(_MODULE_OF)}
        app.registered_commands.sort(key=lambda info: order.get(_name(info), len(order)))


def _name_placeholders(command: Any) -> None:
    """An option's value is shown by its name (`--plan PLAN`, `-n N`), not by its type."""
    todo = [command]
    while todo:
        cmd = todo.pop()
        todo.extend(getattr(cmd, "commands", {}).values())
        for param in cmd.params:
            if getattr(param, "is_flag", True) or param.metavar is not None or not param.name:
                continue
            param.metavar = param.name.upper()


def _name(info: typer.models.CommandInfo) -> str:
    callback = info.callback
    return info.name or (callback.__name__.replace("_", "-") if callback else "")


def run(argv: list[str] | None = None) -> int:
    """Entry point of the `logbook` console script."""
    from logbook.errors import LogbookError

    click = _click_module()

    from logbook.format.canonical import escape_text

    # argv bytes that are not UTF-8 arrive as lone surrogates: escape them before any model
    args = [escape_text(a) for a in (sys.argv[1:] if argv is None else argv)]
    _register(args)
    command = typer.main.get_command(app)
    _name_placeholders(command)
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
    except SystemExit as exc:  # shell completion exits by itself
        code = exc.code if isinstance(exc.code, int) else 0
    except typer.Abort:
        print("logbook: interrupted", file=sys.stderr)
        code = 130
    except click.NoArgsIsHelpError as exc:  # `logbook` alone (or a group alone): its help
        print(exc.format_message())
        code = 0
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
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - older typer
        from click import exceptions  # type: ignore[no-redef]
    # click before 8.2 prints the help of a bare group itself and exits 0: nothing to catch
    return SimpleNamespace(ClickException=exceptions.ClickException,
                           UsageError=exceptions.UsageError,
                           NoArgsIsHelpError=getattr(exceptions, "NoArgsIsHelpError", ()))


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":  # pragma: no cover
    main()
