"""Whether a harness records its runs, and where (docs/recording.md, "Recording from inside
Inspect AI").

Recording is on when ``LOGBOOK_PLAN`` and ``LOGBOOK_ARM`` name a plan and arm, when
``LOGBOOK_RECORD=1`` (exploratory runs), or when the working folder (or a parent) has a
``logbook.toml`` or a ``pyproject.toml`` with a ``[tool.logbook]`` table::

    [tool.logbook]
    plan = "kv-q8-vs-f16"   # optional: without it the runs are exploratory
    arm = "q8"
    ledger = "."            # optional: the ledger's folder, relative to this file

The variables win over the file; ``record = false`` in the file switches it off.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logbook import config
from logbook.errors import InputError

CONFIG_FILES = ("logbook.toml", "pyproject.toml")


@dataclass(frozen=True)
class Recording:
    """What to record into: the plan and arm (None: exploratory), the ledger (None: found as
    every command finds it), and what switched it on (said when a record fails)."""

    plan: str | None
    arm: str | None
    ledger: str | None
    by: str


def _table(path: Path) -> dict[str, Any] | None:
    """The logbook settings of one file: logbook.toml's top level (or its [tool.logbook]),
    pyproject.toml's [tool.logbook]; None when the file has none."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        if path.name == "logbook.toml":
            raise InputError(f"{path} is not readable TOML ({exc})") from None
        return None  # somebody else's pyproject.toml: not ours to judge
    tool = doc.get("tool")
    table = tool.get("logbook") if isinstance(tool, dict) else None
    if table is None and path.name == "logbook.toml":
        table = doc
    if table is None:
        return None
    if not isinstance(table, dict):
        raise InputError(f"{path}: tool.logbook must be a table")
    for name in ("plan", "arm", "ledger"):
        if name in table and not isinstance(table[name], str):
            raise InputError(f"{path}: field {name} must be a string")
    if "record" in table and not isinstance(table["record"], bool):
        raise InputError(f"{path}: field record must be true or false")
    return table


def settings_file(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest logbook.toml or pyproject.toml with logbook settings, from ``start`` up."""
    for folder in (start, *start.parents):
        for name in CONFIG_FILES:
            path = folder / name
            if path.is_file():
                table = _table(path)
                if table is not None:
                    return path, table
    return None


# `logbook run` marks the command it runs (LOGBOOK_WRAPPED, logbook.config): the run is
# recorded by `logbook run` itself (once, with its logs and signals), so a hook inside that
# command records nothing.
wrapped_marker = config.wrapped_marker
wrapped_by_logbook_run = config.wrapped_by_logbook_run


def recording(cwd: Path | None = None) -> Recording | None:
    """The recording switched on for a harness working in ``cwd``, or None when it is off
    (always off inside `logbook run`, which records the run itself)."""
    if wrapped_by_logbook_run():
        return None
    plan, arm = config.harness_plan(), config.harness_arm()
    found = settings_file(Path.cwd() if cwd is None else cwd)
    if found is not None:
        path, table = found
        ledger = table.get("ledger")
        where = str((path.parent / ledger).resolve()) if ledger else None
        if plan is None and arm is None:
            plan, arm = table.get("plan"), table.get("arm")
        if table.get("record", True) or plan is not None:
            return Recording(plan, arm, where, f"{path}")
    if plan is not None or arm is not None:
        return Recording(plan, arm, None, "LOGBOOK_PLAN and LOGBOOK_ARM")
    if config.record_exploratory():
        return Recording(None, None, None, "LOGBOOK_RECORD=1")
    return None
