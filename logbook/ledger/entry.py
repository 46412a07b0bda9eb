"""An entry as read back from the store, and the timestamp a new entry carries."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from logbook.errors import StorageDamaged
from logbook.storage.base import StoredEntry


@dataclass(frozen=True)
class Entry:
    """An entry as read back: its place, digest, envelope and signature."""

    seq: int
    digest: str
    envelope: dict[str, Any]
    signature: str
    raw: bytes
    # True when an append gave this entry back because its --once key had recorded these
    # very drafts before (another process, or an earlier try): nothing new was written
    earlier: bool = field(default=False, compare=False)

    @property
    def kind(self) -> str:
        return str(self.envelope.get("kind"))

    @property
    def body(self) -> dict[str, Any]:
        body = self.envelope.get("body")
        return body if isinstance(body, dict) else {}

    def export_line(self) -> dict[str, Any]:
        return {"seq": self.seq, "digest": self.digest, "signature": self.signature,
                "entry": self.envelope}

    @classmethod
    def from_stored(cls, s: StoredEntry) -> Entry:
        return cls(s.seq, s.digest, parse_stored(s), s.signature, bytes(s.entry))


def parse_stored(s: StoredEntry) -> Any:
    """The envelope of a stored entry; exit 1 with one sentence when its bytes are not JSON
    (a damaged file: `verify` says what else is wrong with it)."""
    try:
        return orjson.loads(s.entry)
    except orjson.JSONDecodeError:
        raise StorageDamaged(f"entry {s.seq} is damaged: its stored bytes are not JSON "
                             "(`logbook verify` lists what is wrong)") from None


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
