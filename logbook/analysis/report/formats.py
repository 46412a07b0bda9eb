"""The report's output forms behind one interface: a registry of renderers by name.

A renderer turns the typed report (`report_shapes.Report`, from ``build_report``, with the
command's audit findings) into the whole text of one form. A new form is one module with a
renderer, its entry in ``FORMATS`` (a function that imports it) and its lines in
docs/reporting.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from logbook.analysis.report_shapes import Report


class Renderer(Protocol):
    @property
    def name(self) -> str:
        """The form's name, as `report` options and FORMATS know it."""
        ...

    def render(self, rep: Report) -> str:
        """The whole output of this form (for stdout or a file)."""
        ...


# each form's module is imported only when that form is asked for
def _text() -> Renderer:
    from logbook.analysis.report.text import TEXT

    return TEXT


def _markdown() -> Renderer:
    from logbook.analysis.report.text import MARKDOWN

    return MARKDOWN


def _json() -> Renderer:
    from logbook.analysis.report.json_form import JSON

    return JSON


def _html() -> Renderer:
    from logbook.analysis.report.html import HTML

    return HTML


FORMATS: dict[str, Callable[[], Renderer]] = {
    "text": _text, "markdown": _markdown, "json": _json, "html": _html}


def render(rep: Report, form: str) -> str:
    """The report ``rep`` in the form named ``form`` (a key of FORMATS)."""
    return FORMATS[form]().render(rep)


def write(rep: Report, form: str, path: Path | str, what: str) -> None:
    """Write the report in ``form`` to ``path``. The file (a temporary one beside it) is
    opened before anything is rendered, so a directory or a missing folder is refused before
    a renderer imports anything (matplotlib, for HTML); the file is whole or absent."""
    from logbook.files import atomic_writer

    with atomic_writer(path, what) as fh:
        fh.write(render(rep, form))
