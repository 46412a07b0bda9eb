"""`logbook checkpoint | prove | verify-proof` (DESIGN §4.2): signed tree heads and proofs."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import typer

from logbook.cli import state
from logbook.errors import CheckFailed, InputError

NOT_CHECKED = "the checkpoint's signature was NOT checked (no --trust)"


def checkpoint(
    out: str = typer.Option(None, "--out", help="File to write the checkpoint to (default: "
                            "stdout)."),
    as_json: bool = typer.Option(False, "--json", help="Print size, root, note and verifier "
                                 "key as JSON."),
    witnesses: list[str] = typer.Option([], "--witness", help="URL=VERIFIER_KEY of a witness "
                                        "(C2SP tlog-witness) to cosign the checkpoint "
                                        "(repeatable)."),
    quorum: int = typer.Option(None, "--quorum", help="How many witnesses must cosign "
                               "(default: every --witness)."),
    timeout: float = typer.Option(None, "--timeout", help="Seconds to wait for each witness "
                                  "and the TSA (default: LOGBOOK_READ_TIMEOUT, 30)."),
    timestamp: str = typer.Option(None, "--timestamp", metavar="URL", help="An RFC 3161 "
                                  "time-stamping authority to stamp the checkpoint; its token "
                                  "is appended as a `timestamp` entry."),
    tsa_cert: str = typer.Option(None, "--tsa-cert", metavar="FILE", help="With --timestamp: "
                                 "the TSA's certificate (PEM, with its chain) its token must "
                                 "verify under before it is kept."),
) -> None:
    """Sign the ledger's current Merkle root as a C2SP checkpoint and keep it in the ledger.

    Publish the note (commit it, print it in a paper, post it): anyone holding it can later
    check that the ledger they are shown extends it (`logbook verify --checkpoint FILE`).

    With --witness: each witness is asked, in parallel, to cosign it; their cosignatures are
    appended to the note, and fewer than --quorum is exit 1 with nothing kept or written.

    With --timestamp: a time-stamping authority stamps the checkpoint (RFC 3161), and its
    token is appended as a `timestamp` entry: outside time that `logbook verify --tsa-cert`
    checks and the audit uses.
    """
    from logbook.crypto.signing import load_key
    from logbook.files import atomic_writer
    from logbook.ledger.checkpoints import describe, make_checkpoint
    from logbook.ledger.read_model import checked_copy_of

    targets, need, wait = witness_options(witnesses, quorum, timeout)
    stamp_at, certs = timestamp_options(timestamp, tsa_cert)
    previous = previous_note(out) if targets else None
    made: list[str] = []
    # --out is opened (as a temporary file beside it, or written through when it is a device
    # or FIFO) before anything is signed or kept: a path that cannot be written is refused with
    # the ledger unchanged, and the temporary file is removed whatever fails
    with atomic_writer(out, "--out") if out is not None else nullcontext() as fh:
        key = load_key()
        with state.open_ledger(write=True) as ledger, \
                checked_copy_of(ledger) as copy:

            def publish(note: str) -> None:  # cosigned and on disk before it is kept
                if targets:
                    note = cosign(ledger, note, targets, need, wait, _beside(out), previous)
                if fh is not None:
                    fh.write(note)
                    fh.commit()
                made.append(note)

            make_checkpoint(ledger, key, publish, copy)  # exit 1 if it does not verify
    note = made[0]
    shown = describe(note, key.public)
    if out is not None:
        print(f"wrote checkpoint of size {shown['size']} to {out}", file=sys.stderr)
    if as_json:
        state.emit_json(shown)
    elif out is None:
        sys.stdout.write(note)
    if stamp_at is not None:  # the checkpoint is kept and shown whatever the TSA answers
        from logbook.ledger.stamping import stamp

        sys.stdout.flush()
        with state.open_ledger(write=True) as ledger:
            stamped = stamp(ledger, key, note, stamp_at, wait, certs)
        print(f"logbook: checkpoint at size {stamped.body['size']} stamped by "
              f"{stamped.body['tsa']} at {stamped.body['time']} (timestamp @{stamped.seq})",
              file=sys.stderr)


def witness_options(witnesses: list[str], quorum: int | None,
                     timeout: float | None) -> tuple[list[Any], int, float]:
    from logbook import config
    from logbook.witness.client import parse_target

    targets = [parse_target(w) for w in witnesses]
    if len({(t.key.name, t.key.public) for t in targets}) != len(targets):
        raise InputError("--witness: a witness key is given twice; each counts once")
    if quorum is not None and not targets:
        raise InputError("--quorum needs at least one --witness")
    need = len(targets) if quorum is None else quorum
    if targets and not 1 <= need <= len(targets):
        raise InputError(f"--quorum {need} is not between 1 and the {len(targets)} "
                         "--witness given")
    if timeout is not None and not 0 < timeout <= 86400:
        raise InputError(f"--timeout {timeout} is not a number of seconds above 0")
    return targets, need, timeout if timeout is not None else config.read_timeout()


def timestamp_options(url: str | None, tsa_cert: str | None) -> tuple[str | None, Any]:
    """--timestamp's URL and --tsa-cert's certificates, checked before anything is signed."""
    from logbook.crypto.timestamps import load_certificates
    from logbook.ledger.stamping import tsa_url

    if tsa_cert is not None and url is None:
        raise InputError("--tsa-cert goes with --timestamp URL")
    certs = load_certificates(state.read_input(tsa_cert, "--tsa-cert"),
                              f"--tsa-cert {tsa_cert}") if tsa_cert is not None else None
    return (tsa_url(url) if url is not None else None), certs


def previous_note(out: str | Path | None) -> str | None:
    """The checkpoint --out holds from the last run: the sizes its witnesses cosigned."""
    if out is None or not Path(out).is_file():
        return None
    try:
        return Path(out).read_text(encoding="utf-8")[:64 * 1024]
    except (OSError, UnicodeDecodeError):
        return None


def _beside(out: str | None) -> Path:
    return Path(out).parent if out is not None else Path.cwd()


def cosign(ledger: Any, note: str, targets: list[Any], need: int, wait: float,
           evidence: Path, previous: str | None) -> str:
    """`note` with the cosignatures of `targets` (CheckFailed below `need`), the proofs cut
    from the tree recomputed from the ledger's entries; refusals are said on stderr."""
    import threading

    from logbook.ledger.checkpoints import consistency_proof
    from logbook.verify.tree import recomputed_tree
    from logbook.witness.client import gather_cosignatures

    tree = recomputed_tree(ledger.entry_log)
    lock = threading.Lock()

    def prove(old: int) -> list[bytes]:
        with lock:
            proof = consistency_proof(ledger, old, tree.size, tree)
        return [bytes.fromhex(h) for h in proof["path"]]

    cosigned, asked = gather_cosignatures(note, targets, need, prove, wait, evidence, previous)
    for a in asked:
        if a.line is None:
            print(f"witness {a.target.shown} did not cosign: {a.refusal}", file=sys.stderr)
    return cosigned


def _ledger_checkpoint(ledger: Any, file: str | None, tree: Any) -> Any:
    """The checkpoint to prove against (FILE, or the latest kept), checked against the ledger."""
    from logbook.ledger.checkpoints import latest_checkpoint
    from logbook.verify.checkpoint import read_checkpoint
    from logbook.verify.proofs import origin_of

    if file is not None:
        _, (cp, _) = read_checkpoint(file)
        name = f"--checkpoint {file}"
    else:
        try:
            found = latest_checkpoint(ledger)
        except InputError as exc:  # the store's own row, not the user's input
            raise CheckFailed(f"the latest checkpoint kept in the ledger is damaged ({exc}; "
                              "`logbook verify` lists what is wrong)") from None
        if found is None:
            raise InputError("no checkpoint has been made in this ledger: run `logbook "
                             "checkpoint` first, or pass --checkpoint FILE")
        _, (cp, _) = found
        name = "the latest checkpoint"
    if cp.origin != origin_of(ledger.uuid):
        raise InputError(f"{name} is for {cp.origin}, not this ledger ({origin_of(ledger.uuid)})")
    size = tree.size
    if cp.size > size:
        raise CheckFailed(f"{name} has size {cp.size} but the ledger has only {size} entries: "
                          "the ledger was cut (see `logbook verify --checkpoint`)")
    if cp.size == 0:
        raise InputError(f"{name} has size 0: there is nothing to prove against it")
    if tree.root(cp.size) != cp.root:
        raise CheckFailed(f"{name} does not match the ledger's root at size {cp.size}: the "
                          "ledger was rewritten or forked (see `logbook verify --checkpoint`)")
    return cp


def prove(
    ref: str = typer.Argument(None, metavar="REF", help="The entry (digest, prefix, @SEQ or "
                              "plan slug) to prove included."),
    checkpoint_file: str = typer.Option(None, "--checkpoint", help="Prove against this "
                                        "checkpoint (default: the latest one made)."),
    consistency: str = typer.Option(None, "--consistency", help="OLD.checkpoint: prove "
                                    "that the ledger extends it instead."),
    to: str = typer.Option(None, "--to", help="With --consistency: NEW.checkpoint to prove "
                           "to (default: the current head)."),
    as_json: bool = typer.Option(False, "--json", help="Print the proof as JSON, the form "
                                 "`logbook verify-proof` reads."),
) -> None:
    """Print an inclusion proof of an entry against a checkpoint, or a consistency proof.

    `logbook prove REF`: the entry is leaf REF's seq of the checkpoint's tree.
    `logbook prove --consistency OLD.checkpoint [--to NEW.checkpoint]`: the tree of OLD is a
    prefix of the current one (or of NEW's).
    """
    from logbook.ledger.checkpoints import consistency_proof, inclusion_proof
    from logbook.verify.tree import recomputed_tree

    if (ref is None) == (consistency is None):
        raise InputError("give either REF (an inclusion proof) or --consistency "
                         "OLD.checkpoint (a consistency proof)")
    if to is not None and consistency is None:
        raise InputError("--to needs --consistency OLD.checkpoint")
    if checkpoint_file is not None and consistency is not None:
        raise InputError("--checkpoint is for inclusion proofs; with --consistency use --to")
    with state.open_ledger() as ledger:
        tree = recomputed_tree(ledger.entry_log)  # exit 1 when the stored tree disagrees
        if ref is not None:
            cp = _ledger_checkpoint(ledger, checkpoint_file, tree)
            entry = ledger.get(ref)
            if entry.seq >= cp.size:
                raise InputError(f"REF: entry {entry.seq} is beyond the checkpoint's size "
                                 f"{cp.size} (make a newer one with `logbook checkpoint`)")
            proof = inclusion_proof(ledger, entry.seq, cp.size, tree)
        else:
            old = _ledger_checkpoint(ledger, consistency, tree)
            size = tree.size if to is None else _ledger_checkpoint(ledger, to, tree).size
            if size < old.size:
                raise InputError(f"--to {to} has size {size}, smaller than the old "
                                 f"checkpoint's {old.size}")
            proof = consistency_proof(ledger, old.size, size, tree)
    if as_json:
        state.emit_json(proof)
        return
    if "index" in proof:
        print(f"entry {proof['index']} ({proof['leaf']}) is in the tree of {proof['size']} "
              f"entries with root {proof['root']}")
    else:
        print(f"the tree of {proof['old_size']} entries (root {proof['old_root']}) is a prefix "
              f"of the tree of {proof['size']} entries (root {proof['root']})")
    print(f"path ({len(proof['path'])} hashes): " + " ".join(proof["path"]))
    print("(use --json to save the proof for `logbook verify-proof`)", file=sys.stderr)


def verify_proof(
    proof_file: str = typer.Argument(..., metavar="PROOF.json", help="A proof as `logbook "
                                     "prove --json` prints it, or - for stdin."),
    checkpoint_file: str = typer.Option(..., "--checkpoint", help="The checkpoint the proof "
                                        "is against (e.g. the one printed in a paper)."),
    trust: str = typer.Option(None, "--trust", help="The public key that must have signed "
                              "the checkpoint: an exported public-key file or a C2SP "
                              "verifier key string."),
    entry_file: str = typer.Option(None, "--entry", help="With an inclusion proof: the entry "
                                   "(an exported line or an envelope) whose digest must be "
                                   "the proof's leaf."),
    old_checkpoint: str = typer.Option(None, "--old-checkpoint", help="With a consistency "
                                       "proof: the earlier checkpoint, which binds old_size "
                                       "and old_root."),
    as_json: bool = state.json_flag(),
) -> None:
    """Check a proof offline, with no ledger: exit 0 when it holds, 1 when it does not."""
    from logbook.verify.checkpoint import read_checkpoint, read_trust_key
    from logbook.verify.proofs import entry_digest, parse_proof
    from logbook.verify.proofs import verify_proof as check_proof

    name = "stdin" if proof_file == "-" else proof_file
    proof = parse_proof(state.parse_json(state.read_input(proof_file, "PROOF"), name), name)
    _, parsed = read_checkpoint(checkpoint_file)
    old = read_checkpoint(old_checkpoint, "--old-checkpoint")[1] if old_checkpoint else None
    if old is not None and proof.kind != "consistency":
        raise InputError("--old-checkpoint is for consistency proofs; this is an inclusion "
                         "proof")
    entry = None
    if entry_file is not None:
        if proof.kind != "inclusion":
            raise InputError("--entry is for inclusion proofs; this is a consistency proof")
        entry = entry_digest(state.parse_json(state.read_input(entry_file, "--entry"),
                                              entry_file), entry_file)
    key = None
    if trust is not None:
        fingerprint, key = read_trust_key(trust)
        if key is None:
            raise InputError(f"--trust {fingerprint[:16]}…: a fingerprint cannot check a "
                             "signature without the ledger; pass the public-key file "
                             "(`logbook keys export`) or the verifier key string")
    result = check_proof(proof, parsed, key, entry, old)
    if as_json:
        state.emit_json({"ok": result.ok, "kind": proof.kind, "ledger": proof.ledger,
                         "size": proof.size, "root": proof.root.hex(),
                         "signature_checked": result.signature_checked,
                         "entry_checked": result.entry_checked, "failures": result.failures})
    else:
        for message in result.failures:
            print(f"FAIL {message}")
        if result.ok:
            what = (f"entry {proof.index} is in" if proof.kind == "inclusion" else
                    f"the tree of {proof.old_size} entries is a prefix of")
            print(f"proof holds: {what} the tree of {proof.size} entries of ledger "
                  f"{proof.ledger} with root {proof.root.hex()}")
            if result.entry_checked:
                print(f"the entry in {entry_file} is leaf {proof.index}")
            if result.signature_checked and key is not None:
                which = "both checkpoints are" if old is not None else "the checkpoint is"
                print(f"{which} signed by the trusted key {key.fingerprint}")
    if not result.signature_checked:
        print(NOT_CHECKED, file=sys.stderr if as_json else sys.stdout)
    if not result.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(checkpoint)
    app.command()(prove)
    app.command("verify-proof")(verify_proof)
