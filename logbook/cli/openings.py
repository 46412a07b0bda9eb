"""`logbook open RUN --items K` and `logbook verify-openings FILE --trust KEY`: the rows of a run
with committed items that a published checkpoint chooses, opened by the owner and checked by
anyone with the ledger's public key (docs/format.md, "Committed items")."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from logbook.cli import state
from logbook.errors import InputError


def open_items(
    ref: str = typer.Argument(..., metavar="RUN", help="The run (@SEQ, digest or prefix)."),
    items: int = typer.Option(..., "--items", metavar="K", help="How many rows to open."),
    salts: str = typer.Option(..., "--salts", metavar="FILE", help="The salt file `append "
                              "--commit-items` wrote."),
    checkpoint: str = typer.Option(None, "--seed-from-checkpoint", metavar="CP", help="The "
                                   "published checkpoint whose root chooses the rows "
                                   "(default: the first one kept that holds the run)."),
    out: str = typer.Option(..., "--out", metavar="FILE", help="Where to write the openings."),
    as_json: bool = state.json_flag(),
) -> None:
    """Open the rows of RUN's committed items that a checkpoint's root chooses.

    Writes each chosen row's id, score, content and salt, with the run's signed entry, its
    inclusion proof and the checkpoint, to FILE: what `logbook verify-openings` checks."""
    import orjson

    from logbook.files import atomic_writer
    from logbook.ledger.commitments import open_rows
    from logbook.verify.checkpoint import read_checkpoint

    given = None
    if checkpoint is not None:
        note, _ = read_checkpoint(checkpoint, "--seed-from-checkpoint")
        given = (f"--seed-from-checkpoint {checkpoint}", note)
    with atomic_writer(out, "--out") as fh, state.open_ledger() as ledger:
        doc = open_rows(ledger, ref, items, Path(salts), given)
        fh.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        fh.commit()
    rows = [o["row"] for o in doc["openings"]]
    if as_json:
        state.emit_json({"run": doc["run"]["seq"], "rows": rows, "out": out})
    print(f"logbook: opened {len(rows)} of run @{doc['run']['seq']}'s committed rows, chosen "
          f"by the checkpoint at size {doc['checkpoint'].split(chr(10))[1]}, into {out}",
          file=sys.stderr)


def verify_openings(
    file: str = typer.Argument(..., metavar="FILE", help="The openings `logbook open` wrote."),
    trust: str = typer.Option(..., "--trust", help="The ledger's public key: an exported "
                              "key file or a C2SP verifier key string."),
    as_json: bool = state.json_flag(),
) -> None:
    """Check openings of committed items with nothing but the ledger's public key; exit 1 on
    any problem."""
    from logbook.verify.checkpoint import read_trust_key
    from logbook.verify.openings import verify_openings as check

    _, key = read_trust_key(trust)
    if key is None:
        raise InputError(f"--trust {trust}: give the public key itself (a key file or a "
                         "verifier key string), not its fingerprint: the signatures are "
                         "checked with it")
    done = check(state.parse_json(state.read_input(file, "openings file"), file), key)
    if as_json:
        state.emit_json(done.as_dict())
    else:
        for problem in done.problems:
            print(f"FAIL {problem}")
        if done.ok:
            print(f"the {len(done.rows)} openings of run @{done.run_seq} verify: the rows the "
                  f"checkpoint at size {done.size} chooses, each opening its commitment to the "
                  "run's id and score")
    if not done.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("open")(open_items)
    app.command("verify-openings")(verify_openings)
