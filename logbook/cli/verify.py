"""`logbook verify`: the auditor's tool. Needs no private key; opens the ledger read-only and
never writes to it (an auditor's copy may sit on read-only media)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

import typer

from logbook.cli import state
from logbook.errors import InputError


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
    """
    from logbook.verify import chain as v
    from logbook.verify import stored as verify_ledger
    from logbook.verify.checkpoint import check_against, read_checkpoint, read_trust_key
    from logbook.verify.cosignatures import witness_policy
    from logbook.verify.summary import quotable_line

    trusted, trusted_key = read_trust_key(trust) if trust else (None, None)
    for cp in checkpoints:
        read_checkpoint(cp)  # a missing or malformed file is bad input: exit 2 before any work
    witnessed = witness_policy(witnesses, quorum)
    if witnessed is not None and not checkpoints:
        raise InputError("--witness checks the cosignatures of a --checkpoint: give one")
    published = None
    if file is not None and _is_published(file):
        from logbook.cli.progress import progress
        from logbook.verify.published import open_source, verify_published

        with progress("verifying") as on_progress:
            published = verify_published(open_source(file), trusted, trusted_key,
                                         strict=strict, on_progress=on_progress)
        result = published.result
    elif file is not None:
        from logbook.files import bounded_lines
        from logbook.limits import MAX_LINE_BYTES

        with _export_stream(file) as fh:
            result = v.verify_export_lines(bounded_lines(fh, file, MAX_LINE_BYTES), trusted,
                                           source=file, strict=strict)
    else:
        # one read transaction for every check: appends made meanwhile are not seen
        from logbook.cli.progress import progress

        with state.open_ledger() as ledger, \
                progress("verifying", size=ledger.size()) as on_progress:
            result = verify_ledger.verify_store(ledger.verify_reads(), trusted, strict=strict,
                                                on_progress=on_progress)
    # from the digests verify recomputed from the entries' bytes, never the stored tree
    checked = [check_against(result, cp, trusted_key, trusted, witnessed) for cp in checkpoints]
    out = result.as_dict()
    if checked:
        out["checkpoints"] = [c.as_dict() for c in checked]
    if published is not None:
        out["published"] = {"size": published.checkpoint[0].size,
                            "root": published.checkpoint[0].root.hex(),
                            "signed_by": published.signed_by}
    if as_json:
        state.emit_json(out)
    else:
        for f in result.findings:
            where = f"entry {f.seq}: " if f.seq is not None and "entry" not in f.message else ""
            print(f"FAIL [{f.check}] {where}{f.message}")
        for c in checked:
            if c.ok:
                print(f"checkpoint {c.path}: the ledger extends it (size {c.size}, signed by "
                      f"{(c.signed_by or '?')[:16]}…" + (f"; cosigned by at least {witnessed[1]} "
                                                        "of the given witnesses)"
                                                        if witnessed else ")"))
        if result.ok and published is not None:
            print(f"verified {result.entries} entries of the ledger {result.ledger} published "
                  f"at {file}: its tiles give the root its checkpoint signs (size "
                  f"{published.checkpoint[0].size}, signed by {(published.signed_by or '?')[:16]}"
                  "…)")
        elif result.ok:
            print(f"verified {result.entries} entries of ledger {result.ledger}; "
                  f"head {result.head}" + (f"; trusted key {trusted[:16]}…" if trusted else ""))
        else:
            print(f"{len(result.findings)} finding(s) in {result.entries} entries",
                  file=sys.stderr)
        what = ["digests", "chain", "signatures", "references"]
        what += ["tiles"] if published is not None else [] if file is not None else ["derived"]
        what += (["strict"] if strict else []) + (["checkpoints"] if checked else [])
        print(quotable_line(result, trusted, what))
    if not result.ok:
        raise typer.Exit(1)


def _is_published(file: str) -> bool:
    from logbook.verify.published import is_published

    return is_published(file)


def _export_stream(file: str) -> BinaryIO:
    """The export FILE to read line by line: a regular file opened as it is; stdin (``-``), a
    FIFO or a pipe (``verify <(cat export.jsonl)``) or a device read whole with logbook's
    bound and read timeout; anything else refused with a sentence saying what it is."""
    import io

    from logbook.files import read_bytes, read_stdin

    if file == "-":
        return io.BytesIO(read_stdin("FILE -"))
    path = Path(file)
    if path.is_file():
        try:
            return path.open("rb")
        except OSError as exc:
            raise InputError(f"FILE {file} cannot be read: {exc.strerror}") from None
    # missing, a directory, a FIFO with no writer, too large: read_bytes names what is wrong
    return io.BytesIO(read_bytes(file, "FILE"))


def register(app: typer.Typer) -> None:
    app.command()(verify)
