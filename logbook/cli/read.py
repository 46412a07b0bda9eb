"""Commands that read: log, show, export."""

from __future__ import annotations

import sys

import typer

from logbook.cli import state
from logbook.errors import InputError


def log(
    kind: str = typer.Option(None, "--kind", help="Only entries of this kind (run, plan, "
                             "note, ...)."),
    plan: str = typer.Option(None, "--plan", help="Only the entries of this plan (slug or "
                             "digest)."),
    n: int = typer.Option(None, "-n", help="Show the most recent N entries."),
    checkpoints: bool = typer.Option(False, "--checkpoints", help="List checkpoints made."),
    as_json: bool = state.json_flag(),
) -> None:
    """List entries in ledger order (or the checkpoints made)."""
    from logbook.cli.log_and_brief import show_log

    show_log(state.options().ledger, kind, plan, n, checkpoints, as_json)


def show(
    ref: str = typer.Argument(..., metavar="REF", help="The entry: a digest, a unique digest "
                              "prefix, @SEQ, or a plan's slug."),
    item: str = typer.Option(None, "--item", metavar="ID", help="A run's item: its score, "
                             "error and trace (prompt, output, target, verdict), every sample."),
    sample: int = typer.Option(None, "--sample", metavar="N", help="With --item: that sample "
                               "(epoch) only."),
    items: bool = typer.Option(False, "--items", help="A run's items, one line each (with "
                               "--where, those it matches)."),
    where: list[str] = typer.Option(None, "--where", metavar="EXPR", help="With --items: "
                                    "FIELD OP VALUE, e.g. score=0, error!=null, output~Paris "
                                    "(repeat: all must hold)."),
    limit: int = typer.Option(50, "--limit", metavar="N", help="With --items: at most N lines."),
    as_json: bool = state.json_flag(),
) -> None:
    """Show one entry (by digest, prefix, @SEQ or plan slug), with its signature; with --item
    or --items, a run's items and their traces."""
    if item is not None or items or where or sample is not None:
        from logbook.cli.items import show_items

        show_items(ref, item, sample, items, where or [], limit, as_json)
        return
    with state.open_verified(keep=()) as (ledger, _checked, _):
        e = ledger.get(ref)
        retracted = ledger.reads.retractions_of([e.digest]).get(e.digest, [])
    out = {**e.export_line(), "retracted_by": retracted}
    if as_json:
        state.emit_json(out)
        return
    print(f"seq {e.seq}  digest {e.digest}")
    print(f"kind {e.kind}  ts {e.envelope.get('ts')}  signer {e.envelope.get('signer')}")
    for r in retracted:
        print(f"RETRACTED by {r}")
    state.emit_json(e.body)


def export(
    selector: str = typer.Argument(None, metavar="[SELECTOR]", help="With --format other than "
                                   "jsonl: only a plan (slug, digest or @SEQ) and its runs, one "
                                   "run, or the runs PLAN:ARM, session:ID or FIELD=VALUE match."),
    fmt: str = typer.Option("jsonl", "--format", help="jsonl (every entry, signed), sqlite, "
                            "csv, parquet, in-toto, hf, mlflow (docs/exports.md)."),
    out: str = typer.Option(None, "--out", help="File to write (for hf a folder, for mlflow a "
                            "tracking folder or URI; default for jsonl, csv and in-toto: "
                            "stdout)."),
    sqlite: str = typer.Option(None, "--sqlite", metavar="FILE", help="Instead: a flat SQLite "
                               "database of plans, runs, items, claims, retractions, notes and "
                               "findings, for SQL and datasette (checked first, as report is)."),
    source_url: str = typer.Option(None, "--source-url", metavar="PREFIX", help="Where readers "
                                   "find an entry: each exported record links to PREFIX followed "
                                   "by its entry's digest (hf, in-toto, mlflow)."),
) -> None:
    """Export every entry with its signature as JSON Lines: a file an auditor can take away.

    With --format, the field's formats from the verified ledger (docs/exports.md); with
    --sqlite FILE (or --format sqlite --out FILE), a flat analysis database
    (docs/reporting.md)."""
    if sqlite is not None:
        if out is not None:
            raise InputError("--out and --sqlite write different exports: give one")
        if fmt not in ("jsonl", "sqlite") or selector is not None:
            raise InputError("--sqlite writes the whole ledger's database: give neither "
                             "--format nor a SELECTOR with it")
        _export_sqlite(sqlite)
        return
    if source_url is not None and fmt not in ("hf", "in-toto", "mlflow"):
        raise InputError(f"--source-url: --format {fmt} writes no links")
    if fmt == "sqlite":
        if out is None or selector is not None:
            raise InputError("--format sqlite writes the whole ledger's database: give it "
                             "--out FILE and no SELECTOR")
        _export_sqlite(out)
        return
    if fmt != "jsonl":
        _export_format(fmt, selector, out, source_url)
        return
    if selector is not None:
        raise InputError(f"SELECTOR {selector}: JSON Lines export every entry of the ledger; "
                         "a selection takes --format (csv, parquet, in-toto, hf, mlflow)")
    _export_jsonl(out)


def _export_jsonl(out: str | None) -> None:
    import orjson

    from logbook.cli.progress import progress

    with state.open_ledger() as ledger:
        size = ledger.size()
        with progress("exporting entries", size=size) as done:
            if out is None:
                fh = sys.stdout.buffer
                for i, e in enumerate(ledger.entries(), 1):
                    fh.write(orjson.dumps(e.export_line()) + b"\n")
                    done(i, size)
                fh.flush()
                return
            from logbook.files import atomic_writer

            count = 0
            # whole or absent, never half-written; a device or FIFO is written through
            with atomic_writer(out, "--out") as dest:
                for e in ledger.entries():
                    dest.write_bytes(orjson.dumps(e.export_line()) + b"\n")
                    count += 1
                    done(count, size)
    print(f"exported {count} entries to {out}", file=sys.stderr)


def _export_format(fmt: str, selector: str | None, out: str | None,
                   source_url: str | None) -> None:
    """One of the field's formats (logbook.exports), from the verified ledger: a ledger that
    fails the check exits 1 and nothing is written."""
    from logbook.analysis.view import LedgerView
    from logbook.exports import check_needs, exporter_for, folder
    from logbook.exports.selection import selection
    from logbook.ledger.read_model import AUDITED_KINDS

    exporter = exporter_for(fmt)
    where: object = out
    if exporter.writes == "folder":
        where = folder(out, fmt)
    elif exporter.writes == "store":
        if out is None:
            raise InputError(f"--format {fmt} writes into a tracking store: give its folder "
                             "or URI with --out")
    elif out is None:
        if not exporter.text:
            raise InputError(f"--format {fmt} writes a binary file: give it with --out FILE")
        where = sys.stdout.buffer
    check_needs(exporter)
    options: dict[str, object] = {}
    if exporter.signs:
        from logbook.crypto.signing import load_key

        options["key"] = load_key()
    # every run is read once, in a pass that lets it go again: the check keeps their facts,
    # not their bodies (memory stays flat with the ledger's size)
    with state.open_verified(AUDITED_KINDS, runs=True) as (ledger, checked, _):
        if exporter.signs:
            ledger.check_key(options["key"])
        sel = selection(LedgerView(ledger, checked), selector, source_url)
        said = exporter.write(sel, where, options)
    print(f"exported {said} as {fmt} to {out or 'stdout'}", file=sys.stderr)


def _export_sqlite(path: str) -> None:
    from logbook.analysis.flat import export_sqlite
    from logbook.analysis.view import LedgerView
    from logbook.ledger.read_model import AUDITED_KINDS

    # export_sqlite takes no callback yet: two steps, the check and the database
    with state.open_verified(AUDITED_KINDS, runs=True, label="exporting to SQLite",
                             steps=2) as (ledger, checked, step):
        counts = export_sqlite(LedgerView(ledger, checked), path)
        step(2, 2)
    shown = ", ".join(f"{n} {name}" for name, n in counts.items())
    print(f"exported {shown} to {path}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command()(log)
    app.command()(show)
    app.command()(export)
