"""`logbook verify`: the auditor's tool. Needs no private key; opens the ledger read-only and
never writes to it (an auditor's copy may sit on read-only media)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import typer

from logbook.cli import state


def verify(
    file: str = typer.Argument(None, help="An exported .jsonl file to verify instead of the "
                               "ledger database, or a published ledger: a folder `logbook "
                               "publish` wrote, or its http(s):// URL."),
    trust: str = typer.Option(None, "--trust", help="A key fingerprint (64 hex), public-key "
                              "file or C2SP verifier key that the genesis entry must carry "
                              "and that must have signed every --checkpoint."),
    checkpoints: list[str] = typer.Option([], "--checkpoint", help="A checkpoint file the "
                                          "ledger must extend (repeatable)."),
    witnesses: list[str] = typer.Option([], "--witness", help="A witness's verifier key (or "
                                        "a file holding it) whose cosignature counts "
                                        "towards --quorum on every --checkpoint "
                                        "(repeatable)."),
    quorum: int = typer.Option(None, "--quorum", help="How many distinct --witness keys must "
                               "have cosigned each --checkpoint (default: every --witness)."),
    as_json: bool = state.json_flag(),
    strict: bool = typer.Option(False, "--strict", help="Also check that every stored entry "
                                "is exactly RFC 8785 canonical and every body passes its "
                                "schema (slower)."),
    tsa_cert: str = typer.Option(None, "--tsa-cert", metavar="FILE", help="The certificate "
                                 "(PEM, with its chain) of the time-stamping authority every "
                                 "`timestamp` entry must be signed by; each is then said: "
                                 "\"checkpoint at size N existed by TIME\"."),
) -> None:
    """Verify digests, chain, signatures, references and derived tables; exit 1 on any finding.

    A published ledger (a folder or URL) is verified from its tiles and entries alone: every
    tile, entry bundle and signed entry, the root its checkpoint signs, and that checkpoint's
    signature (by the --trust key when given).

    With --checkpoint: also that the checkpoint is signed by a key of the ledger (by the
    --trust key when given), names this ledger, and that the ledger extends it (not cut,
    rewritten or forked), by a consistency proof from its size to the current head.
    With --witness: also that each --checkpoint carries valid cosignatures by --quorum of
    the given witnesses.

    Every `timestamp` entry is checked: it stamps a checkpoint the entries give; with
    --tsa-cert, its token is signed by that TSA, and each is said ("checkpoint at size N
    existed by TIME").
    """
    from contextlib import contextmanager

    from logbook.cli.progress import progress
    from logbook.verify.command import verify as verify_any

    @contextmanager
    def store() -> Iterator[tuple[Any, int]]:
        with state.open_ledger() as ledger:
            yield ledger.entry_log, ledger.size()

    certs = (tsa_cert, state.read_input(tsa_cert, "--tsa-cert")) if tsa_cert else None
    done = verify_any(file, trust, checkpoints, witnesses, quorum, strict, store,
                      lambda what, size: progress(what, size=size), certs)
    if as_json:
        state.emit_json(done.as_dict())
    else:
        out, err = done.lines()
        for line in err:
            print(line, file=sys.stderr)
        print("\n".join(out))
    if not done.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(verify)
