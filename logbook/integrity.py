"""The check every analysis makes before it prints a number (docs/auditing.md, "What the
analysis commands check").

`report`, `compare`, `audit`, `brief` and `claim` (and `claim check`, `band`, `checkpoint`)
open one read transaction, run this check inside it, and compute inside the same
transaction, so every number comes from the bytes that were just checked, and every derived
row they read (the index that finds a plan's runs, the outcomes, the keys, the tree) was just
compared with those bytes. On any finding they print no figure: stderr says
``this ledger does not verify: ...`` and the command exits 1.

The check is `verify`'s, minus `--strict`: every entry's digest recomputed from its stored
bytes, the chain continuous from genesis to the head, every signature checked under a key
valid at its place (keys read from the entries, not from the keys table), every derived table
compared with the bytes, every stored checkpoint recomputed. Why every signature and not just
the head's: an appender signs on top of whatever head the file holds, so an entry slipped in
by someone without a key would be covered by the next honest signature; only its own
signature shows it was not made by a key of the ledger.

Imports nothing that signs and nothing heavy (no numpy, no pydantic).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from logbook.errors import CheckFailed

BANNER = "this ledger does not verify"


class NotVerified(CheckFailed):
    """The ledger failed the check analysis makes before printing (exit 1)."""


@dataclass(frozen=True)
class Verified:
    """What the check established: the entries it covered and the head they end in."""

    entries: int
    head: str | None
    ledger: str | None
    checkpoints: int  # stored checkpoints recomputed and found to hold

    def as_dict(self) -> dict[str, Any]:
        return {"verified": True, "entries": self.entries, "head": self.head,
                "checks": "digests, chain, every signature, derived tables, stored checkpoints",
                "checkpoints_checked": self.checkpoints}


def check(store: Any) -> Verified:
    """Run the check on the store's current read transaction; NotVerified on any finding."""
    from logbook.verify_ledger import verify_store

    result = verify_store(store)
    if not result.ok:
        first = result.findings[0].message if result.findings else "it holds no entries"
        more = len(result.findings) - 1
        raise NotVerified(f"{BANNER}: {first}" + (
            f" (and {more} more finding{'s' if more > 1 else ''}: `logbook verify` lists "
            "them)" if more > 0 else " (`logbook verify` says more)"))
    return Verified(result.entries, result.head, result.ledger, len(store.checkpoints()))


@contextmanager
def verified(ledger: Any) -> Iterator[Verified]:
    """Check the ledger, then keep its read transaction open for the caller's computation:
    whatever is appended meanwhile is neither checked nor read."""
    with ledger.store.snapshot():
        yield check(ledger.store)
