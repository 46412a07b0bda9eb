"""Analysis commands: report (and, in their modules, compare, power, band, claim)."""

from __future__ import annotations

from pathlib import Path

import typer

from logbook.cli import state
from logbook.errors import InputError


def report(
    plan: str = typer.Argument(..., metavar="PLAN", help="Plan slug, digest prefix or @SEQ."),
    as_json: bool = typer.Option(False, "--json"),
    markdown: bool = typer.Option(False, "--markdown"),
    html: Path = typer.Option(None, "--html", help="Write a self-contained HTML report here."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 unless the verdict is "
                                "success."),
) -> None:
    """Report on every run of a plan: intervals, the paired effect, the verdict."""
    from logbook.analysis.report import build_report
    from logbook.analysis.view import LedgerView

    if sum([as_json, markdown]) > 1:
        raise InputError("choose one of --json and --markdown")
    with state.open_ledger() as ledger:
        view = LedgerView(ledger)
        rep = build_report(view, plan)
        rep["findings"] = _plan_findings(view, rep["plan"]["digest"])
    if html is not None:
        from logbook.analysis.html import write_html

        write_html(rep, html)
    if as_json:
        state.emit_json(rep)
    else:
        from logbook.analysis.render import report_lines

        print("\n".join(report_lines(rep, markdown=markdown)))
    if strict and rep["verdict"]["status"] != "success":
        raise typer.Exit(1)


def _plan_findings(view: object, plan_digest: str) -> list[dict[str, object]]:
    """Audit findings that concern this plan (empty until the audit module is present)."""
    try:
        from logbook.analysis.audit import findings_for_plan
    except ImportError:
        return []
    return [f.as_dict() for f in findings_for_plan(view, plan_digest)]


def register(app: typer.Typer) -> None:
    app.command()(report)
