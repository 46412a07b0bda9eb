"""The JSON form of a report: the report's data as it is (schema: schemas/report.json)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from logbook.analysis.report_shapes import Report


class JsonRenderer:
    """Two-space indented JSON; scores stay fractions of the metric's scale."""

    name = "json"

    def render(self, rep: Report) -> str:
        import orjson

        return orjson.dumps(rep.as_json(), option=orjson.OPT_INDENT_2).decode() + "\n"


JSON = JsonRenderer()
