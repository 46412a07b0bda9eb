"""A JSON text that gives a key twice in one object means two things to two readers (most keep
the last value, some the first; RFC 8785 takes I-JSON, RFC 7493, which forbids it): every
place logbook reads signed or to-be-signed JSON refuses such a text, with this one check."""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["FAST_BELOW", "repeated_key", "written_by_python"]

_SORTED = orjson.OPT_SORT_KEYS
# orjson.dumps reserves room for escaping every character (several bytes each): a longer text
# is parsed key by key, which holds it about once more
FAST_BELOW = 1 << 20


def written_by_python(values: list[Any], raws: list[bytes]) -> bool:
    """Whether ``raws`` are the texts Python's ``json.dumps`` writes by default for ``values``
    (", " and ": " between items, ASCII escapes), checked with one encoding of them all: like
    orjson's bytes, a text equal to these gives every key of every object once. False where
    they are not, or past FAST_BELOW bytes in all (the encoding would hold the text again)."""
    import json

    if sum(map(len, raws)) >= FAST_BELOW:
        return False
    try:
        return json.dumps(values, allow_nan=False).encode("ascii") == b"[" + b", ".join(
            raws) + b"]"
    except (TypeError, ValueError, RecursionError):
        return False


class _Repeated(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen = dict(pairs)
    if len(seen) != len(pairs):
        keys = [k for k, _ in pairs]
        raise _Repeated(next(k for k in keys if keys.count(k) > 1))
    return seen


def repeated_key(raw: bytes, parsed: Any, sort: bool = True) -> str | None:
    """The first key that one object of the JSON text ``raw`` gives twice (None: none does).
    JSON parsers disagree on such an object (most keep the last value, some the first), so a
    text holding one means two things to two verifiers. Fast path (texts under 1 MiB):
    ``raw`` is already the bytes its parse gives back (canonical bytes, or an export line
    logbook wrote), which a text with a repeated key can never be; otherwise the text is
    parsed again, key by key."""
    if len(raw) < FAST_BELOW:
        try:
            if orjson.dumps(parsed, option=_SORTED if sort else 0) == raw:
                return None
        except TypeError:  # nested deeper than orjson writes: parsed again, key by key
            pass
        if not sort and written_by_python([parsed], [raw]):
            return None  # a line as Python's json.dumps writes it (most harnesses' lines)
    import json

    try:
        json.loads(raw, object_pairs_hook=_no_repeats)
    except _Repeated as exc:
        return exc.key
    except (ValueError, RecursionError):
        return None  # not JSON at all, or too deep: the caller's own checks say so
    return None
