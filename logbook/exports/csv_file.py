"""`logbook export --format csv`: the long format (logbook.exports.long_rows) as CSV, RFC 4180
with a header row; an empty field is a missing value (a score the harness did not give is
empty, never 0); `retracted` is True or False; numbers are written as Python's shortest
round-trip form, so the file reads back to the very floats the ledger holds."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

from logbook.exports import Exporter
from logbook.exports.behind import writing_behind
from logbook.exports.long_rows import ITEM_FIELDS, NAMES, runs_with_items
from logbook.exports.selection import Selection
from logbook.files import atomic_writer

_FLUSH = 1 << 23  # bytes gathered before a write


def write(sel: Selection, out: Any, _options: dict[str, Any]) -> str:
    """Write the selection's rows to ``out`` (a path, or a binary stream when None went in).

    A run's columns are the same on each of its rows: they are written as CSV once and put in
    front of each of its item rows (which the csv module writes; each field is quoted on its
    own, so the text is what writing each row whole gives), unless an item field holds a line
    break (quoted over two lines, where a row's start is not a line's): then the run's rows
    are written whole. The work is done on a run's bytes at once (a replace puts the run's
    columns before each row), so that no Python code runs per row; the bytes are written on a
    thread of their own while the next runs are read (logbook.exports.behind)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def text(rows: Iterable[Iterable[Any]]) -> bytes:
        buffer.seek(0)
        buffer.truncate()
        writer.writerows(rows)
        return buffer.getvalue().encode()

    count = 0
    with _destination(out) as dest, \
            writing_behind(lambda parts: dest.write_bytes(b"".join(parts))) as behind:
        pending: list[bytes] = [text([NAMES])]
        size = 0
        for head, ids, cols in runs_with_items(sel):
            n = len(ids)
            items = text(zip(ids, range(n), *(cols[name] for name in ITEM_FIELDS),
                             strict=True))
            if items.count(b"\n") == n and items.count(b"\r") == n:
                # each row ends in CRLF and no field holds a break: one line a row
                lead = text((head,))[:-2] + b","
                pending += (lead, items[:-2].replace(b"\r\n", b"\r\n" + lead), b"\r\n")
                size += len(lead) * n + len(items)
            else:
                block = text((*head, *row) for row in zip(
                    ids, range(n), *(cols[name] for name in ITEM_FIELDS), strict=True))
                pending.append(block)
                size += len(block)
            count += n
            if size >= _FLUSH:
                behind.put(pending)
                pending, size = [], 0
        behind.put(pending)
    return f"{count} rows of {len(sel.runs)} runs"


class _Stdout:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write_bytes(self, data: bytes) -> None:
        self.stream.write(data)

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
