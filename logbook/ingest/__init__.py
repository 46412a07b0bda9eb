"""Adapters that turn harness outputs into run bodies (DESIGN §4.4), and their registry.

``ADAPTERS`` maps each ``--from`` source to the module that holds its adapter (its ``ADAPTER``,
a :class:`~logbook.ingest.adapter.Adapter`); a module is imported only when its source is asked
for. ``append --from``, ``logbook run --from`` and ``--outcomes`` (the ``jsonl`` adapter) all
find their adapter here.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logbook.errors import InputError

if TYPE_CHECKING:
    from logbook.ingest.adapter import Adapter

ADAPTERS = {
    "lm-eval": "logbook.ingest.lm_eval",
    "inspect": "logbook.ingest.inspect",
    "jsonl": "logbook.ingest.jsonl",
}
SOURCES = tuple(ADAPTERS)


def adapter_for(source: str, label: str = "source") -> Adapter:
    """The adapter for ``source``; an InputError (``{label} 'x' is not one of ...``) for a
    source no adapter reads."""
    if source not in ADAPTERS:
        raise InputError(f"{label} {source!r} is not one of {', '.join(SOURCES)}")
    found: Adapter = import_module(ADAPTERS[source]).ADAPTER
    return found


def read_runs(source: str, path: Path, *, metric: str | None = None,
              cut_off_ok: bool = False) -> list[dict[str, Any]]:
    """Run bodies read from ``path`` by the adapter for ``source`` (one of SOURCES).

    ``metric`` names the outcome metric: for ``jsonl`` its name (default ``score``); for
    ``lm-eval`` the primary metric (``acc`` or ``acc,filter``) instead of the task's first;
    for ``inspect`` the one scorer to read instead of every scorer. ``cut_off_ok`` (jsonl, for
    a run that did not complete): a last line cut off mid-write is left out and said so in
    the run's ``reason`` instead of refusing the file.
    """
    return adapter_for(source).read_runs(Path(path), metric=metric, cut_off_ok=cut_off_ok)


def command_output(command: list[str], env: Mapping[str, str]) -> tuple[str, str] | None:
    """(source, path) of the output a harness's command line says it will write (`logbook run
    -- lm_eval ... --output_path P`, `logbook run -- inspect eval ...`), or None."""
    for source in SOURCES:
        path = adapter_for(source).output_of(command, env)
        if path is not None:
            return source, path
    return None


def option_value(command: list[str], *names: str) -> str | None:
    """The value of the last ``--name VALUE`` or ``--name=VALUE`` of ``command``."""
    found = None
    for i, arg in enumerate(command):
        for name in names:
            if arg == name and i + 1 < len(command):
                found = command[i + 1]
            elif arg.startswith(name + "="):
                found = arg[len(name) + 1:]
    return found


def program(command: list[str]) -> list[str]:
    """The command without a leading ``python -m``: ``python -m lm_eval ...`` is ``lm_eval
    ...``; the program is its base name."""
    from pathlib import PurePath

    if len(command) > 2 and PurePath(command[0]).name.startswith("python") \
            and command[1] == "-m":
        return [command[2], *command[3:]]
    return [PurePath(command[0]).name, *command[1:]] if command else []
