"""`logbook clone SRC DEST`: copy a ledger between stores (a SQLite file and a PostgreSQL team
ledger, either way), for an auditor to take away or a team to start from (docs/team.md)."""

from __future__ import annotations

import typer

from logbook.cli import state


def clone(
    src: str = typer.Argument(..., help="The ledger to copy: a folder, its ledger.db file or "
                              "a postgresql:// URL."),
    dest: str = typer.Argument(..., help="Where to copy it: a new or empty store, or one "
                               "holding an earlier copy (then only what is new is appended)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Copy every entry (bytes and signatures as they are) from SRC to DEST, verifying SRC first
    and DEST after; DEST must hold nothing, or a prefix of SRC's chain; exit 1 when either
    fails verification."""
    from logbook.cli.progress import progress
    from logbook.ledger.clone import clone as copy

    with progress("cloning") as on_progress:
        done = copy(src, dest, on_progress)
    if as_json:
        state.emit_json({"src": done.src, "dest": done.dest, "copied": done.copied,
                         "logs": done.blobs, "entries": done.entries, "head": done.head})
    else:
        logs = f" and {done.blobs} log(s)" if done.blobs else ""
        print(f"copied {done.copied} entries ({done.had} were there already){logs} to "
              f"{done.dest}; it verifies: {done.entries} entries, head {done.head}")


def register(app: typer.Typer) -> None:
    app.command()(clone)
