"""The shape of one problem found, shared by `verify` and the audit.

Its own module so that reading commands (report, audit, brief) can name findings without
importing the verifier and, through it, the signature library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One problem found: the check that found it, how bad, what, and which entries."""

    check: str
    severity: str
    message: str
    seq: int | None
    entries: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        # by hand, not dataclasses.asdict (which deep-copies every string): an audit of a
        # large ledger writes thousands
        return {"check": self.check, "severity": self.severity, "message": self.message,
                "seq": self.seq, "entries": list(self.entries)}
