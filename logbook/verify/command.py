"""What `logbook verify` does, whatever prints it: verify a ledger's store, an exported
`.jsonl` file or a published ledger (a folder or URL), then each `--checkpoint` against what was
verified, and say it in the lines the command prints (logbook.cli.verify parses the options and
prints them). Needs no private key and never writes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from logbook.errors import InputError

if TYPE_CHECKING:
    from logbook.storage.base import EntryLog
    from logbook.verify.chain import Result
    from logbook.verify.checkpoint import CheckpointCheck
    from logbook.verify.cosignatures import WitnessKey
    from logbook.verify.published import Published
    from logbook.verify.timestamps import StampCheck

Progress = Callable[[int, int], None]
# a progress bar: (what, size) -> a context giving the callback
Bar = Callable[[str, int | None], AbstractContextManager[Progress]]


@dataclass(frozen=True)
class Verification:
    """What was verified (``result``), each checkpoint against it, and the published tree
    when a published ledger was verified; ``file`` as given (None: the ledger's store)."""

    result: Result
    checkpoints: list[CheckpointCheck]
    published: Published | None
    file: str | None
    trusted: str | None
    witnessed: tuple[Sequence[WitnessKey], int] | None
    strict: bool
    stamps: list[StampCheck]  # the timestamps that hold
    tsa_checked: bool  # their signatures were checked (--tsa-cert)

    @property
    def ok(self) -> bool:
        return bool(self.result.ok)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = self.result.as_dict()
        if self.checkpoints:
            out["checkpoints"] = [c.as_dict() for c in self.checkpoints]
        if self.published is not None:
            cp = self.published.checkpoint[0]
            out["published"] = {"size": cp.size, "root": cp.root.hex(),
                                "signed_by": self.published.signed_by}
        if self.tsa_checked:
            out["timestamps"] = [s.as_dict() for s in self.stamps]
        return out

    def lines(self) -> tuple[list[str], list[str]]:
        """(stdout, stderr) lines of the text form: each finding, each checkpoint that holds,
        the verdict, and the quotable line."""
        from logbook.verify.summary import quotable_line

        result, out, err = self.result, [], []
        for f in result.findings:
            where = f"entry {f.seq}: " if f.seq is not None and "entry" not in f.message else ""
            out.append(f"FAIL [{f.check}] {where}{f.message}")
        for c in self.checkpoints:
            if c.ok:
                out.append(f"checkpoint {c.path}: the ledger extends it (size {c.size}, signed "
                           f"by {(c.signed_by or '?')[:16]}…" + (
                               f"; cosigned by at least {self.witnessed[1]} of the given "
                               "witnesses)" if self.witnessed else ")"))
        if self.tsa_checked:
            out += [s.line() for s in self.stamps]
        if result.ok and self.published is not None:
            cp = self.published.checkpoint[0]
            out.append(f"verified {result.entries} entries of the ledger {result.ledger} "
                       f"published at {self.file}: its tiles give the root its checkpoint "
                       f"signs (size {cp.size}, signed by "
                       f"{(self.published.signed_by or '?')[:16]}…)")
        elif result.ok:
            out.append(f"verified {result.entries} entries of ledger {result.ledger}; head "
                       f"{result.head}" + (f"; trusted key {self.trusted[:16]}…"
                                           if self.trusted else ""))
        else:
            err.append(f"{len(result.findings)} finding(s) in {result.entries} entries")
        what = ["digests", "chain", "signatures", "references"]
        what += ["tiles"] if self.published is not None else [] if self.file is not None \
            else ["derived"]
        what += (["strict"] if self.strict else []) + (["checkpoints"] if self.checkpoints
                                                       else [])
        what += ["timestamps"] if self.stamps and self.tsa_checked else []
        out.append(quotable_line(result, self.trusted, what))
        return out, err


def verify(file: str | None, trust: str | None, checkpoints: list[str], witnesses: list[str],
           quorum: int | None, strict: bool,
           store: Callable[[], AbstractContextManager[tuple[EntryLog, int]]],
           bar: Bar, tsa_cert: tuple[str, bytes] | None = None) -> Verification:
    """`logbook verify [FILE]`: ``store`` opens the ledger's store (its reads and size) when no
    FILE is given; ``bar`` shows progress; ``tsa_cert``: the name and bytes of the TSA
    certificates every timestamp must verify under. Bad options or files are InputError
    (exit 2) before any work."""
    from logbook.verify import export_lines
    from logbook.verify.checkpoint import check_against, read_checkpoint, read_trust_key
    from logbook.verify.cosignatures import witness_policy

    trusted, trusted_key = read_trust_key(trust) if trust else (None, None)
    for cp in checkpoints:
        read_checkpoint(cp)  # a missing or malformed file is bad input: exit 2 before any work
    witnessed = witness_policy(witnesses, quorum)
    certs = None
    if tsa_cert is not None:
        from logbook.crypto.timestamps import load_certificates

        certs = load_certificates(tsa_cert[1], f"--tsa-cert {tsa_cert[0]}")
    if witnessed is not None and not checkpoints:
        raise InputError("--witness checks the cosignatures of a --checkpoint: give one")
    published = None
    if file is not None and _is_published(file):
        from logbook.verify.published import open_source, verify_published

        with bar("verifying", None) as on_progress:
            published = verify_published(open_source(file), trusted, trusted_key,
                                         strict=strict, on_progress=on_progress)
        result = published.result
    elif file is not None:
        from logbook.files import bounded_lines
        from logbook.limits import MAX_LINE_BYTES

        with _export_stream(file) as fh:
            result = export_lines.verify_export_lines(bounded_lines(fh, file, MAX_LINE_BYTES),
                                               trusted, source=file, strict=strict)
    else:
        from logbook.verify.stored import verify_store

        # one read transaction for every check: appends made meanwhile are not seen
        with store() as (reads, size), bar("verifying", size) as on_progress:
            result = verify_store(reads, trusted, strict=strict, on_progress=on_progress)
    # from the digests verify recomputed from the entries' bytes, never the stored tree
    checked = [check_against(result, cp, trusted_key, trusted, witnessed) for cp in checkpoints]
    from logbook.verify.timestamps import check_stamps

    stamps = check_stamps(result, certs)
    return Verification(result, checked, published, file, trusted, witnessed, strict, stamps,
                        certs is not None)


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

