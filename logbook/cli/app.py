"""The full command line: the typer application, its commands registered lazily (a command
imports only its own module; help, completion and an unknown name import them all), and its
invocation. logbook.cli.main runs it for everything the lean start (logbook.cli.lean) declines."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import typer

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
    # the context starts with the command line that runs this one (invoke's ``runner``)
    ctx.obj = state.Options(ledger=ledger, debug=debug, run=ctx.obj)


# the command modules in the order `logbook --help` lists them, and the commands each holds:
# a command imports only its own module (an agent's `append` or `brief` pays for nothing else);
# help, completion and an unknown name import them all
MODULES: dict[str, tuple[str, ...]] = {
    "write": ("init", "append", "plan", "amend", "note", "retract", "reindex"),
    "suites": ("suite",),
    "admit": ("admit",),
    "record": ("run",),
    "spool": ("spool",),
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
    "openings": ("open", "verify-openings"),
    "checks": ("check", "spot-check"),
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


def _completion(option: str, shell: str) -> int:
    """`logbook --show-completion SHELL` (the script) and `--install-completion SHELL` (the
    script installed for that shell) for the shell named, whether or not the shell running
    logbook can be detected: typer takes the name only when it cannot detect one, detects none
    under an agent, cron or nohup ("Shell  not supported"), and under a plain sh refuses the
    shell named ("Shell sh is not supported", exit 1)."""
    from typer._completion_shared import Shells, get_completion_script, install

    names = [s.value for s in Shells]
    if shell not in names:
        print(f"logbook: {option}: {shell!r} is not a shell logbook completes "
              f"({', '.join(names)})", file=sys.stderr)
        return 2
    if option == "--show-completion":
        print(get_completion_script(prog_name="logbook", complete_var="_LOGBOOK_COMPLETE",
                                    shell=shell))
        return 0
    try:
        _, path = install(shell=shell, prog_name="logbook", complete_var="_LOGBOOK_COMPLETE")
    except OSError as exc:  # a home that cannot be written: the user's to mend, not a bug
        import os

        from logbook.errors import EnvironmentProblem

        home = os.path.expanduser("~")
        raise EnvironmentProblem(f"--install-completion: cannot write the {shell} completion "
                                 f"under {home}: {exc.strerror or exc}") from None
    print(f"{shell} completion installed in {path}")
    print("Completion will take effect once you restart the terminal")
    return 0


def invoke(args: list[str], runner: Callable[[list[str]], int]) -> int:
    """Run ``args`` through typer (``runner`` is the whole command line, for a command that
    runs others): the exit code of what typer decided (help, a usage error,
    an exit it was told to make). A LogbookError, or any other exception a command raises,
    is left to logbook.cli.main's one mapping."""
    click = _click_module()
    if len(args) == 2 and args[0] in ("--show-completion", "--install-completion"):
        return _completion(*args)
    _register(args)
    command = typer.main.get_command(app)
    _name_placeholders(command)
    try:
        rv = command.main(args=args, prog_name="logbook", standalone_mode=False,
                          obj=runner)
        return rv if isinstance(rv, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:  # shell completion exits by itself
        return exc.code if isinstance(exc.code, int) else 0
    except typer.Abort:
        print("logbook: interrupted", file=sys.stderr)
        return 130
    except click.NoArgsIsHelpError as exc:  # `logbook` alone (or a group alone): its help
        print(exc.format_message())
        return 0
    except click.ClickException as exc:
        print(f"logbook: {exc.format_message()}", file=sys.stderr)
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            print(f"(see `{exc.ctx.command_path} --help`)", file=sys.stderr)
        return 2


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
