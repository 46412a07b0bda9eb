"""Engine load logs (docs/recording.md, "Requested and applied"): one reader a module, one
registry. Each reader takes the log's first lines and returns what it shows the engine applied,
in logbook.format.applied's vocabulary, or None when the log is not its engine's.

Reading is bounded: only the first ``HEAD_BYTES`` of a log are looked at (an engine writes its
load lines before the first request; a server's log may grow for days after), each line cut at
``LINE_CHARS``; bytes that are not UTF-8 are replaced, so a binary or garbled file is simply no
engine's log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logbook.capture.loadlogs import llama_cpp, vllm

HEAD_BYTES = 4 << 20
LINE_CHARS = 16384

Reader = Callable[[list[str]], dict[str, Any] | None]
# engine name -> reader, tried in this order
READERS: dict[str, Reader] = {"llama.cpp": llama_cpp.read, "vllm": vllm.read}


def lines_of(data: bytes) -> list[str]:
    """The log's first HEAD_BYTES as lines, each at most LINE_CHARS long."""
    text = data[:HEAD_BYTES].decode("utf-8", "replace")
    return [line[:LINE_CHARS] for line in text.splitlines()]


def applied(data: bytes) -> dict[str, Any] | None:
    """What the load log ``data`` shows applied, with ``engine`` naming its engine; None when
    no reader knows it (nothing applied, and no error)."""
    if b"\0" in data[:8192]:  # binary: no engine writes its load log so
        return None
    lines = lines_of(data)
    for engine, read in READERS.items():
        found = read(lines)
        if found:
            return {"engine": engine, **found}
    return None


class Applied:
    """What the first load log among several shows applied (``see`` each in turn): its
    fields, ``engine`` and ``log`` (the file's name); None while no log is an engine's."""

    def __init__(self) -> None:
        self.applied: dict[str, Any] | None = None

    def see(self, name: str, data: bytes) -> None:
        if self.applied is None and (found := applied(data)) is not None:
            self.applied = {**found, "log": name}
