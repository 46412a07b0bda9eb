"""The shape of one problem found, shared by `verify` and the audit.

Its own module so that reading commands (report, audit, brief) can name findings without
importing the verifier and, through it, the signature library.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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
        return asdict(self)
