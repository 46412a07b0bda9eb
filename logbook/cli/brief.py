"""`logbook brief`: the start-of-session summary for agents (and people)."""

from __future__ import annotations

import typer

from logbook.cli import state


def brief(
    as_json: bool = state.json_flag(),
    since: int = typer.Option(None, "--since", help="Show retractions from this seq on "
                              "(default: the last 20)."),
) -> None:
    """What to know before the first run: open plans, retractions, what to re-measure."""
    from logbook.cli.log_and_brief import show_brief

    show_brief(state.options().ledger, as_json, since)


def register(app: typer.Typer) -> None:
    app.command()(brief)
