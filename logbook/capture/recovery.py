"""The recovery file of `logbook run`: when even the append fails (a full disk, a lost lock),
the run's drafts are kept beside the ledger, one per line, where `logbook append --jsonl FILE
--once NAME` takes them later (docs/recording.md, "A run is never lost")."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Recovery:
    """The drafts as JSON Lines, the file's name (its ``--once`` key), and where they were
    kept (None when even that file could not be written)."""

    lines: str
    name: str
    path: Path | None


def keep_drafts(ledger_db: Path, drafts: list[tuple[str, dict[str, Any]]]) -> Recovery:
    """Write the drafts to a new ``recovered-run-<time>-<pid>.jsonl`` beside the ledger."""
    import orjson

    from logbook.errors import LogbookError
    from logbook.files import write_new

    lines = "".join(orjson.dumps({"kind": k, "body": b}).decode() + "\n" for k, b in drafts)
    name = f"recovered-run-{now_stamp()}-{os.getpid()}.jsonl"
    path = ledger_db.parent / name
    try:
        write_new(path, lines, "recovery file")
    except (LogbookError, OSError):
        return Recovery(lines, name, None)
    return Recovery(lines, name, path)


def now_stamp() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
