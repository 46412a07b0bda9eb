"""Every command and every option says what it is for (`logbook CMD --help`)."""

from __future__ import annotations

from typing import Any

import typer

from logbook.cli import main


def _commands() -> list[tuple[str, Any]]:
    main._register()
    root = typer.main.get_command(main.app)
    out = [("logbook", root)]
    todo = [("logbook", root)]
    while todo:
        path, cmd = todo.pop()
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            out.append((f"{path} {name}", sub))
            todo.append((f"{path} {name}", sub))
    return out


def test_every_command_has_help() -> None:
    bare = [path for path, cmd in _commands() if not (cmd.help or "").strip()]
    assert not bare, f"commands without help text: {bare}"


def test_every_option_and_argument_has_help() -> None:
    bare = []
    for path, cmd in _commands():
        for param in cmd.params:
            if getattr(param, "hidden", False) or param.name == "help":
                continue
            text = getattr(param, "help", None)
            if not (text or "").strip():
                bare.append(f"{path} {'/'.join(param.opts)}")
    assert not bare, "options or arguments without help text:\n" + "\n".join(bare)
