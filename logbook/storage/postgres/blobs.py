"""The logs a PostgreSQL ledger keeps (``keep_blob``, ``blob``): rows of the ``blobs`` table
(schema.py, migration 4), the bytes keyed by their sha256, insert-only like the entries.

Keeping the same bytes twice (two agents' runs printing the same output) inserts nothing the
second time. Reads take a bounded prefix (``substring``), so `verify` never fetches more of a
blob than the run's reference says it holds (plus one byte, to see a longer one).
"""

from __future__ import annotations

from typing import Any

from logbook.storage.base import check_blob, is_blob_name


class BlobRows:
    """Mixed into PostgresStore, which owns the connection."""

    def rows(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError  # pragma: no cover - PostgresStore defines it

    def _insert(self, sql: str, args: tuple[Any, ...]) -> None:
        raise NotImplementedError  # pragma: no cover - PostgresStore defines it

    def keep_blob(self, digest: str, data: bytes) -> None:
        check_blob(digest, data)
        self._insert("INSERT INTO blobs (digest, data) VALUES (%s, %s) "
                     "ON CONFLICT (digest) DO NOTHING", (digest, data))

    def blob(self, digest: str, limit: int) -> bytes | None:
        if not is_blob_name(digest):
            return None
        found = self.rows("SELECT substring(data FROM 1 FOR %s) FROM blobs WHERE digest = %s",
                          (max(0, limit), digest))
        return bytes(found[0][0]) if found else None
