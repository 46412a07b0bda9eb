"""What `logbook append` (of drafts) and `logbook note` do, apart from how their options are
declared: the typer commands in logbook.cli.write and the lean start (logbook.cli.lean) both
call these, so that the two ways in behave alike. Nothing here imports typer; the ledger is the
one the command line named (``ledger``, else LOGBOOK_DIR or the working folder)."""

from __future__ import annotations

import os
import sys
from typing import Any

from logbook import config
from logbook.cli.state import open_ledger, parse_json, print_appended, read_input
from logbook.errors import InputError

DRAFT_KEYS = {"kind", "body"}


def draft(value: Any, source: str) -> tuple[str, dict[str, Any]]:
    """(kind, body) of an entry draft read from ``source``; InputError naming what is wrong."""
    if not isinstance(value, dict):
        raise InputError(f"{source}: an entry draft must be a JSON object "
                         '{"kind": ..., "body": {...}}')
    extra = sorted(set(value) - DRAFT_KEYS)
    if extra:
        raise InputError(f"{source}: {extra[0]!r} is not a field of an entry draft "
                         "(only kind and body; the envelope is written by logbook)")
    if "kind" not in value:
        raise InputError(f"{source}: kind is required")
    if not isinstance(value["kind"], str):
        raise InputError(f"{source}: kind must be a string")
    if "body" not in value:
        raise InputError(f"{source}: body is required")
    return value["kind"], value["body"]


def signing_key() -> Any:
    from logbook.crypto.signing import load_key

    return load_key()


def open_for_writing(ledger: str | None) -> Any:
    return open_ledger(write=True, at=ledger)


def append_drafts(ledger: str | None, file: str | None, jsonl: bool, once: str | None,
                  as_json: bool, reproduces: str | None = None,
                  commit_items: str | None = None) -> None:
    """`logbook append FILE [--jsonl] [--once KEY]`: the draft (or drafts) in FILE appended in
    one transaction; a run draft without a `session` gets LOGBOOK_SESSION's, when it is set.
    ``commit_items``: the salt file; each run's items are committed (logbook.ledger.commitments)."""
    if file is None:
        raise InputError("FILE is required (a draft as JSON, or - for stdin)")
    if commit_items is not None and once is not None:
        raise InputError("--commit-items draws new salts each time, so --once could not know "
                         "the draft again: give one or the other")
    data = read_input(file)
    name = "stdin" if file == "-" else file
    if jsonl:
        drafts = []
        for i, line in enumerate(data.splitlines(), 1):
            if line.strip():
                drafts.append(draft(parse_json(line, f"{name} line {i}"), f"{name} line {i}"))
        if not drafts:
            raise InputError(f"{name} holds no drafts")
    else:
        drafts = [draft(parse_json(data, name), name)]
    session = config.session()
    if session:  # as `run` and `append --from` do: a run without a session joins this one
        for kind, body in drafts:
            if kind == "run" and isinstance(body, dict) and "session" not in body:
                body["session"] = session
    if commit_items is not None:
        drafts = _committed(drafts, commit_items)
    key = signing_key()
    with open_for_writing(ledger) as book:
        if reproduces is not None:
            from logbook.ingest.appending import reproducing

            reproducing(book, drafts, reproduces)
        entries = book.append_many(drafts, key, once=once)
    print_appended(entries, as_json)
    from logbook.cli.record_intake import warn_gaps

    warn_gaps(entries)


def _committed(drafts: list[tuple[str, Any]], salts: str) -> list[tuple[str, Any]]:
    """The run drafts with their items committed (logbook.ledger.commitments)."""
    from pathlib import Path

    from logbook.ledger.commitments import commit_items

    if not any(kind == "run" for kind, _ in drafts):
        raise InputError("--commit-items commits a run's items: the drafts hold no run")
    out = []
    for kind, body in drafts:
        if kind == "run" and isinstance(body, dict):
            body = commit_items(body, Path(salts))
        out.append((kind, body))
    return out


def append_note(ledger: str | None, text: str, refs: list[str], as_json: bool) -> None:
    """`logbook note TEXT [--ref REF]...`: a note, its secrets redacted first."""
    fields, redacted = scrub_fields({"text": text})
    key = signing_key()
    with open_for_writing(ledger) as book:
        print_appended([book.append("note", {"text": fields["text"], "refs": refs}, key)],
                       as_json)
    warn_redacted(redacted, "note")


def scrub_fields(values: dict[str, str | None]) -> tuple[dict[str, str | None], int]:
    """Free text given on the command line (a note, a reason, a correction, a statement) with
    secrets replaced by the one policy (logbook.capture.redact), and how many were replaced."""
    from logbook.capture.redact import scrub_text

    total = 0
    out: dict[str, str | None] = {}
    for name, text in values.items():
        if text is None:
            out[name] = None
            continue
        out[name], n = scrub_text(text, env=os.environ)
        total += n
    return out, total


def warn_redacted(count: int, where: str) -> None:
    if count:
        print(f"logbook: warning: {count} secret-looking value(s) in the {where} were "
              "replaced by [redacted]", file=sys.stderr)
