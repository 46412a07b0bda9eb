"""Canonical bytes: RFC 8785's own published examples, and hypothesis properties."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logbook.errors import InputError
from logbook.format.canonical import (
    MAX_SAFE_INT,
    SIGNATURE_DOMAIN,
    canonical_bytes,
    digest_bytes,
    signing_input,
)

VECTORS = json.loads((Path(__file__).parents[1] / "data" / "rfc8785_vectors.json").read_text())


def test_rfc8785_sample_3_2_2() -> None:
    case = VECTORS["section_3_2_2"]
    assert canonical_bytes(json.loads(case["input"])) == case["output"].encode("utf-8")


def test_rfc8785_property_sorting_3_2_3() -> None:
    case = VECTORS["section_3_2_3"]
    out = canonical_bytes(json.loads(case["input"])).decode("utf-8")
    keys = list(json.loads(out, object_pairs_hook=lambda pairs: [k for k, _ in pairs]))
    assert keys == case["key_order"]


@pytest.mark.parametrize("bits,text", VECTORS["appendix_b"])
def test_rfc8785_number_serialisation(bits: str, text: str) -> None:
    import rfc8785

    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    # the library we build on writes every published sample exactly
    assert rfc8785.dumps(value) == text.encode()
    if not MAX_SAFE_INT < abs(value) < 1e21:
        assert canonical_bytes(value) == text.encode()
    else:
        # beyond 2^53 the number would not round-trip as the same JSON type: refused
        with pytest.raises(InputError):
            canonical_bytes(value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 2**53, -(2**53), 10**20,
                                 9007199254740992.0, 1e20])
def test_unrepresentable_values_are_refused(bad: float) -> None:
    with pytest.raises(InputError):
        canonical_bytes({"a": [1, {"b": bad}]})


def test_largest_safe_integer_is_accepted() -> None:
    assert canonical_bytes(MAX_SAFE_INT) == str(MAX_SAFE_INT).encode()


def test_signing_input_is_domain_separated() -> None:
    d = digest_bytes(b"{}")
    assert signing_input(d) == b"logbook.entry.v1\n" + d
    assert SIGNATURE_DOMAIN == b"logbook.entry.v1\n"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-MAX_SAFE_INT, MAX_SAFE_INT)
    | st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda f: not MAX_SAFE_INT < abs(f) < 1e21) | st.text(),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_canonical_is_stable_and_idempotent(value: object) -> None:
    a = canonical_bytes(value)
    assert canonical_bytes(value) == a
    # parsing the canonical bytes and canonicalising again gives the same bytes
    assert canonical_bytes(json.loads(a)) == a


# the apparatus objects whose fields are typed (logbook.format.apparatus.TYPED): a generated
# `retries: []` is refused at the door, as it should be, and is not what this test is about
_FREE_NAMES = st.text(min_size=1, max_size=8).filter(
    lambda k: k not in {"execution", "retries", "scoring"})


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(_FREE_NAMES, json_values, min_size=1, max_size=4))
def test_round_trip_through_the_store_is_byte_identical(tmp_path_factory, body: dict) -> None:
    """An exploratory run's apparatus is free-form beside its typed objects: what is stored is
    exactly JCS."""
    from logbook.crypto.signing import SigningKey
    from logbook.format.apparatus import TYPED

    assert set(TYPED) == {"execution", "retries", "scoring"}  # the names left out above
    from logbook.ledger.service import Ledger

    folder = tmp_path_factory.mktemp("rt")
    key = SigningKey.generate()
    with Ledger.init(folder, "rt", key) as ledger:
        run = {"plan": None, "status": "failed", "reason": "x", "apparatus": body}
        entry = ledger.append("run", run, key)
        stored = ledger.entry_at(entry.seq)
        assert stored is not None
        assert stored.raw == canonical_bytes(json.loads(stored.raw))
        assert json.loads(stored.raw)["body"]["apparatus"] == json.loads(
            canonical_bytes(body))


plain_values = st.recursive(
    st.none() | st.booleans() | st.integers(-MAX_SAFE_INT, MAX_SAFE_INT)
    | st.text(alphabet=st.characters(codec="utf-8")),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=40,
)


@settings(max_examples=1000, deadline=None)
@given(plain_values)
def test_fast_path_is_byte_identical_to_the_reference(value: object) -> None:
    """Values without floats take a sorted-key orjson path; it must equal RFC 8785 exactly
    (every control character, non-ASCII and astral text, keys of any script)."""
    import rfc8785

    assert canonical_bytes(value) == rfc8785.dumps(value)


def test_fast_path_edge_cases() -> None:
    import rfc8785

    tricky = {"".join(chr(i) for i in range(32)): "\x7f\u2028\u2029\ud7ff\ue000\uffff\U0001d11e",
              "\ue000": 1, "\U0001d11e": 2, "é": [MAX_SAFE_INT, -MAX_SAFE_INT, True, None]}
    assert canonical_bytes(tricky) == rfc8785.dumps(tricky)
    with pytest.raises(InputError):
        canonical_bytes({"s": "\ud800"})  # a lone surrogate is not text


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=40), st.integers(min_value=0, max_value=3))
def test_long_strings_take_their_own_path_and_stay_byte_identical(piece: str,
                                                                  extra: int) -> None:
    """A string of LONG_STRING characters or more is escaped outside orjson (whose buffer
    for it would be several times its size): still exactly RFC 8785's bytes."""
    import rfc8785

    from logbook.format.canonical import LONG_STRING

    every = "".join(chr(i) for i in range(32)) + '"\\/\x7f\u2028\u2029é\ue000\U0001d11e'
    long = (piece + every) * (LONG_STRING // len(piece + every) + 1 + extra)
    assert len(long) >= LONG_STRING
    value = {"text": long, "n": [1.5, 2], "k": {"s": long[:10]}}
    assert canonical_bytes(value) == rfc8785.dumps(value)


def test_a_long_string_with_a_lone_surrogate_is_refused() -> None:
    from logbook.format.canonical import LONG_STRING

    with pytest.raises(InputError):
        canonical_bytes({"s": "a" * LONG_STRING + "\ud800"})
