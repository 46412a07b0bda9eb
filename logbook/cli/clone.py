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
    from logbook.ledger.clone import clone as copy

    done = copy(src, dest)
    if as_json:
        state.emit_json({"src": done.src, "dest": done.dest, "copied": done.copied,
                         "entries": done.entries, "head": done.head})
    else:
        print(f"copied {done.copied} entries ({done.had} were there already) to {done.dest}; "
              f"it verifies: {done.entries} entries, head {done.head}")


def register(app: typer.Typer) -> None:
    app.command()(clone)
