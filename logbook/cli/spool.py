"""`logbook spool list`: the runs a harness integration could not write at all, waiting beside
the ledger (docs/recording.md, "When the append fails: the spool"). What the spool holds is
read by logbook.integrations.spool; this module parses and prints."""

from __future__ import annotations

import sys

import typer

from logbook.cli import state

spool_app = typer.Typer(help="The runs waiting in the spool beside the ledger: list.",
                        no_args_is_help=True)


@spool_app.command("list")
def list_spooled(as_json: bool = state.json_flag()) -> None:
    """The spooled runs, oldest first: file, when, harness output, plan and arm, and why each
    was spooled (the ledger need not exist yet). `logbook append --spool` appends them."""
    from logbook.analysis.brief_text import spooled_line
    from logbook.integrations.spool import folder_for, listing

    folder = folder_for(state.options().ledger)
    rows = listing(folder)
    if as_json:
        state.emit_json([r.as_json() for r in rows])
        return
    if not rows:
        print(f"logbook: the spool {folder} holds no runs", file=sys.stderr)
        return
    for r in rows:
        print(spooled_line(r))


def register(app: typer.Typer) -> None:
    app.add_typer(spool_app, name="spool")
