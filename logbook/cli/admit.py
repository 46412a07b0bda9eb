"""`logbook admit RUN --plan P --arm A`: count an earlier run, refused or exploratory, in a
plan's arm once the plan (amended) accepts it (docs/recording.md, "Admitting a refused run").
The ledger's admission rule (logbook.ledger.admission.admit_admission) checks it again as the
door would."""

from __future__ import annotations

from typing import Any

import typer

from logbook.cli import state
from logbook.cli.append_and_note import scrub_fields, signing_key, warn_redacted
from logbook.cli.state import print_appended


def admit(
    run: str = typer.Argument(..., metavar="RUN", help="The run to count: a digest, a unique "
                              "digest prefix or @SEQ."),
    plan: str = typer.Option(..., "--plan", help="The plan (slug, digest or @SEQ)."),
    arm: str = typer.Option(..., "--arm", help="The plan's arm the run counts in."),
    reason: str = typer.Option(None, "--reason", help="Why it is admitted now."),
    as_json: bool = state.json_flag(),
) -> None:
    """Count an earlier run in a plan's arm: a new entry that links to it. The plan as it
    stands checks the run as it checks a new one (metric, suite, pins, arm); a retracted run,
    one already counted or already admitted is refused."""
    fields, redacted = scrub_fields({"reason": reason})
    body: dict[str, Any] = {"run": run, "plan": plan, "arm": arm}
    if reason is not None:
        body["reason"] = fields["reason"]
    key = signing_key()
    with state.open_ledger(write=True) as ledger:
        print_appended([ledger.append("admission", body, key)], as_json)
    warn_redacted(redacted, "admission's --reason")


def register(app: typer.Typer) -> None:
    app.command()(admit)
