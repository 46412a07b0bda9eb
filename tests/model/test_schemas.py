"""The JSON Schemas in schemas/ are generated from the models and must not go stale."""

from __future__ import annotations

from pathlib import Path

from logbook.analysis.schemas import all_schemas
from logbook.model.schemas import entry_schemas, render

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_schemas_are_fresh() -> None:
    expected = all_schemas()
    for name, schema in expected.items():
        path = SCHEMAS / name
        assert path.is_file(), (
            f"{path} is missing: run `python -m logbook.analysis.schemas schemas/`")
        assert path.read_text() == render(schema), (
            f"{path} is stale: run `python -m logbook.analysis.schemas schemas/`")
    stray = {p.name for p in SCHEMAS.glob("*.json")} - set(expected)
    assert not stray, f"schemas/ holds files no model generates: {sorted(stray)}"


def test_every_kind_refuses_extra_fields() -> None:
    for name, schema in entry_schemas().items():
        assert schema.get("additionalProperties") is False, name
