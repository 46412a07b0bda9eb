"""`logbook report PLAN --markdown` renders as CommonMark (issue 37 item 6), read by a CommonMark
parser (markdown-it-py, with the GitHub table extension the run tables use): every line of the
text form is one block of its own (a heading, a list item, a table row), none merged into
another, and text that Markdown would read as markup (underscores, brackets, <) stays text."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from conftest import run_cli


def _blocks(markdown: str) -> tuple[list[str], int]:
    """(the text of every heading and list item, the number of table rows)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    texts, rows = [], 0
    for i, t in enumerate(tokens):
        if t.type == "inline" and tokens[i - 1].type in ("heading_open", "paragraph_open"):
            texts.append(t.content)
        if t.type == "tr_open":
            rows += 1
    return texts, rows


def _plain(text: str) -> str:
    """An inline's source with Markdown's backslash escapes undone."""
    return html.unescape(re.sub(r"\\(.)", r"\1", text))


def test_the_demo_report_renders_line_by_line(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("markdown_it")
    assert run_cli("demo", "--dir", str(tmp_path / "d")).code == 0
    monkeypatch.setenv("LOGBOOK_DIR", str(tmp_path / "d"))
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "d" / "demo.key"))
    text = run_cli("report", "kv-q8-vs-f16").out
    md = run_cli("report", "kv-q8-vs-f16", "--markdown").out
    texts, rows = _blocks(md)
    shown = [_plain(t) for t in texts]
    runs = 0
    for line in text.splitlines():
        body = line.strip()
        if not body:
            continue
        if re.match(r"@\d+\s", body):  # a run's row: a table row in Markdown
            runs += 1
            continue
        assert body in shown, (body, shown)
    assert rows == runs + 2  # each arm's header row, and one row a run
    # no block holds two of the text form's lines (what CommonMark does to bare lines)
    assert all("\n" not in t for t in texts)
    assert any(s.startswith("success: effect_low > ") for s in shown)  # not emphasis
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").enable("table").render(md)
    assert "<em>" not in rendered and "<strong>" not in rendered  # nothing read as markup
