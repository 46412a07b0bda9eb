"""Record models, one per entry kind. Imported lazily: pydantic costs nothing until used."""

from __future__ import annotations

from typing import Any

KINDS = ("genesis", "key", "plan", "amendment", "run", "retraction", "claim", "band", "note")


def body_model(kind: str) -> Any:
    """The pydantic model class for an entry kind."""
    if kind == "run":
        from logbook.model.run import Run

        return Run
    if kind in ("plan", "amendment"):
        from logbook.model import plan

        return plan.Plan if kind == "plan" else plan.Amendment
    from logbook.model import entries

    return {
        "genesis": entries.Genesis,
        "key": entries.Key,
        "retraction": entries.Retraction,
        "claim": entries.Claim,
        "band": entries.Band,
        "note": entries.Note,
    }[kind]


def apply_amendments(plan: dict[str, Any], amendments: list[dict[str, Any]]) -> dict[str, Any]:
    """The plan as amended, in ledger order (amendments never edit the plan entry).

    Here rather than beside the Plan model so that readers (brief) need no pydantic.
    """
    out = dict(plan)
    for changes in amendments:
        out.update(changes)
    return out
