"""The item traces' format (docs/format.md §5, "Item traces"): a zstd frame of JSON Lines, one
row per outcome row it describes (``id``, ``sample`` when the outcomes have one, and the texts
below, each optional), named from the run by ``{"sha256", "size", "items"}``. Written at
append by logbook.ledger.traces; read here, by whoever holds the blob (the CLI's `show`, the
web's item pages), with bounds and against the digest the signed run records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from logbook.errors import StorageDamaged

TEXTS = ("prompt", "output", "target", "verdict", "explanation")
FIELDS = frozenset(("id", "sample", *TEXTS))
MAX_TEXT = 32_768  # characters of one field kept; the rest is said to be cut
MAX_RAW = 256 * 1024 * 1024  # bytes of JSON Lines one run's traces may inflate to
CUT = "\n[… {n} more characters not kept]"


def read(blob: Callable[[str, int], bytes | None], ref: Any,
         max_blob: int) -> Iterator[dict[str, Any]]:
    """The trace rows a run's reference names, read through ``blob`` (EntryLog.blob) with the
    reference's bound, checked against its digest and inflated with a bound. StorageDamaged
    when the blob is missing, altered or not a trace file."""
    if not isinstance(ref, dict):
        return iter(())
    sha, size = str(ref.get("sha256", "")), ref.get("size")
    digest = sha.removeprefix("sha256:")
    if type(size) is not int or not 0 <= size <= max_blob:
        raise StorageDamaged("the run's traces reference has no size a blob can have")
    data = blob(digest, size + 1)
    if data is None:
        raise StorageDamaged(f"the run's traces ({sha[:23]}…) are not kept in this ledger")
    if len(data) != size or hashlib.sha256(data).hexdigest() != digest:
        raise StorageDamaged(f"the run's traces ({sha[:23]}…) were altered: their bytes do not "
                             "hash to the name the run records")
    import zstandard

    try:
        # the frame says its size (pack writes it); decompress trusts it over any bound
        length = zstandard.frame_content_size(data)
        if not 0 <= length <= MAX_RAW:
            raise zstandard.ZstdError(f"its frame says {length} bytes, not 0 to {MAX_RAW}")
        raw = zstandard.ZstdDecompressor().decompress(data)
    except zstandard.ZstdError as exc:
        raise StorageDamaged(f"the run's traces ({sha[:23]}…) are not a zstd frame: {exc}") \
            from None
    return _rows(raw)


def _rows(raw: bytes) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(raw.splitlines(), 1):
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise StorageDamaged(f"the run's traces: line {n} is not JSON") from None
        if isinstance(row, dict):
            yield row
