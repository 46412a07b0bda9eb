"""Floats in canonical bytes: the fast encoder (repr() digits laid out as ECMAScript's
Number::toString) against the ``rfc8785`` package, byte for byte, on every kind of float
JCS treats differently, alone and inside whole entry bodies."""

from __future__ import annotations

import math
import struct

import pytest
import rfc8785
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logbook.errors import InputError
from logbook.format.canonical import MAX_SAFE_INT, _number_text, canonical_bytes


def _representable(f: float) -> bool:
    return math.isfinite(f) and not MAX_SAFE_INT < abs(f) < 1e21


def _bits(u: int) -> float:
    return float(struct.unpack(">d", u.to_bytes(8, "big"))[0])


# any bit pattern: subnormals, every exponent, both signs
any_double = st.integers(0, 2**64 - 1).map(_bits).filter(_representable)
subnormal = st.integers(1, 2**52 - 1).map(_bits) | st.integers(1, 2**52 - 1).map(
    lambda u: -_bits(u))
# the layouts change at 1e-6 (0.000001 vs 1e-7) and at 1e21 (digits vs 1e+21): the doubles
# on either side of each, a few ulps away
near = st.sampled_from([1e-7, 1e-6, 1e-5, 1e-4, 1e21, 1e22, 1e16]).flatmap(
    lambda b: st.integers(-4, 4).map(lambda k: _ulps(b, k))).filter(_representable)
integral = st.integers(-MAX_SAFE_INT, MAX_SAFE_INT).map(float)
huge_or_tiny = st.floats(min_value=1e21, max_value=1.7976931348623157e308) | st.floats(
    min_value=5e-324, max_value=1e-6)
floats = any_double | subnormal | near | integral | huge_or_tiny | st.floats(
    allow_nan=False, allow_infinity=False).filter(_representable)


def _ulps(base: float, k: int) -> float:
    f = base
    for _ in range(abs(k)):
        f = math.nextafter(f, math.inf if k > 0 else -math.inf)
    return f


@settings(max_examples=3000, deadline=None)
@given(floats)
@example(0.0)
@example(-0.0)
@example(5e-324)
@example(-5e-324)
@example(2.2250738585072014e-308)  # the smallest normal
@example(1.7976931348623157e308)
@example(9.999999999999999e-7)
@example(1e-6)
@example(1e21)
@example(float(MAX_SAFE_INT))
@example(0.1)
@example(123456789012.5)
def test_a_float_is_written_exactly_as_the_reference_writes_it(f: float) -> None:
    assert canonical_bytes(f) == rfc8785.dumps(f)
    assert canonical_bytes([f, -f]) == rfc8785.dumps([f, -f])


@settings(max_examples=3000, deadline=None)
@given(floats)
def test_the_number_text_reads_back_as_the_same_float(f: float) -> None:
    text = _number_text(f)
    assert float(text) == f
    if "e" in text:  # JS exponents: a sign, no padding, only where the layout asks for one
        exponent = text.partition("e")[2]
        assert exponent[0] in "+-" and exponent[1] != "0"
        assert abs(f) >= 1e21 or abs(f) < 1e-6
    else:
        assert abs(f) < 1e21 and (f == 0 or abs(f) >= 1e-6)


scores = st.lists(st.none() | floats | st.sampled_from([0.0, 1.0, 0.5]), min_size=1,
                  max_size=60)
apparatus = st.dictionaries(
    st.text(min_size=1, max_size=6),
    st.none() | st.booleans() | floats | st.integers(-MAX_SAFE_INT, MAX_SAFE_INT)
    | st.text(max_size=6), max_size=6)


@settings(max_examples=400, deadline=None)
@given(scores, apparatus)
def test_a_whole_run_envelope_is_byte_identical_to_the_reference(
        score: list[float | None], app: dict[str, object]) -> None:
    body = {"plan": None, "status": "completed",
            "apparatus": {**app, "decoding": {"temperature": 0.7, "top_p": 0.95}},
            "outcomes": {"metric": "acc", "id": [f"item-{i}" for i in range(len(score))],
                         "score": score,
                         "error": ["timeout" if s is None else None for s in score]}}
    envelope = {"v": 1, "ledger": "u", "seq": 3, "prev": "0" * 64,
                "ts": "2026-01-01T00:00:00.000000Z", "kind": "run", "signer": "ab" * 32,
                "body": body}
    assert canonical_bytes(envelope) == rfc8785.dumps(envelope)


@pytest.mark.parametrize("bad", [2.0**53, -(2.0**53), 1e20, 9.999999999999999e20])
def test_floats_beyond_2_53_below_1e21_are_refused_naming_the_field(bad: float) -> None:
    with pytest.raises(InputError, match=r"^outcomes\.score\[1\]: .* beyond 2\^53"):
        canonical_bytes({"outcomes": {"score": [0.5, bad]}})


def test_non_ascii_keys_beside_floats_sort_as_the_reference_sorts_them() -> None:
    value = {"\ue000": 0.1, "\U0001d11e": 1e-7, "é": [1e21, -0.0], "z": 2.5e-5}
    assert canonical_bytes(value) == rfc8785.dumps(value)
