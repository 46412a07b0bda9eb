"""`logbook export --format csv`: the long format (logbook.exports.long_rows) as CSV, RFC 4180
with a header row; an empty field is a missing value (a score the harness did not give is
empty, never 0); `retracted` is True or False; numbers are written as Python's shortest
round-trip form, so the file reads back to the very floats the ledger holds."""

from __future__ import annotations

import csv
import io
from typing import Any

from logbook.exports import Exporter
from logbook.exports.long_rows import ITEM_FIELDS, NAMES, runs_with_items
from logbook.exports.selection import Selection
from logbook.files import atomic_writer

_FLUSH = 1 << 22  # characters buffered before a write
_BREAKS = ("\r", "\n")


def write(sel: Selection, out: Any, _options: dict[str, Any]) -> str:
    """Write the selection's rows to ``out`` (a path, or a binary stream when None went in).

    A run's columns are the same on each of its rows: they are written as CSV once and put in
    front of each of its item rows (which the csv module writes; each field is quoted on its
    own, so the text is what writing each row whole gives), unless an item field holds a line
    break (quoted over two lines, where a row's start is not a line's): then the run's rows
    are written whole."""
    count = 0
    with _destination(out) as dest:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(NAMES)
        pending: list[str] = [buffer.getvalue()]
        size = 0
        for head, ids, cols in runs_with_items(sel):
            buffer.seek(0)
            buffer.truncate()
            items = zip(ids, range(len(ids)), *(cols[name] for name in ITEM_FIELDS),
                        strict=True)
            if _has_breaks(ids, cols):
                writer.writerows((*head, *row) for row in items)
                block = buffer.getvalue()
            else:
                writer.writerow(head)
                lead = buffer.getvalue()[:-2] + ","  # the run's columns, then the item's
                buffer.seek(0)
                buffer.truncate()
                writer.writerows(items)
                text = buffer.getvalue()
                block = lead + text[:-2].replace("\r\n", "\r\n" + lead) + "\r\n"
            pending.append(block)
            size += len(block)
            count += len(ids)
            if size >= _FLUSH:
                dest.write("".join(pending))
                pending, size = [], 0
        dest.write("".join(pending))
    return f"{count} rows of {len(sel.runs)} runs"


def _has_breaks(ids: list[str], cols: dict[str, list[Any]]) -> bool:
    for column in (ids, cols["error"], cols["cluster"], cols["component"]):
        for value in column:
            if value is not None and ("\n" in value or "\r" in value):
                return True
    return False


class _Stdout:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> None:
        self.stream.write(text.encode())

    def __enter__(self) -> _Stdout:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stream.flush()


def _destination(out: Any) -> Any:
    if isinstance(out, str):
        return atomic_writer(out, "--out")
    return _Stdout(out)


EXPORTER = Exporter(name="csv", summary="one row per item and sample of each run, with its run "
                    "and apparatus columns (long format, for pandas and spreadsheets)",
                    writes="file", text=True, needs=(), extra=None, write=write)
