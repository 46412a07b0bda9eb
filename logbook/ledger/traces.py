"""Item traces kept at append (docs/format.md §5, "Item traces"; their format and reading:
logbook.format.traces): what each item of a run was asked, answered and judged, kept as text
beside the ledger and named from the run.

A run draft may carry ``traces`` as a list of rows, one per outcome row it describes::

    {"id": "q7", "sample": 1, "prompt": "...", "output": "...", "target": "...",
     "verdict": "...", "explanation": "..."}

(``sample`` only when the outcomes have a sample column; every text field optional). At
append the rows are checked against the run's outcomes (each names an outcome row, once),
each text is scrubbed through the one redaction policy (logbook.capture.redact) and cut at
``MAX_TEXT`` characters, and the rows are written as JSON Lines (sorted keys, in the
outcomes' order), compressed as one zstd frame and kept as a blob under its SHA-256. The run
keeps only the reference ``{"sha256": "sha256:<hex>", "size": <bytes>, "items": <rows>}``, so
the entry stays small and its digest binds every trace. `verify` checks the blob as it checks
a log (logbook.verify.logs).

A run whose items are committed (logbook.format.commitments) keeps no traces: they would
show what the commitment hides.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import orjson

from logbook.errors import InputError
from logbook.format.traces import CUT, FIELDS, MAX_RAW, MAX_TEXT, TEXTS
from logbook.storage.base import MAX_BLOB_BYTES


@dataclass(frozen=True)
class Packed:
    """A run's traces made ready to keep: the blob's bytes, its name and the body's reference."""

    data: bytes
    digest: str
    ref: dict[str, Any]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + CUT.format(n=len(text) - MAX_TEXT)


def pack(body: dict[str, Any]) -> Packed | None:
    """The traces of a run draft whose ``traces`` is a list of rows, packed; None when the
    draft has none to pack (no traces, or a reference already). An InputError naming the
    field when a row is not one of the outcomes' rows or is malformed."""
    rows = body.get("traces")
    if not isinstance(rows, list):
        return None
    from logbook.capture.redact import known_values, scrub_counted, secret_env_values

    outcomes = body.get("outcomes")
    if not isinstance(outcomes, dict) or not isinstance(outcomes.get("id"), list):
        raise InputError("traces: a run with traces needs its outcomes (each trace names an "
                         "outcome row)")
    if outcomes.get("commitment") is not None:
        raise InputError("traces: a run with committed items keeps no traces (they would show "
                         "what the commitments hide)")
    given = outcomes.get("sample")
    with_sample = isinstance(given, list)
    samples: list[Any] = given if isinstance(given, list) else [None] * len(outcomes["id"])
    keys = list(zip(outcomes["id"], samples, strict=False))
    order = {key: i for i, key in enumerate(keys)}
    secrets = known_values(secret_env_values(os.environ))
    placed: dict[int, dict[str, Any]] = {}
    for i, row in enumerate(rows):
        where = f"traces[{i}]"
        if not isinstance(row, dict):
            raise InputError(f"{where} is not an object")
        unknown = sorted(set(row) - FIELDS)
        if unknown:
            raise InputError(f"{where}.{unknown[0]} is not a trace field (the fields: "
                             f"{', '.join(sorted(FIELDS))})")
        sample = row.get("sample")
        if with_sample and (type(sample) is not int):
            raise InputError(f"{where}.sample must be the outcome row's sample (a whole number)")
        if not with_sample and sample is not None:
            raise InputError(f"{where}.sample: the outcomes have no sample column")
        at = order.get((row.get("id"), sample))
        if at is None:
            what = f"item {row.get('id')!r}" + (f" sample {sample}" if with_sample else "")
            raise InputError(f"{where}.id: {what} is not a row of outcomes.id")
        if at in placed:
            raise InputError(f"{where}.id: item {row.get('id')!r} has a trace already")
        kept: dict[str, Any] = {"id": row["id"]}
        if with_sample:
            kept["sample"] = sample
        for name in TEXTS:
            value = row.get(name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise InputError(f"{where}.{name} must be text")
            kept[name] = _cut(scrub_counted(value, secrets)[0])
        placed[at] = kept
    lines = b"".join(orjson.dumps(placed[i], option=orjson.OPT_SORT_KEYS) + b"\n"
                     for i in sorted(placed))
    if len(lines) > MAX_RAW:
        raise InputError(f"traces: {len(lines)} bytes of traces, more than the {MAX_RAW} one "
                         "run may keep")
    import zstandard

    data = zstandard.ZstdCompressor(level=9, write_content_size=True).compress(lines)
    if len(data) > MAX_BLOB_BYTES:
        raise InputError(f"traces: {len(data)} bytes compressed, more than a blob may hold")
    digest = hashlib.sha256(data).hexdigest()
    return Packed(data, digest, {"sha256": f"sha256:{digest}", "size": len(data),
                                 "items": len(placed)})


def packed(body: dict[str, Any]) -> tuple[dict[str, Any], Packed | None]:
    """``body`` with its traces replaced by their reference (an empty list left out), and what
    to keep."""
    if body.get("traces") == []:
        return {k: v for k, v in body.items() if k != "traces"}, None
    p = pack(body)
    return ({**body, "traces": p.ref} if p is not None else body), p
