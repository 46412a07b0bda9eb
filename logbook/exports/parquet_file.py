"""`logbook export --format parquet`: the long format (logbook.exports.long_rows) as one
Parquet file, typed columns (a missing score is null, never 0), written with pyarrow (the
`parquet` extra): Parquet is a columnar binary format with a real specification, which a
library the whole data ecosystem uses writes better than code of our own would."""

from __future__ import annotations

from typing import Any

from logbook.exports import Exporter
from logbook.exports.behind import writing_behind
from logbook.exports.long_rows import COLUMNS, ITEM_FIELDS, RUN_COLUMNS, runs_with_items
from logbook.exports.selection import Selection
from logbook.files import atomic_writer

_BATCH = 200_000  # rows a record batch holds, about


def write(sel: Selection, out: Any, _options: dict[str, Any]) -> str:
    import pyarrow as pa  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped, import-not-found, unused-ignore]

    kinds = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
    # a run's text columns repeat on each of its rows: dictionary-encoded (what Parquet
    # stores them as anyway), so that each value is written once a batch
    repeated = {name for name, kind in RUN_COLUMNS if kind is str}
    schema = pa.schema([(name, pa.dictionary(pa.int32(), kinds[kind]) if name in repeated
                         else kinds[kind]) for name, kind in COLUMNS],
                       metadata={"logbook.origin": sel.origin, "logbook.size": str(sel.size),
                                 "logbook.root": sel.root})
    count = 0
    # a batch's row group is encoded and compressed by pyarrow on a thread of its own, which
    # lets the interpreter go on reading the next batch's runs meanwhile
    with atomic_writer(out, "--out") as dest, \
            pq.ParquetWriter(pa.PythonFile(_Sink(dest), mode="w"), schema,
                             compression="zstd") as writer, \
            writing_behind(writer.write_batch, depth=1) as behind:
        batch = _Batch()
        for head, ids, cols in runs_with_items(sel):
            batch.add(head, ids, cols)
            if batch.rows >= _BATCH:
                behind.put(batch.record_batch(pa, schema))
                count += batch.rows
                batch = _Batch()
        if batch.rows or count == 0:
            behind.put(batch.record_batch(pa, schema))
            count += batch.rows
    return f"{count} rows of {len(sel.runs)} runs"


class _Batch:
    """Runs' rows gathered column by column: each item column extended run by run, each run
    column once per run and repeated by index in Arrow."""

    def __init__(self) -> None:
        self.heads: list[tuple[Any, ...]] = []
        self.counts: list[int] = []
        self.ids: list[str] = []
        self.items: dict[str, list[Any]] = {name: [] for name in ITEM_FIELDS}
        self.held = dict.fromkeys(ITEM_FIELDS, 0)  # the rows each column holds a list for
        self.rows = 0

    def add(self, head: tuple[Any, ...], ids: list[str], cols: dict[str, list[Any]]) -> None:
        n = len(ids)
        self.heads.append(head)
        self.counts.append(n)
        self.ids += ids
        for name in ITEM_FIELDS:
            values = cols[name]
            if values[0] is None and values.count(None) == n:
                continue  # all missing (a column the run does not record): filled in below
            column = self.items[name]
            if self.held[name] < self.rows:  # the rows before it, which had none
                column += [None] * (self.rows - self.held[name])
            column += values
            self.held[name] = self.rows + n
        self.rows += n

    def record_batch(self, pa: Any, schema: Any) -> Any:
        import numpy as np

        counts = np.asarray(self.counts, dtype=np.int64)
        which = pa.array(np.repeat(np.arange(len(counts)), counts))
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        position = np.arange(self.rows, dtype=np.int64) - starts
        by_name: dict[str, Any] = {"item": self.ids, "position": position}
        for name, column in self.items.items():
            if self.held[name]:
                column += [None] * (self.rows - self.held[name])
                by_name[name] = column
            else:
                by_name[name] = None  # no row has one
        arrays = []
        for j, field in enumerate(schema):
            if pa.types.is_dictionary(field.type):
                values = pa.array([h[j] for h in self.heads], type=field.type.value_type)
                encoded = values.dictionary_encode()
                arrays.append(pa.DictionaryArray.from_arrays(encoded.indices.take(which),
                                                             encoded.dictionary))
            elif j < len(RUN_COLUMNS):
                values = pa.array([h[j] for h in self.heads], type=field.type)
                arrays.append(values.take(which))
            elif by_name[field.name] is None:
                arrays.append(pa.nulls(self.rows, type=field.type))
            else:
                arrays.append(pa.array(by_name[field.name], type=field.type))
        return pa.record_batch(arrays, schema=schema)


class _Sink:
    """The file interface pyarrow writes through, over logbook's atomic output."""

    closed = False

    def __init__(self, dest: Any) -> None:
        self._dest, self._at = dest, 0

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._dest.write_bytes(chunk)
        self._at += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self._at

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        pass


EXPORTER = Exporter(name="parquet", summary="the long format of csv as one typed Parquet file "
                    "(needs the parquet extra: pyarrow)", writes="file", text=False,
                    needs=("pyarrow",), extra="parquet", write=write)
