"""`logbook brief`: the start-of-session summary for agents (and people)."""

from __future__ import annotations

import typer

from logbook.cli import state
from logbook.errors import InputError


def brief(
    as_json: bool = state.json_flag(),
    since: int = typer.Option(None, "--since", help="Show retractions from this seq on "
                              "(default: the last 20)."),
) -> None:
    """What to know before the first run: open plans, retractions, what to re-measure."""
    from logbook.analysis.brief import brief_lines, build_brief

    if since is not None and since < 0:
        raise InputError("--since must not be negative")
    with state.open_verified(keep=()) as (ledger, checked):
        b = build_brief(ledger, since, checked.as_dict())
    if as_json:
        state.emit_json(b.as_json())
    else:
        print("\n".join(brief_lines(b)))


def register(app: typer.Typer) -> None:
    app.command()(brief)
