"""The JSON Schemas in schemas/ are generated from the models and must not go stale."""

from __future__ import annotations

from pathlib import Path

from logbook.analysis.report_shapes import all_schemas
from logbook.model.schemas import entry_schemas, render

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_schemas_are_fresh() -> None:
    expected = all_schemas()
    for name, schema in expected.items():
        path = SCHEMAS / name
        assert path.is_file(), (
            f"{path} is missing: run `python -m logbook.analysis.report_shapes schemas/`")
        assert path.read_text() == render(schema), (
            f"{path} is stale: run `python -m logbook.analysis.report_shapes schemas/`")
    stray = {p.name for p in SCHEMAS.glob("*.json")} - set(expected)
    assert not stray, f"schemas/ holds files no model generates: {sorted(stray)}"


def test_every_kind_refuses_extra_fields() -> None:
    for name, schema in entry_schemas().items():
        assert schema.get("additionalProperties") is False, name


def test_output_schemas_name_exactly_the_fields_their_shapes_print() -> None:
    """schemas/report.json and schemas/brief.json come from the dataclasses the commands
    print (analysis/report_shapes.py, analysis/brief_shapes.py): each shape's schema names the
    keys its ``as_json`` can print, under their printed names, and nothing else."""
    from dataclasses import fields

    from logbook.analysis import brief_shapes, report_shapes

    for name, root, shapes in (("report.json", report_shapes.Report, report_shapes.SHAPES),
                               ("brief.json", brief_shapes.Brief, brief_shapes.SHAPES)):
        schema = all_schemas()[name]
        assert shapes[-1] is root and schema["title"] == root.__name__
        for shape in shapes:
            defined = schema if shape is root else schema["$defs"][shape.__name__]
            printed = {f.metadata.get("json", f.name) for f in fields(shape)
                       if f.metadata.get("json", True) is not False
                       and f.metadata.get("schema", True)}
            assert set(defined["properties"]) == printed, (name, shape.__name__)
            assert defined["additionalProperties"] is (shape.EXTRA == "allow"), shape
