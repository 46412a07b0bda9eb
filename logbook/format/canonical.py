"""Canonical bytes (RFC 8785 / JCS): the only place that turns objects into bytes to hash or sign.

DESIGN §4.1: digest = SHA-256 of the JCS bytes of the envelope; signature = Ed25519 over
``b"logbook.entry.v1\\n" + digest``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import orjson

from logbook.errors import InputError

SIGNATURE_DOMAIN = b"logbook.entry.v1\n"
MAX_SAFE_INT = 2**53 - 1
ZERO_DIGEST = "0" * 64


def _check(value: Any, path: str) -> None:
    """Refuse what JCS cannot represent exactly: NaN, infinities, integers beyond 2^53."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INT:
            raise InputError(f"{path or 'value'}: integer {value} is beyond 2^53 and cannot be "
                             "represented exactly in canonical JSON")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{path or 'value'}: {value} is not a finite number")
        if MAX_SAFE_INT < abs(value) < 1e21:
            # JCS writes such a float as integer digits (from 1e21 on it uses an exponent),
            # which read back as an integer beyond 2^53: refuse what would not round-trip
            raise InputError(f"{path or 'value'}: {value!r} is beyond 2^53 in magnitude and "
                             "cannot be represented exactly in canonical JSON")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InputError(f"{path or 'value'}: object key {k!r} is not a string")
            _check(v, f"{path}.{k}" if path else k)
        return
    if isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _check(v, f"{path}[{i}]")
        return
    raise InputError(f"{path or 'value'}: {type(value).__name__} is not a JSON value")


class _Unsafe(Exception):
    """A value the fast encoder will not vouch for: _check names the problem, if there is one."""


_Fragment = orjson.Fragment


def _number_text(f: float) -> str:
    """ECMAScript Number::toString of a finite float (RFC 8785 §3.2.2.3), from repr().

    repr() gives the shortest digits that round-trip, the closest to the value among them:
    the digits ECMAScript asks for. Only their layout differs: JS writes integers up to 1e21
    in full and numbers from 1e-6 on as 0.000ddd, and its exponent has a sign and no padding.
    """
    if f == 0:
        return "0"  # -0 too: JSON has one zero
    text = repr(f)
    if "e" not in text:  # 1e-4 <= |f| < 1e16: repr's fixed notation is JS's, but for 1.0
        return text[:-2] if text.endswith(".0") else text
    mantissa, _, exp_text = text.partition("e")
    sign = ""
    if mantissa[0] == "-":
        sign, mantissa = "-", mantissa[1:]
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).rstrip("0") or "0"
    # value = 0.DIGITS x 10^n (ECMAScript's n); repr's mantissa has one digit before its dot
    n = int(exp_text) + 1
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + digits
    else:
        e = n - 1
        out = (digits if k == 1 else digits[0] + "." + digits[1:]) + \
            ("e+" if e >= 0 else "e-") + str(abs(e))
    return sign + out


def _float(f: float) -> Any:
    """What orjson must write for ``f``: an int for an integer value, else the JCS text."""
    if f.is_integer():  # False for NaN and the infinities
        if -MAX_SAFE_INT <= f <= MAX_SAFE_INT:
            return int(f)  # JCS writes 1.0 as 1, as orjson writes the int
        if -1e21 < f < 1e21:
            raise _Unsafe  # beyond 2^53 and written as integer digits: _check refuses it
    elif not math.isfinite(f):
        raise _Unsafe
    return _Fragment(_number_text(f).encode())


LONG_STRING = 1 << 16  # characters: from here on a string is written by _long_string


def _long_string(value: str) -> Any:
    import json

    try:
        return _Fragment(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: the reference says why
        raise _Unsafe from None


def _prepared(value: Any) -> Any:
    """``value`` with every float replaced by what orjson must write for it (RFC 8785's
    number text as an orjson.Fragment, or an int), for sorted-key orjson output that is
    byte-identical to RFC 8785: the two differ only in how numbers are written and in how
    non-ASCII keys sort (orjson by UTF-8 bytes, JCS by UTF-16 units; those go the reference
    way). Raises _Unsafe for anything _check or the reference must look at."""
    t = type(value)
    if t is str:
        # orjson reserves room for the worst case of escaping (several bytes a character): a
        # long string is written here, escaped as JCS escapes it (json's ensure_ascii=False
        # escapes exactly the same characters, with the same lowercase \u00xx)
        return value if len(value) < LONG_STRING else _long_string(value)
    if t is bool or value is None:
        return value
    if t is int:
        if -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            return value
        raise _Unsafe
    if t is float:
        return _float(value)
    if t is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str or not k.isascii():
                raise _Unsafe
            out[k] = _prepared(v)
        return out
    if t is list:
        return [_prepared(v) for v in value]
    raise _Unsafe


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of ``value``; refuses values JCS cannot represent.

    Sorted-key orjson writes the document, with every float already turned into its JCS
    text (tests/format/test_canonical.py holds both to the ``rfc8785`` package, byte for
    byte); the reference package writes only what the fast path will not vouch for
    (non-ASCII keys, tuples, subclasses of the JSON types) once _check has refused what JCS
    cannot represent.
    """
    try:
        return orjson.dumps(_prepared(value), option=orjson.OPT_SORT_KEYS)
    except (_Unsafe, RecursionError, orjson.JSONEncodeError):
        pass  # e.g. a lone surrogate: let the reference say why
    _check(value, "")  # names the field at fault, if there is one
    import rfc8785  # the reference, imported only for what the fast path leaves to it

    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise InputError(f"value cannot be canonicalised: {exc}") from exc


def digest_bytes(canonical: bytes) -> bytes:
    """The 32-byte SHA-256 digest of canonical envelope bytes."""
    return hashlib.sha256(canonical).digest()


def signing_input(digest: bytes) -> bytes:
    """The domain-separated message that Ed25519 signs for an entry."""
    return SIGNATURE_DOMAIN + digest


def escape_text(raw: bytes | str) -> str:
    """Text that is safe for a model: bytes that are not UTF-8 become backslash escapes.

    Command lines and paths on POSIX are bytes; a non-UTF-8 byte must never crash an append.
    Lone surrogates (from os.fsdecode's surrogateescape) are escaped the same way.
    """
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace")
