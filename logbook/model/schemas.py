"""JSON Schemas generated from the record models; `schemas/` holds them, a test keeps them fresh."""

from __future__ import annotations

import json
from pathlib import Path
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


def extra_schemas() -> dict[str, dict[str, Any]]:
    """Schemas of command outputs documented beside the entry kinds (report, brief)."""
    out: dict[str, dict[str, Any]] = {}
    try:
        from logbook.analysis.schemas import output_schemas
    except ImportError:
        return out
    out.update(output_schemas())
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_all(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in {**entry_schemas(), **extra_schemas()}.items():
        path = folder / name
        path.write_text(render(schema))
        written.append(path)
    return written


if __name__ == "__main__":  # python -m logbook.model.schemas schemas/
    import sys

    for p in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        print(p)
