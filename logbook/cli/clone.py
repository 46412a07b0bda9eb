"""`logbook clone SRC DEST`: copy a ledger between stores (a SQLite file and a PostgreSQL team
ledger, either way), for an auditor to take away or a team to start from (docs/team.md)."""

from __future__ import annotations

import typer

from logbook.cli import state
from logbook.errors import CheckFailed, InputError


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
    from logbook.ledger.service import Ledger
    from logbook.verify.stored import verify_store

    with Ledger.open(src, write=False) as source, source.snapshot():
        checked = verify_store(source.verify_reads())
        if not checked.ok:
            raise CheckFailed(f"SRC {source.location} does not verify "
                              f"({len(checked.findings)} findings; `logbook --ledger SRC "
                              "verify` lists them); nothing was copied")
        entries = [e for e in source.entries() if e.seq < checked.entries]
        checkpoints = source.checkpoints()
    with Ledger.open_or_create(dest) as target:
        have = target.size()
        if have > len(entries):
            raise InputError(f"DEST {target.location} holds {have} entries, more than SRC's "
                             f"{len(entries)}: it is not a copy of SRC; nothing was copied")
        for e in entries[:have]:
            mine = target.entry_at(e.seq)
            if mine is None or mine.digest != e.digest:
                raise InputError(f"DEST {target.location} holds a different chain (entry "
                                 f"{e.seq} differs from SRC's); nothing was copied")
        target.copy_in(entries[have:])
        kept = {(c[1], c[2], c[3]) for c in target.checkpoints()}
        for _id, size, root, note, created in checkpoints:
            if (size, root, note) not in kept:
                target.add_checkpoint(size, root, note, created)
        after = verify_store(target.verify_reads())
        if not after.ok:
            raise CheckFailed(f"DEST {target.location} does not verify after the copy "
                              f"({len(after.findings)} findings)")
        copied = len(entries) - have
        if as_json:
            state.emit_json({"src": source.location, "dest": target.location,
                             "copied": copied, "entries": len(entries), "head": after.head})
        else:
            print(f"copied {copied} entries ({have} were there already) to {target.location}; "
                  f"it verifies: {len(entries)} entries, head {after.head}")


def register(app: typer.Typer) -> None:
    app.command()(clone)
