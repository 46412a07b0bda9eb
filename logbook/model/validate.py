"""Validate a body against its kind's model, turning pydantic's report into one sentence.

``check_body`` is what an append calls: a body whose shape logbook.model.shapes vouches for
costs no pydantic import; any other body goes to the model, which names the field at fault.
"""

from __future__ import annotations

from typing import Any

from logbook.errors import InputError
from logbook.model import KINDS, body_model, shapes


def _loc(loc: tuple[Any, ...]) -> str:
    out = "body"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "function-before") or str(part).startswith("function-"):
            continue
        else:
            out += f".{part}"
    return out


def validate_body(kind: str, body: Any) -> Any:
    """The validated model of ``body``; InputError naming the first field at fault."""
    from pydantic import ValidationError

    if kind not in KINDS:
        raise InputError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if not isinstance(body, dict):
        raise InputError(f"body of a {kind} entry must be a JSON object")
    try:
        return body_model(kind).model_validate(body)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        msg = str(err.get("msg", "invalid"))
        msg = msg.removeprefix("Value error, ")
        where = _loc(tuple(err.get("loc", ())))
        if err.get("type") == "extra_forbidden":
            msg = "is not a field of a " + kind + " entry"
        elif err.get("type") == "missing":
            msg = "is required"
        raise InputError(f"{where}: {msg}") from None


def check_body(kind: str, body: Any) -> None:
    """InputError naming the first field at fault, as ``validate_body``; a well-formed run or
    note is accepted without loading its model."""
    if kind in KINDS and shapes.well_formed(kind, body):
        return
    validate_body(kind, body)
