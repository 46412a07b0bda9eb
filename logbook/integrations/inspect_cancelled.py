"""The logs of tasks cancelled by Ctrl-C, which no Inspect AI hook is given (docs/recording.md,
"Recording from inside Inspect AI").

On Ctrl-C (SIGINT), Inspect (0.3.285) finishes each running task's log with status
``cancelled``, but calls no ``on_task_end`` for it, and its ``on_run_end`` gets no logs and no
exception. What a hook does get is the task's start (``on_task_start``: its ``eval_id`` and
``task_id``). So the hook remembers each task it saw start, and at the run's end looks, in the
folder the run writes its logs to, for the log of each one it has not recorded: the log whose
header names that ``eval_id``, written since the task started.

The folder is the one `logbook run -- inspect eval` reads: ``--log-dir`` of an ``inspect eval``
command line, else ``INSPECT_LOG_DIR``, else Inspect's default ``./logs``. A Python
``inspect_ai.eval(log_dir=...)`` naming another folder is not seen: set ``INSPECT_LOG_DIR``
instead, or wrap the script in `logbook run` (the documented workaround).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# a file system stamps times at its clock's granularity, which may trail ours
_CLOCK_SLACK_NS = 2_000_000_000


@dataclass(frozen=True)
class Started:
    """A task the hook saw start: its ids and when (time.time_ns())."""

    eval_id: str
    task_id: str
    at_ns: int


def log_folder(argv: list[str], env: Mapping[str, str]) -> Path | None:
    """Where this process's Inspect run writes its logs, or None when that is not a local
    folder (an ``s3://`` log dir, say)."""
    from logbook.ingest.inspect import ADAPTER

    found = ADAPTER.output_of(argv, env) or env.get("INSPECT_LOG_DIR") or "logs"
    if "://" in found:
        return None
    return Path(found)


def find_log(folder: Path, task: Started) -> Path | None:
    """The log in ``folder`` whose header names ``task.eval_id``, among those written since
    the task started (Inspect's file names hold the task_id: those are read first)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    recent: list[tuple[bool, int, Path]] = []
    for entry in entries:
        if not entry.name.endswith((".eval", ".json")):
            continue
        try:
            if not entry.is_file():
                continue
            mtime = entry.stat().st_mtime_ns
        except OSError:
            continue
        if mtime >= task.at_ns - _CLOCK_SLACK_NS:
            recent.append((task.task_id not in entry.name, -mtime, Path(entry.path)))
    for _, _, path in sorted(recent):
        if _eval_id(path) == task.eval_id:
            return path
    return None


def _eval_id(path: Path) -> str | None:
    """The eval_id a log's header names, read by Inspect itself (header only)."""
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(str(path), header_only=True).eval.eval_id
    except Exception:  # not a log, or one being written: not the one looked for
        return None
