"""Record models, one per entry kind (which model is whose: logbook.format.kinds). Imported
lazily: pydantic costs nothing until used."""

from __future__ import annotations

from typing import Any

from logbook.format import kinds

KINDS = kinds.NAMES


def body_model(kind: str) -> Any:
    """The pydantic model class for an entry kind (KeyError for an unknown kind)."""
    return kinds.load(kinds.KINDS[kind].model)


def apply_amendments(plan: dict[str, Any], amendments: list[dict[str, Any]]) -> dict[str, Any]:
    """The plan as amended, in ledger order (amendments never edit the plan entry).

    Here rather than beside the Plan model so that readers (brief) need no pydantic.
    """
    out = dict(plan)
    for changes in amendments:
        out.update(changes)
    return out
