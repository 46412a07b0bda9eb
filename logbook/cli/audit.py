"""`logbook audit`: the numbered rules over the whole ledger; exit 1 on an error; `--selftest`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from logbook.cli import state

if TYPE_CHECKING:
    from logbook.analysis.audit.result import AuditResult


def audit(
    plan: str = typer.Option(None, "--plan", help="Only the findings that concern this plan "
                             "(slug, digest prefix or @SEQ)."),
    as_json: bool = typer.Option(False, "--json", help='Print {"ok", "findings", '
                                 '"rules_run"} as JSON.'),
    list_rules: bool = typer.Option(False, "--rules", help="List the rules: id, severity and "
                                    "what each finds."),
    only: list[str] = typer.Option([], "--only", help="Run only these rules (A01,A02; "
                                   "repeatable)."),
    skip: list[str] = typer.Option([], "--skip", help="Do not run these rules (A03; "
                                   "repeatable)."),
    selftest: bool = typer.Option(False, "--selftest", help="Check each rule on its violation "
                                  "and an honest twin, in temporary ledgers; exit 0 when all "
                                  "hold."),
) -> None:
    """Audit the whole ledger: unreported runs, best-of-N, plans after data, moved goalposts.

    Prints numbered findings, each with its rule id, severity (error, warning, info), one
    sentence and the entries that prove it; exits 1 when any error-level finding stands.
    Rules and thresholds: docs/audit.md.
    """
    from logbook.analysis import audit as a

    if list_rules:
        selected = a.select_rules(only, skip)
        if as_json:
            state.emit_json([r.as_dict() for r in selected])
        else:
            print("\n".join(f"{r.id} {r.severity:<7} {r.title}: {r.description}"
                            for r in selected))
        return
    if selftest:
        from logbook.calibration.selftest import run_selftest, selftest_lines

        held = run_selftest([r.id for r in a.select_rules(only, skip)])
        if as_json:
            state.emit_json(held)
        else:
            print("\n".join(selftest_lines(held)))
        if not held["ok"]:
            raise typer.Exit(1)
        return
    from logbook.analysis.view import LedgerView
    from logbook.ledger.read_model import AUDITED_KINDS

    a.select_rules(only, skip)  # a rule id that does not exist is bad input: before any work
    with state.open_verified(AUDITED_KINDS, runs=True) as (ledger, checked, _):
        result = a.run_audit(LedgerView(ledger, checked), plan, only, skip)
    if plan is None and not only and not skip:
        _record(result)
    if as_json:
        state.emit_json(result.as_json())
    else:
        print("\n".join(result.lines()))
    if not result.ok:
        raise typer.Exit(1)


def _record(result: AuditResult) -> None:
    """Keep a whole-ledger audit's findings beside the ledger, for `brief` (best effort)."""
    from logbook.errors import LogbookError

    try:
        with state.open_ledger(write=True) as ledger:
            ledger.keep_audit(result.entries, [f.as_dict() for f in result.findings])
    except (LogbookError, OSError):
        pass  # a read-only copy of a ledger can still be audited


def register(app: typer.Typer) -> None:
    app.command()(audit)
