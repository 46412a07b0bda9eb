"""The bounds on what logbook reads and writes (docs/format.md, docs/recording.md).

* An entry's canonical bytes are at most MAX_ENTRY_BYTES (16 MiB): large logs belong in blobs,
  which a run references by hash. Larger entries are refused, exit 2.
* Values nest at most MAX_DEPTH (100) levels deep; JSON and TOML text is checked before it is
  parsed (``check_nesting``), so no parser or later step recurses past it.
* Files and streams named on the command line: ``logbook.files.max_input_bytes`` (256 MiB,
  LOGBOOK_MAX_INPUT_BYTES) and ``read_timeout`` (30 s, LOGBOOK_READ_TIMEOUT); plan files are
  at most MAX_PLAN_BYTES.
"""

from __future__ import annotations

import re
from typing import Any

from logbook.errors import InputError

MAX_ENTRY_BYTES = 16 * 1024 * 1024
MAX_LINE_BYTES = 2 * MAX_ENTRY_BYTES + 64 * 1024  # an exported line: envelope, digest, signature
MAX_DEPTH = 100
PARSER_DEPTH = 1000  # orjson itself stops at 1024; the fallback parser catches RecursionError
MAX_PLAN_BYTES = 1024 * 1024

# a string's body as runs of one character class between escapes ("unrolled"): the regex
# engine keeps no backtracking state per character, so a 15 MiB string costs no more memory
# than itself (the alternation "(?:[^"\\]|\\.)*" kept about 120 bytes per character)
_JSON_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_TOML_SKIPPED = re.compile(rb'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
                           rb"|'[^'\n]*'|#[^\n]*")
_NOT_BRACKETS = re.compile(rb"[^\[\]{}]+")
_INNERMOST = re.compile(rb"\[\]|\{\}|\[\}|\{\]")


def nesting_depth(data: bytes, toml: bool = False, stop: int = MAX_DEPTH) -> int:
    """How deeply the arrays and objects (inline tables) of JSON or TOML text nest, counted
    up to ``stop + 1``. Strings (and TOML comments) are skipped; the text need not be valid,
    as the parser judges that. Each pass removes the innermost bracket pairs, at C speed."""
    text = (_TOML_SKIPPED if toml else _JSON_STRINGS).sub(b"", data)
    brackets = _NOT_BRACKETS.sub(b"", text)
    depth = 0
    while brackets and depth <= stop:
        shorter = _INNERMOST.sub(b"", brackets)
        if len(shorter) == len(brackets):
            break  # unbalanced: the parser will say where
        brackets, depth = shorter, depth + 1
    return depth


def check_nesting(data: bytes, source: str, toml: bool = False,
                  limit: int = MAX_DEPTH) -> None:
    """InputError naming ``source`` when its values nest more than ``limit`` levels deep.

    Harness files are pre-checked at PARSER_DEPTH, where no parser recurses into trouble,
    and then walked at MAX_DEPTH once parsed, so that the refusal can name the field."""
    if len(data) <= limit:
        return  # each level takes a byte: a text no longer than the limit cannot pass it
    if nesting_depth(data, toml, stop=limit) > limit:
        raise InputError(f"{source}: values nest more than {limit} levels deep")


def check_entry_size(size: int, where: str = "") -> None:
    """InputError when an entry's canonical bytes exceed MAX_ENTRY_BYTES."""
    if size > MAX_ENTRY_BYTES:
        raise InputError(f"{where}the entry is {size} bytes, more than the {MAX_ENTRY_BYTES} "
                         "(16 MiB) an entry may hold: keep large logs as blobs (`logbook run "
                         "--log FILE`) and notes short")


def check_value_depth(value: object, where: str) -> None:
    """InputError naming ``where`` when a parsed value nests more than MAX_DEPTH levels deep
    (walked without recursion, before anything that recurses touches it)."""
    if not isinstance(value, dict | list):
        return
    stack: list[tuple[dict[object, object] | list[object], int]] = [(value, 1)]
    while stack:  # only containers are pushed: a run's thousands of scores never are
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"{where}: values nest more than {MAX_DEPTH} levels deep")
        for sub in item.values() if isinstance(item, dict) else item:
            if isinstance(sub, dict | list):
                stack.append((sub, depth + 1))


# orjson parses a text into a buffer sized for the worst case (about 12 bytes a byte of a long
# string); Python's json holds a long text about once more. Texts from here on go that way.
LARGE_TEXT = 1 << 20


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (_INF, -_INF):  # as orjson refuses 1e400
        raise ValueError(f"number {text[:40]} is infinity when parsed as double")
    return value


_INF = float("inf")
# orjson reads an integer past 64 bits as a float (100000000000000000000001 as 1e23, a number
# the text did not write): a text with an integer of 19 digits or more (the first that may
# not fit) is read by Python's json, which keeps it exact. Seen through _DIGITS, an integer is
# a run of "0" after " " (a string's first digits follow "x", as do a fraction's and an
# exponent's); digits after a space inside a string only send the text the slower way.
_DIGITS = bytes(48 if 48 <= b <= 57 else 120 if b in b'".eE' else 32 for b in range(256))
_LONG = b" " + b"0" * 19


def _long_integer(data: bytes) -> bool:
    seen = data.translate(_DIGITS)
    return _LONG in seen or seen.startswith(_LONG[1:])


def loads_bounded(data: bytes | str) -> Any:
    """``orjson.loads(data)``, in memory bounded by a small multiple of the text's size: a text
    over LARGE_TEXT bytes, or one that writes an integer orjson would read as a float, is
    parsed by Python's json, as strictly (NaN, the infinities and a lone surrogate are
    refused; a failure is the same orjson.JSONDecodeError)."""
    import orjson

    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if len(raw) < LARGE_TEXT and not _long_integer(raw):
        return orjson.loads(data)
    import json

    try:
        found = json.loads(data, parse_constant=_not_a_number, parse_float=_finite)
        if b"\\u" in raw.lower() or not raw.isascii():
            _no_lone_surrogate(found)
        return found
    except json.JSONDecodeError as exc:
        raise orjson.JSONDecodeError(exc.msg, exc.doc, exc.pos) from None
    except (ValueError, RecursionError) as exc:  # a constant, or bytes that are not UTF-8
        raise orjson.JSONDecodeError(str(exc), "", 0) from None


def _no_lone_surrogate(value: Any) -> None:
    """ValueError at a string that holds half of a surrogate pair (orjson refuses the text)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            stack.extend(node)
            stack.extend(node.values())
        elif type(node) is list:
            stack.extend(node)
        elif type(node) is str and not node.isascii():
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("a string holds a lone surrogate") from None
