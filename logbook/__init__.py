"""logbook: an append-only, hash-chained, signed logbook for LLM benchmark runs.

Python API::

    from logbook import Ledger
    ledger = Ledger.open(".")                 # finds .logbook/ledger.db
    with ledger.recording(plan="kv-q8-vs-f16", arm="q8", metric="acc") as run:
        for item in items:
            run.item(item.id, score)          # a failed request: run.item(id, None, error=...)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Ledger", "open_ledger"]

if TYPE_CHECKING:
    from logbook.ledger.service import Ledger


def open_ledger(path: str | None = None, write: bool = True) -> Ledger:
    from logbook.ledger.service import Ledger

    return Ledger.open(path, write=write)


def __getattr__(name: str) -> Any:  # lazy: `import logbook` costs nothing
    if name == "Ledger":
        from logbook.ledger.service import Ledger

        return Ledger
    raise AttributeError(name)
