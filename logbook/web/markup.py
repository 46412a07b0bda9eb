"""HTML built from values, every one escaped unless it is already `Markup`.

Entries are untrusted input: a note, an item id or an apparatus value may hold markup. Pages
are therefore never assembled by pasting strings: `tag` escapes every child and attribute
value that is not `Markup` (which only `tag`, `esc` and `join` produce), and `href` builds
links from path segments quoted whole, so a ledger value can neither open an element nor name
a scheme (``javascript:``) in a link.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

Child = Any  # str | Markup | int | float | None | Iterable of those


class Markup(str):
    """Text that is already HTML (built here, never taken from the ledger)."""

    __slots__ = ()


def esc(value: Any) -> Markup:
    """``value`` as HTML text: None as "—", Markup as is, anything else escaped."""
    if isinstance(value, Markup):
        return value
    return Markup(escape("—" if value is None else str(value), quote=True))


def join(children: Iterable[Child], sep: str = "") -> Markup:
    return Markup(esc(sep).join(_child(c) for c in children))


# a word with a hyphen or a slash in it (a slug, a model's name, a date, a uuid) is kept on
# one line: a browser breaks a line after a hyphen, so "kv-q8-" and "vs-f16" would stand on
# two. A word longer than a phone's line is left to break, as it must.
_JOINED = re.compile(r"\S*[-/\u2010-\u2014]\S*")
LONGEST_KEPT = 40
# elements whose text is text only (a span in them would be shown as its tags), or laid out
# as it is written
_PLAIN = {"title", "style", "script", "textarea", "option", "pre", "code"}


def _text(value: str) -> Markup:
    """``value`` escaped, each word with a hyphen in it kept whole (`_JOINED`)."""
    out, last = [], 0
    for m in _JOINED.finditer(value):
        if 3 <= len(m.group()) <= LONGEST_KEPT:
            out += [escape(value[last:m.start()], quote=True),
                    f'<span class="w">{escape(m.group(), quote=True)}</span>']
            last = m.end()
    out.append(escape(value[last:], quote=True))
    return Markup("".join(out))


def _one_word(c: Child) -> bool:
    """``c`` is one word that `_text` would keep whole."""
    return (isinstance(c, str) and not isinstance(c, Markup)
            and 3 <= len(c) <= LONGEST_KEPT and _JOINED.fullmatch(c) is not None)


def _child(c: Child, plain: bool = False) -> Markup:
    if isinstance(c, str) and not isinstance(c, Markup) and not plain:
        return _text(c)
    if isinstance(c, str | int | float) or c is None:
        return esc(c)
    if isinstance(c, Iterable):
        return Markup("".join(_child(x, plain) for x in c))
    return esc(c)


VOID = {"input", "meta", "br", "hr", "img", "link"}


def tag(element: str, /, *children: Child, **attrs: Any) -> Markup:
    """``<element attrs>children</element>``; attribute names come from code (``cls`` is
    ``class``, ``data_x`` is ``data-x``), values are escaped; False and None omit one."""
    plain = element in _PLAIN
    if not plain and len(children) == 1 and _one_word(children[0]):
        # the element is the word (a slug's link, a model's cell): it is kept whole itself
        attrs = {**attrs, "cls": " ".join(c for c in (attrs.get("cls"), "w") if c)}
        plain = True
    parts = [element]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = "class" if key == "cls" else key.rstrip("_").replace("_", "-")
        parts.append(attr if value is True else f'{attr}="{esc(value)}"')
    if element in VOID:
        return Markup(f"<{' '.join(parts)}>")
    inner = "".join(_child(c, plain) for c in children)
    return Markup(f"<{' '.join(parts)}>{inner}</{element}>")


def href(*segments: Any, query: dict[str, Any] | None = None) -> str:
    """A site-absolute path from segments, each quoted whole (a ``/`` in a value stays
    inside its segment), with an optional query string."""
    path = "/" + "/".join(quote(str(s), safe="") for s in segments)
    pairs = {k: v for k, v in (query or {}).items() if v not in (None, "")}
    return path + ("?" + urlencode(pairs, doseq=True) if pairs else "")


def link(text: Child, *segments: Any, query: dict[str, Any] | None = None,
         **attrs: Any) -> Markup:
    return tag("a", text, href=href(*segments, query=query), **attrs)


def table(head: list[str], rows: Iterable[list[Child]], cls: str | None = None,
          row_attrs: Iterable[dict[str, Any]] | None = None) -> Markup:
    """A table of header names and rows of cells (each cell a child as for `tag`)."""
    attrs = list(row_attrs) if row_attrs is not None else None
    body = [tag("tr", [tag("td", c) for c in row], **(attrs[i] if attrs else {}))
            for i, row in enumerate(rows)]
    return tag("table", tag("thead", tag("tr", [tag("th", h) for h in head])),
               tag("tbody", body), cls=cls)


def finding(message: str) -> Markup:
    """An audit finding's message as the audit prints it: its first line as text, and lines
    laid out as a table (`  a | b | c`, as A06 and A18 print their fields) as a table, not
    run into one line; any other line on a line of its own."""
    lines = message.splitlines()
    out: list[Markup] = [tag("span", lines[0] if lines else "")]
    rows = [[cell.strip() for cell in line.split(" | ")] for line in lines[1:]]
    if len(rows) >= 2 and all(len(r) == len(rows[0]) > 1 for r in rows):
        out.append(table(rows[0], rows[1:], cls="finding-table"))
    else:
        out += [tag("div", line.strip()) for line in lines[1:] if line.strip()]
    return join(out)
