"""Asking witnesses to cosign a checkpoint: `logbook checkpoint --witness URL=KEY --quorum N`.

Each witness is asked in parallel, each request with the read timeout. A request starts from
the size the witness is known to have cosigned (its cosignature on the previous checkpoint
the caller kept), else 0; a 409 gives the witness's size, and the request is made once more
from there. A 422, or a 409 naming the new checkpoint's own size (the witness holds another
root at that size), is a fork: the request and the answer are kept as evidence in a file.
Cosignatures that verify with the witness's key are appended to the note; fewer than the
quorum is a CheckFailed naming the witnesses that did not cosign.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from logbook.errors import CheckFailed, EnvironmentProblem, InputError
from logbook.files import atomic_writer
from logbook.tlog.checkpoint import parse_checkpoint
from logbook.tlog.note import parse_note
from logbook.tlog.witness import encode_request, parse_size
from logbook.verify.cosignatures import WitnessKey, check_cosignatures, read_witness_key

__all__ = ["Asked", "WitnessTarget", "gather_cosignatures", "parse_target"]

Prove = Callable[[int], list[bytes]]
_ANSWER_LIMIT = 64 * 1024


@dataclass(frozen=True)
class WitnessTarget:
    url: str
    key: WitnessKey

    @property
    def shown(self) -> str:
        """The URL as messages and evidence name it: without its credentials."""
        return _shown(self.url)


def _shown(url: str) -> str:
    from logbook.capture.redact import strip_url_credentials

    return strip_url_credentials(url)


def parse_target(value: str) -> WitnessTarget:
    """`--witness URL=VERIFIER_KEY` (the URL is the witness's submission prefix)."""
    url, sep, vkey = value.partition("=")
    if not sep or not url.startswith(("http://", "https://")):
        from logbook.capture.redact import scrub_urls

        raise InputError(f"--witness {scrub_urls(value)!r} is not URL=VERIFIER_KEY with an "
                         "http(s) URL")
    return WitnessTarget(url.rstrip("/"), read_witness_key(vkey, f"--witness {_shown(url)}"))


@dataclass
class Asked:
    """One witness's outcome: its cosignature line, or why there is none (and evidence)."""

    target: WitnessTarget
    line: str | None = None
    refusal: str | None = None
    evidence: Path | None = None


def _post(target: WitnessTarget, body: bytes, timeout: float) -> tuple[int, bytes, str]:
    from logbook.verify.fetch import request

    answer = request(target.url + "/add-checkpoint", target.shown + "/add-checkpoint",
                     _ANSWER_LIMIT, timeout, method="POST", body=body,
                     headers={"Content-Type": "text/plain"},
                     per="--timeout, or LOGBOOK_READ_TIMEOUT")
    return answer.status, answer.body[:_ANSWER_LIMIT], answer.content_type


def _keep(evidence_dir: Path, target: WitnessTarget, size: int, status: int, body: bytes,
          answer: bytes) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in target.key.name)
    path = evidence_dir / f"witness-evidence.{size}.{safe}.{status}"
    text = (f"# {target.shown} answered HTTP {status} to this add-checkpoint request\n"
            f"# answer: {answer.decode('utf-8', 'replace').strip()}\n").encode()
    with atomic_writer(path, "the witness evidence") as fh:
        fh.write_bytes(text + body)
    return path


def _ask(target: WitnessTarget, note: str, size: int, known: int, prove: Prove,
         timeout: float, evidence_dir: Path) -> Asked:
    out = Asked(target)
    old = known if known <= size else 0
    for attempt in range(2):
        proof = prove(old) if 0 < old < size else []
        body = encode_request(old, proof, note)
        try:
            status, answer, ctype = _post(target, body, timeout)
        except (EnvironmentProblem, InputError) as exc:
            out.refusal = f"cannot be reached ({exc})"
            return out
        if status == 200:
            return _accept(out, note, answer)
        if status == 409 and attempt == 0 and ctype.startswith("text/x.tlog.size"):
            try:
                held = parse_size(answer)
            except InputError as exc:
                out.refusal = f"answered 409 with {exc}"
                return out
            if held > size:
                out.refusal = (f"holds a checkpoint of size {held}, larger than this one's "
                               f"{size}: the ledger was cut or another history was cosigned")
                return out
            if held != old:
                old = held
                continue
        if status == 422 or (status == 409 and old == size):
            out.evidence = _keep(evidence_dir, target, size, status, body, answer)
            out.refusal = (f"answered {status}: it holds another history of this ledger "
                           f"(a fork; evidence in {out.evidence})")
            return out
        reason = answer.decode("utf-8", "replace").strip()[:200]
        out.refusal = f"answered HTTP {status}" + (f" ({reason})" if reason else "")
        return out
    return out  # pragma: no cover - the loop returns


def _accept(out: Asked, note: str, answer: bytes) -> Asked:
    """Keep the answer's cosignature lines by the witness's key that verify on the note."""
    text = answer.decode("utf-8", "replace")
    lines = [ln + "\n" for ln in text.split("\n") if ln]
    good = []
    for line in lines:
        try:
            found = check_cosignatures(note + line, [out.target.key])
        except InputError:
            continue
        if found.bad:
            out.refusal = f"sent a cosignature that does not verify: {found.bad[0]}"
            return out
        if found.valid:
            good.append(line)
    if not good:
        out.refusal = "answered 200 without a cosignature by its key"
        return out
    out.line = "".join(good)
    return out


def known_sizes(previous: str | None, targets: Sequence[WitnessTarget]) -> dict[str, int]:
    """The size each witness cosigned on `previous` (a checkpoint the caller kept), by URL."""
    if previous is None:
        return {}
    try:
        cp, _ = parse_checkpoint(previous)
    except InputError:
        return {}
    out = {}
    for t in targets:
        try:
            if check_cosignatures(previous, [t.key]).valid:
                out[t.url] = cp.size
        except InputError:
            continue
    return out


def gather_cosignatures(note: str, targets: Sequence[WitnessTarget], quorum: int,
                        prove: Prove, timeout: float, evidence_dir: Path,
                        previous: str | None = None) -> tuple[str, list[Asked]]:
    """The note with the cosignatures gathered appended; CheckFailed below the quorum."""
    cp, _ = parse_checkpoint(note)
    known = known_sizes(previous, targets)
    with ThreadPoolExecutor(max_workers=max(1, len(targets))) as pool:
        futures = [pool.submit(_ask, t, note, cp.size, known.get(t.url, 0), prove, timeout,
                               evidence_dir) for t in targets]
        asked = [f.result() for f in futures]
    cosigned = note + "".join(a.line for a in asked if a.line is not None)
    parse_note(cosigned)  # still a note we accept ourselves
    got = sum(1 for a in asked if a.line is not None)
    if got < quorum:
        refused = "; ".join(f"{a.target.shown} {a.refusal}" for a in asked if a.line is None)
        raise CheckFailed(f"{got} of the {quorum} witness cosignature(s) required: {refused}")
    return cosigned, asked
