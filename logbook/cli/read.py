"""Commands that read: log, show, export."""

from __future__ import annotations

import sys
from typing import Any

import typer

from logbook.cli import state
from logbook.errors import InputError


def _summary(entry: Any) -> str:
    b = entry.body
    k = entry.kind
    if k == "genesis":
        return f"ledger {b.get('name')!r} {b.get('uuid')}"
    if k == "plan":
        return f"{b.get('slug')}: {b.get('title')}"
    if k == "run":
        plan = (b.get("plan") or "exploratory")[:12]
        arm = f" arm={b['arm']}" if b.get("arm") is not None else ""
        if b.get("status") != "completed":  # a failed or aborted run has a reason, no score
            return f"{b.get('status')} plan={plan}{arm}: {b.get('reason')}"
        oc = b.get("outcomes") or {}
        scores = [s for s in oc.get("score", []) if s is not None]
        score = f" {oc.get('metric')}={sum(scores) / len(scores):.4f}" if scores else ""
        return f"completed plan={plan}{arm}{score}"
    if k == "retraction":
        return f"retracts {str(b.get('target'))[:12]} ({b.get('category')}): {b.get('reason')}"
    if k == "amendment":
        return f"amends {str(b.get('plan'))[:12]}: {', '.join(b.get('changes', {}))}"
    if k == "note":
        return str(b.get("text"))
    if k == "claim":
        return str(b.get("statement"))
    if k == "key":
        return f"{b.get('action')} key {b.get('name')!r}: {b.get('reason')}"
    if k == "band":
        return f"band {b.get('selector')} k={b.get('k')} band={b.get('band')}"
    return ""


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
    if n is not None and n < 0:
        raise InputError("-n must not be negative")
    from logbook.format.kinds import KINDS

    if kind is not None and kind not in KINDS:
        raise InputError(f"--kind {kind!r} is not one of {', '.join(KINDS)}")
    with state.open_ledger() as ledger:
        if checkpoints:
            rows = ledger.checkpoints()
            if as_json:
                state.emit_json([{"size": s, "root": r, "created": c, "note": t}
                                 for _, s, r, t, c in rows])
            else:
                for _, s, r, _t, c in rows:
                    print(f"size {s} root {r} {c}")
            return
        entries = ledger.log(kind, plan, n)
        retracted = ledger.retractions_of([e.digest for e in entries])
    if as_json:
        state.emit_json([{"seq": e.seq, "digest": e.digest, "kind": e.kind,
                          "ts": e.envelope.get("ts"), "retracted_by": retracted.get(e.digest, []),
                          "entry": e.envelope} for e in entries])
        return
    for e in entries:
        mark = " [retracted]" if e.digest in retracted else ""
        print(f"{e.seq:>6} {e.digest[:12]} {e.envelope.get('ts', '')[:19]} {e.kind:<10} "
              f"{_summary(e)}{mark}")


def show(
    ref: str = typer.Argument(..., metavar="REF", help="The entry: a digest, a unique digest "
                              "prefix, @SEQ, or a plan's slug."),
    as_json: bool = state.json_flag(),
) -> None:
    """Show one entry (by digest, prefix, @SEQ or plan slug), with its signature."""
    with state.open_ledger() as ledger:
        e = ledger.get(ref)
        retracted = ledger.retractions_of([e.digest]).get(e.digest, [])
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
    out: str = typer.Option(None, "--out", help="File to write (default: stdout)."),
    sqlite: str = typer.Option(None, "--sqlite", metavar="FILE", help="Instead: a flat SQLite "
                               "database of plans, runs, items, claims, retractions, notes and "
                               "findings, for SQL and datasette (checked first, as report is)."),
) -> None:
    """Export every entry with its signature as JSON Lines: a file an auditor can take away.

    With --sqlite FILE, a flat analysis database instead (docs/reporting.md)."""
    import orjson

    if sqlite is not None:
        if out is not None:
            raise InputError("--out and --sqlite write different exports: give one")
        _export_sqlite(sqlite)
        return

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


def _export_sqlite(path: str) -> None:
    from logbook.analysis.flat import export_sqlite
    from logbook.analysis.view import LedgerView
    from logbook.cli.progress import progress

    # as state.open_verified, with a bar on a terminal over a large ledger: the check, then
    # the database (export_sqlite takes no callback yet: two steps)
    with state.open_ledger() as ledger, \
            progress("exporting to SQLite", size=ledger.size()) as step:
        step(0, 2)
        with state.checked_reading(ledger, state.ANALYSED_KINDS) as checked:
            step(1, 2)
            counts = export_sqlite(LedgerView(ledger, checked), path)
            step(2, 2)
    shown = ", ".join(f"{n} {name}" for name, n in counts.items())
    print(f"exported {shown} to {path}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command()(log)
    app.command()(show)
    app.command()(export)
