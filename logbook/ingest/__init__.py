"""Adapters that turn harness outputs into run bodies (DESIGN §4.4).

``read_runs(source, path)`` returns run bodies without ``plan``/``arm`` (the caller adds them):
``status``, ``reason`` (when not completed), ``apparatus``, ``outcomes`` (column-wise),
``task``, ``group``, ``reported`` (the harness's own figures), ``started``/``finished``, ``note``.
Each source lives in its own module, imported only when asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logbook.errors import InputError

SOURCES = ("lm-eval", "inspect", "jsonl")


def read_runs(source: str, path: Path, *, metric: str | None = None,
              cut_off_ok: bool = False) -> list[dict[str, Any]]:
    """Run bodies read from ``path`` by the adapter for ``source`` (one of SOURCES).

    ``metric`` names the outcome metric: for ``jsonl`` its name (default ``score``); for
    ``lm-eval`` the primary metric (``acc`` or ``acc,filter``) instead of the task's first;
    for ``inspect`` the one scorer to read instead of every scorer. ``cut_off_ok`` (jsonl, for
    a run that did not complete): a last line cut off mid-write is left out and said so in
    the run's ``reason`` instead of refusing the file.
    """
    path = Path(path)
    if source == "lm-eval":
        from logbook.ingest import lm_eval

        return lm_eval.read_runs(path, metric=metric)
    if source == "inspect":
        from logbook.ingest import inspect as inspect_log

        return inspect_log.read_runs(path, scorer=metric)
    if source == "jsonl":
        from logbook.ingest import jsonl

        return jsonl.read_runs(path, metric=metric or "score", cut_off_ok=cut_off_ok)
    raise InputError(f"source {source!r} is not one of {', '.join(SOURCES)}")
