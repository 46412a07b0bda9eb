"""Generic JSON Lines: one item per line -> one run.

Each line is ``{"id": str|int, "score": number|bool|null, "cluster"?: str|int,
"error"?: str|null, "sample"?: int}``; blank lines are ignored. A line without a score is
missing and carries an error (``"no score"`` when the line gives none); a line cannot have
both a score and an error. ``sample`` numbers repeated samples of one item; ``(id, sample)``
is unique. ``sample`` and ``cluster`` are given on every line or on none.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from logbook.errors import InputError
from logbook.ingest._common import (
    MAX_SAFE_INT,
    build_outcomes,
    fail,
    item_id,
    loads,
    no_repeated_keys,
    number,
    read_bytes,
    whole,
)
from logbook.ingest.adapter import Adapter

FIELDS = ("id", "score", "cluster", "error", "sample")


class JsonLines(Adapter):
    """``--from jsonl`` and ``--outcomes``: ``metric`` names the items' metric (``score``
    when none is given)."""

    name = "jsonl"
    globs = ("*.jsonl",)

    def read_runs(self, path: Path, *, metric: str | None = None,
                  cut_off_ok: bool = False) -> list[dict[str, Any]]:
        """One completed run whose outcomes are the file's items, in file order.

        With ``cut_off_ok``, a last line that is not valid JSON and has no line end (the
        writer stopped mid-line) is left out, and the run's ``reason`` says so.
        """
        data = read_bytes(path)
        # the file it came from; a JSON Lines file has no run identity of its own (its bytes
        # are its scores), so two runs with the same items are two runs (docs/recording.md)
        source = {"harness": "jsonl", "file": path.name,
                  "sha256": "sha256:" + hashlib.sha256(data).hexdigest()}
        body: dict[str, Any] = {"status": "completed", "apparatus": {}, "source": source}
        if cut_off_ok and data and not data.endswith((b"\n", b"\r")):
            head, _, tail = data.rpartition(b"\n")
            try:
                loads(tail, f"{path}: last line", strict=True)
            except InputError:
                data = head
                body["reason"] = (f"the last line of {path} was cut off mid-write "
                                  f"({len(tail)} bytes) and was not read")
        body["outcomes"] = parse(data, path, metric=metric or "score")
        return [body]


ADAPTER = JsonLines()


def parse(data: bytes, path: Path | str, *, metric: str = "score") -> dict[str, Any]:
    """Column-wise outcomes from JSON Lines bytes; InputError naming the line at fault."""
    if not metric:
        raise fail(path, "metric name is empty")
    rows: list[tuple[str, float | None, str | None, int | None, str | None]] = []
    seen: set[tuple[str, int | None]] = set()
    has_sample: bool | None = None
    has_cluster: bool | None = None
    for lineno, line in _lines(data, path):
        where = f"line {lineno}"
        if not isinstance(line, dict):
            raise fail(path, f"{where}: expected a JSON object")
        unknown = sorted(set(line) - set(FIELDS))
        if unknown:
            raise fail(path, f"{where}: unknown field {unknown[0]!r} (fields: {', '.join(FIELDS)})")
        rid = item_id(line.get("id"))
        if rid is None:
            raise fail(path, f"{where}: field id must be a non-empty string or an integer")
        score, error = _score(line, path, where)
        sample = line.get("sample")
        if sample is not None and whole(sample, -MAX_SAFE_INT, MAX_SAFE_INT) is None:
            raise fail(path, f"{where}: field sample must be an integer (at most 2^53 in "
                             "magnitude)")
        cluster = line.get("cluster")
        if cluster is not None:
            cluster = item_id(cluster)
            if cluster is None:
                raise fail(path, f"{where}: field cluster must be a non-empty string or an "
                                 "integer")
        has_sample = _same(has_sample, sample is not None, path, where, "sample")
        has_cluster = _same(has_cluster, cluster is not None, path, where, "cluster")
        if (rid, sample) in seen:
            twice = f"item {rid!r}" + ("" if sample is None else f" sample {sample}")
            raise fail(path, f"{where}: {twice} appears twice")
        seen.add((rid, sample))
        rows.append((rid, score, error, sample, cluster))
    if not rows:
        raise fail(path, "has no items")
    return build_outcomes(metric, rows, with_sample=bool(has_sample))


# lines parsed, then checked for a key given twice, together: at most this many, and no more
# text than CHUNK_BYTES (a longer line is a chunk of its own), so that a chunk's values and
# their encoding take a few MB beside the file however long its lines
CHUNK = 1000
CHUNK_BYTES = 1 << 19  # under format.strict.FAST_BELOW, so that a whole chunk is checked at once


def _lines(data: bytes, path: Path | str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each line that is not blank, parsed in chunks: each chunk is
    checked for a key given twice before any of its lines is read further."""
    chunk: list[tuple[bytes, Any, str]] = []
    numbers: list[int] = []
    size = 0
    for lineno, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{path}: line {lineno}"
        chunk.append((raw, loads(raw, where, strict=True, repeats=False), where))
        numbers.append(lineno)
        size += len(raw)
        if len(chunk) == CHUNK or size >= CHUNK_BYTES:
            no_repeated_keys(chunk)
            yield from zip(numbers, (value for _, value, _ in chunk), strict=True)
            chunk, numbers, size = [], [], 0
    no_repeated_keys(chunk)
    yield from zip(numbers, (value for _, value, _ in chunk), strict=True)


def _score(line: dict[str, Any], path: Path | str, where: str) -> tuple[float | None, str | None]:
    value, error = line.get("score"), line.get("error")
    if error is not None and not isinstance(error, str):
        raise fail(path, f"{where}: field error must be a string or null")
    if value is None:
        return None, error or "no score"
    score = number(value)
    if score is None:
        raise fail(path, f"{where}: field score must be a finite number (at most 2^53 in "
                         "magnitude), true/false or null")
    if error:
        raise fail(path, f"{where}: has both a score and an error (a failed item has score null)")
    return score, None


def _same(before: bool | None, now: bool, path: Path | str, where: str, field: str) -> bool:
    if before is not None and before != now:
        raise fail(path, f"{where}: field {field} must be on every line or on none")
    return now
