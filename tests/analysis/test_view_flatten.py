"""`flatten` (apparatus as dotted names) is written once per run in an audit; it must give what
the plain recursive definition gives, on any JSON an entry can hold."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from logbook.analysis.view import flatten

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=4),
    max_leaves=20)


def reference(obj: Any, prefix: str = "") -> dict[str, Any]:
    """The definition: a dict's fields under ``prefix.``, a list as canonical JSON text."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(reference(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list):
        out[prefix] = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode()
    else:
        out[prefix] = obj
    return out


@given(JSON, st.sampled_from(["", "captured", "a.b"]))
def test_flatten_is_the_recursive_definition(obj: Any, prefix: str) -> None:
    got = flatten(obj, prefix)
    assert got == reference(obj, prefix)
    assert list(got) == list(reference(obj, prefix))  # the same order of fields too


def test_flatten_examples() -> None:
    assert flatten({"a": {"b": {"c": [2, 1]}, "d": None}, "e": {}}) == {"a.b.c": "[2,1]",
                                                                       "a.d": None}
    assert flatten({"decoding": {"temperature": 0}}, "x") == {"x.decoding.temperature": 0}
