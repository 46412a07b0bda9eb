"""Canonical bytes (RFC 8785 / JCS): the only place that turns objects into bytes to hash or sign.

DESIGN §4.1: digest = SHA-256 of the JCS bytes of the envelope; signature = Ed25519 over
``b"logbook.entry.v1\\n" + digest``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import orjson
import rfc8785

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
    """A value the fast scan will not vouch for: _check names the problem, if there is one."""


def _plain(value: Any) -> bool:
    """True when value holds only strings, safe integers, booleans and null under ASCII keys.

    For such values sorted-key orjson output is byte-identical to RFC 8785 (the two differ
    only in number formatting and in how non-ASCII keys sort); tests/format/test_canonical.py checks
    this against the rfc8785 package. Raises _Unsafe for anything _check must look at.
    """
    t = type(value)
    if t is str or t is bool or value is None:
        return True
    if t is int:
        if -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            return True
        raise _Unsafe
    if t is float:
        return False
    if t is dict:
        plain = True
        for k, v in value.items():
            if type(k) is not str:
                raise _Unsafe
            if not k.isascii():
                plain = False
            if not _plain(v):
                plain = False
        return plain
    if t is list:
        plain = True
        for v in value:
            if not _plain(v):
                plain = False
        return plain
    raise _Unsafe


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of ``value``; refuses values JCS cannot represent."""
    try:
        plain = _plain(value)
    except (_Unsafe, RecursionError):
        plain = False
    if plain:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # e.g. a lone surrogate: let the reference say why
            pass
    _check(value, "")  # names the field at fault, if there is one
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
