"""Record models, one per entry kind (which model is whose: logbook.format.kinds). Imported
lazily: pydantic costs nothing until used."""

from __future__ import annotations

from collections.abc import Container, Iterable
from typing import Any, Protocol

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


class _Amendment(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def digest(self) -> str: ...
    @property
    def body(self) -> dict[str, Any]: ...


def amended(plan: dict[str, Any], amendments: Iterable[_Amendment],
            withdrawn: Container[str] = (), *, before: int | None = None,
            without: str | None = None) -> dict[str, Any]:
    """The plan as its standing amendments leave it: ``amendments`` are its amendment
    entries in ledger order, less those ``withdrawn`` (retracted), the one ``without`` (what
    the plan becomes if that one is withdrawn) and those at or after seq ``before``. The one
    place every reader (the door, the report, the audit, brief) computes an amended plan."""
    return apply_amendments(plan, [
        a.body.get("changes", {}) for a in amendments
        if a.digest not in withdrawn and a.digest != without
        and (before is None or a.seq < before)])
