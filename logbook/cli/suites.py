"""`logbook suite FILE`: name a suite once, with its splits (docs/recording.md, "Suites and
held-out splits")."""

from __future__ import annotations

from pathlib import Path

import typer

from logbook.cli import state
from logbook.cli.state import print_appended


def suite(
    file: str = typer.Argument(..., help="The suite, TOML or JSON: name, version, "
                               "dataset_hash, n_items, cluster_field, splits (each with ids, "
                               "ids_file or n_items and items; holdout.looks) "
                               "(schemas/suite.json)."),
    once: str = typer.Option(None, "--once", help="Idempotency key: if a suite with this key "
                             "was already appended, print it instead of appending again."),
    as_json: bool = state.json_flag(),
) -> None:
    """Name a suite and its splits once (a held-out `test` split allows one look)."""
    from logbook.cli.write import _key, _load_plan_file
    from logbook.ledger.suite_records import suite_body

    body = suite_body(_load_plan_file(file, "suite"), Path(file).parent if file != "-"
                      else Path("."))
    key = _key()
    with state.open_ledger(write=True) as ledger:
        entries = ledger.append_many([("suite", body)], key, once=once)
        print_appended(entries, as_json)


def register(app: typer.Typer) -> None:
    app.command()(suite)
