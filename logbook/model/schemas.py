"""JSON Schemas of the entry bodies, generated from the record models.

`logbook.analysis.report_shapes` writes them into `schemas/` beside the command outputs' schemas; a
test keeps them fresh.
"""

from __future__ import annotations

import json
from typing import Any

from logbook.model import KINDS, body_model


def entry_schemas() -> dict[str, dict[str, Any]]:
    """One schema per entry kind's body, keyed by file name."""
    out = {}
    for kind in KINDS:
        schema = body_model(kind).model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"https://logbook.dev/schemas/{kind}.json"
        out[f"{kind}.json"] = schema
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"

