"""A progress bar on stderr for long work, drawn only when stderr is a terminal.

Plain ``\\r`` lines, no dependency: a pipe, a file or a test's captured stream never gets one
(unless ``force``), so stderr stays the one-sentence messages scripts read. Below ``LARGE``
entries the work is quick and no bar is drawn either. The bar is transient: its line is
cleared when the work ends, so what the command prints next starts on a clean line.

The work reports through a callback, ``on_progress(done, total)``, which is all a library
function needs to take (``on_progress: Callable[[int, int], None] | None = None``, called now
and then with how much of how much is done): the command opens the bar with `progress` and
passes the callback it yields, and the library never learns whether anything is drawn.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

LARGE = 1000  # entries: below this a command is done before a bar would tell anything
WIDTH = 28    # characters of the bar itself
EVERY = 0.1   # seconds between redraws: a terminal is not written 100,000 times

OnProgress = Callable[[int, int], None]  # (done, total)


def quiet(done: int, total: int) -> None:
    """The callback when no bar is drawn."""


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream is no terminal
        return False


class Bar:
    """``label [#####.....]  52% 520/1000`` on one line, redrawn in place."""

    def __init__(self, label: str, stream: TextIO) -> None:
        self.label, self.stream = label, stream
        self.shown = ""
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < EVERY:
            return
        self.last = now
        if total > 0:
            part = min(max(done / total, 0.0), 1.0)
            filled = round(part * WIDTH)
            line = (f"{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] "
                    f"{part * 100:3.0f}% {done}/{total}")
        else:  # the total is not known: a count
            line = f"{self.label} … {done}"
        pad = " " * max(len(self.shown) - len(line), 0)
        self.stream.write("\r" + line + pad)
        self.stream.flush()
        self.shown = line

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * len(self.shown) + "\r")
            self.stream.flush()
            self.shown = ""


@contextmanager
def progress(label: str, size: int | None = None, stream: TextIO | None = None,
             force: bool = False) -> Iterator[OnProgress]:
    """The callback to report progress through: a drawn `Bar` when ``stream`` (stderr by
    default) is a terminal and the work is large (``size`` entries, when given, at least
    ``LARGE``), or ``force``; else `quiet`."""
    out = sys.stderr if stream is None else stream
    if not force and not (is_terminal(out) and (size is None or size >= LARGE)):
        yield quiet
        return
    bar = Bar(label, out)
    try:
        yield bar
    finally:
        bar.close()
