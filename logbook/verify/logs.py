"""`verify`'s check of the logs runs keep (docs/auditing.md, check `log`).

Each run's ``logs[]`` reference names its log by sha256 and size; the bytes are kept by the
store (files beside a SQLite ledger, the ``blobs`` table of a PostgreSQL one) and read back
through the auditor's port (``EntryLog.blob``) with a bound: at most the size the
reference records, plus one byte to see a longer blob. A blob that does not hash to its name
was altered (an error naming the run and the log). A missing blob is an error too, unless the
run itself says that this log was not kept (``capture.blobs.not_kept``: a full disk, a
ledger that could not be opened, a PostgreSQL ledger before it kept logs).

The analysis check (logbook.verify.integrity) leaves this to `verify`: the figures come from
the entries alone, which the chain and signatures bind, and hashing every log on every
report would read up to 256 MiB a log for nothing the report prints.

A run's item traces (``traces``: sha256 and size, logbook.ledger.traces) are checked here as
one more log named "item traces": they are never "not kept", so a missing one is an error;
so is a check's ``evidence`` file (logbook.model.checks).
"""

from __future__ import annotations

import hashlib
from typing import Any

from logbook.capture.blobs import not_kept
from logbook.findings import Finding
from logbook.storage.base import MAX_BLOB_BYTES, EntryLog, is_blob_name

_PHRASES = ("could not be kept", "was not kept")  # the second: runs of older PostgreSQL ledgers
_OK, _MISSING, _ALTERED = "ok", "missing", "altered"


class LogRefs:
    """The log references of every run `verify` read, gathered as it reads them, checked once
    the scan is done (``check``)."""

    def __init__(self) -> None:
        self.runs: list[tuple[int, str, list[Any], str, str]] = []

    def add(self, seq: int, digest: str, env: dict[str, Any]) -> None:
        body = env.get("body")
        if env.get("kind") == "check" and type(body) is dict and body.get("evidence") is not None:
            self.runs.append((seq, digest, [body["evidence"]], "", "check"))  # its evidence
            return
        if env.get("kind") != "run" or type(body) is not dict:
            return
        logs, reason = body.get("logs"), body.get("reason")
        logs = list(logs) if type(logs) is list else []
        traces = body.get("traces")  # item traces are kept as a log is (logbook.ledger.traces)
        if traces is not None:
            logs.append({**traces, "name": "item traces"} if type(traces) is dict else traces)
        if logs:
            self.runs.append((seq, digest, logs, reason if isinstance(reason, str) else "", "run"))

    def check(self, store: EntryLog) -> tuple[int, list[Finding]]:
        """(checks made, findings): every reference against the blob it names."""
        seen: dict[tuple[str, int], str] = {}  # a log many runs name is read once
        findings = []
        for seq, digest, logs, reason, what in self.runs:
            for ref in logs:
                problem = _check_ref(store, ref, reason, seen)
                if problem is not None:
                    findings.append(Finding("log", "error", f"{what} {seq}: {problem}", seq,
                                            [digest]))
        return 1, findings


def _check_ref(store: EntryLog, ref: Any, reason: str,
               seen: dict[tuple[str, int], str]) -> str | None:
    name = ref.get("name") if type(ref) is dict else None
    sha, size = (ref.get("sha256"), ref.get("size")) if type(ref) is dict else (None, None)
    hex_digest = sha.removeprefix("sha256:") if isinstance(sha, str) else ""
    if (not isinstance(name, str) or not isinstance(sha, str) or not sha.startswith("sha256:")
            or not is_blob_name(hex_digest) or type(size) is not int or size < 0):
        return f"a log reference is not {{name, sha256: \"sha256:<64 hex>\", size}}: {ref!r:.120}"
    verdict = seen.get((hex_digest, size))
    if verdict is None:
        verdict = _verdict(store, hex_digest, size)
        seen[(hex_digest, size)] = verdict
    if verdict == _ALTERED:
        return (f"the kept log {name!r} does not hash to its sha256:{hex_digest[:16]}… "
                f"({size} bytes): the blob was altered")
    if verdict == _MISSING:
        said = not_kept(name, size, hex_digest).removesuffix(_PHRASES[0])
        if not any(said + phrase in reason for phrase in _PHRASES):
            return (f"the log {name!r} (sha256:{hex_digest[:16]}…, {size} bytes) is not kept, "
                    "and the run does not say it was not: the blob was deleted")
    return None


def _verdict(store: EntryLog, hex_digest: str, size: int) -> str:
    data = store.blob(hex_digest, min(size, MAX_BLOB_BYTES) + 1)
    if data is None:
        return _MISSING
    if len(data) != size or hashlib.sha256(data).hexdigest() != hex_digest:
        return _ALTERED
    return _OK
