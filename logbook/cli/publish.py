"""`logbook publish DIR | mirror SOURCE DEST` (docs/publishing.md): the ledger as static C2SP
tlog-tiles, and a verified copy of one kept up to date."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from logbook.cli import state
from logbook.errors import InputError


def publish(
    directory: str = typer.Argument(..., metavar="DIR", help="The folder to publish into "
                                    "(created if missing); serve it with any static web "
                                    "server."),
    witnesses: list[str] = typer.Option([], "--witness", help="URL=VERIFIER_KEY of a witness "
                                        "to cosign the published checkpoint (repeatable)."),
    quorum: int = typer.Option(None, "--quorum", help="How many witnesses must cosign "
                               "(default: every --witness)."),
    timeout: float = typer.Option(None, "--timeout", help="Seconds to wait for each witness "
                                  "(default: LOGBOOK_READ_TIMEOUT, 30)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Publish the ledger as C2SP tlog-tiles: checkpoint, tiles, entry bundles, signed entries.

    A new checkpoint is signed (with your key) when the ledger grew since the last one.
    Publishing again writes only what changed; tiles already published are never rewritten.
    With --witness, the published checkpoint is then replaced by the same one cosigned by
    the witnesses; fewer than --quorum is exit 1 (DIR keeps the checkpoint uncosigned).
    """
    from logbook.cli.proofs import cosign, witness_options
    from logbook.crypto.signing import load_key
    from logbook.ledger.publish import held_checkpoint, put_checkpoint
    from logbook.ledger.publish import publish as publish_ledger

    targets, need, wait = witness_options(witnesses, quorum, timeout)
    dest = Path(directory)
    if dest.exists() and not dest.is_dir():
        raise InputError(f"DIR {directory} is not a folder")
    previous = held_checkpoint(dest) if targets else None
    from logbook.cli.progress import progress

    with state.open_ledger(write=True) as ledger:
        with progress("publishing", size=ledger.size()) as on_progress:
            done = publish_ledger(ledger, dest, load_key, on_progress)
        if targets:
            written = held_checkpoint(dest)
            assert written is not None  # publish_ledger has just written it
            cosigned = cosign(ledger, written, targets, need, wait, dest.parent, previous)
            put_checkpoint(dest, cosigned)
    if as_json:
        state.emit_json({"size": done.size, "new_checkpoint": done.new_checkpoint,
                         "written": done.written, "unchanged": done.kept,
                         "witnessed": bool(targets)})
        return
    made = "a new checkpoint" if done.new_checkpoint else "the latest checkpoint"
    print(f"published {done.size} entries with {made} to {directory}: "
          f"{len(done.written)} file(s) written, {done.kept} unchanged")


def mirror(
    source: str = typer.Argument(..., metavar="SOURCE", help="The published ledger: an "
                                 "http(s):// URL or a folder."),
    dest: str = typer.Argument(..., metavar="DEST", help="The folder of the verified copy "
                               "(created if missing)."),
    trust: str = typer.Option(None, "--trust", help="A key fingerprint, public-key file or "
                              "C2SP verifier key that must have signed the checkpoint."),
    witnesses: list[str] = typer.Option([], "--witness", help="A witness's verifier key (or a "
                                        "file holding it) whose cosignature on SOURCE's "
                                        "checkpoint counts towards --quorum (repeatable)."),
    quorum: int = typer.Option(None, "--quorum", help="How many distinct --witness keys must "
                               "have cosigned the checkpoint (default: every --witness)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Keep a verified copy of a published ledger, and catch a log that forks or rolls back.

    The new checkpoint must extend the last one kept in DEST (a consistency proof computed
    from the tiles); if it does not, this prints SECURITY ERROR, keeps both checkpoints as
    evidence and exits 1. Only new tiles and entries are fetched. With --witness, the
    checkpoint must also carry valid cosignatures by --quorum of the given witnesses.
    """
    from logbook.verify.checkpoint import read_trust_key
    from logbook.verify.cosignatures import witness_policy
    from logbook.verify.mirror import SecurityError, mirror_once
    from logbook.verify.published import open_source

    trusted, trusted_key = read_trust_key(trust) if trust else (None, None)
    where = Path(dest)
    if where.exists() and not where.is_dir():
        raise InputError(f"DEST {dest} is not a folder")
    from logbook.cli.progress import progress

    try:
        with progress("mirroring") as on_progress:
            done = mirror_once(open_source(source), where, trusted, trusted_key,
                               witness_policy(witnesses, quorum), on_progress)
    except SecurityError as exc:
        print(f"SECURITY ERROR: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    result = done.result
    if as_json:
        state.emit_json({**result.as_dict(), "size": done.size, "old_size": done.old_size,
                         "fetched": done.fetched})
    else:
        for f in result.findings:
            print(f"FAIL [{f.check}] {f.message}")
        if result.ok:
            print(f"mirrored {done.size} entries of ledger {result.ledger} into {dest} "
                  f"(from size {done.old_size}; {len(done.fetched)} file(s) fetched)")
        else:
            print(f"{len(result.findings)} finding(s): {dest} was not updated", file=sys.stderr)
    if not result.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(publish)
    app.command()(mirror)
