"""Helpers shared by the ingest adapters: reading files, cleaning values, building outcomes.

Every adapter returns run bodies without ``plan``/``arm`` (DESIGN §4.4). Anything wrong with a
user's file becomes an :class:`~logbook.errors.InputError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import reprlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from logbook.errors import InputError
from logbook.limits import MAX_DEPTH

MAX_SAFE_INT = 2**53 - 1
# MAX_DEPTH: deeper values are refused where a harness's file is read: hashing (orjson stops
# at 255 levels), redacting, pruning and canonicalising them all recurse. Real headers nest
# < 20 deep.


def fail(path: Path | str, message: str) -> InputError:
    """An InputError whose one sentence starts with the file at fault."""
    return InputError(f"{path}: {message}")


def read_bytes(path: Path) -> bytes:
    """The file's bytes, read with logbook's bound (LOGBOOK_MAX_INPUT_BYTES, and the read
    timeout for a FIFO or device), or an InputError when it is missing, unreadable or larger."""
    from logbook.files import read_bytes as bounded

    if not path.exists() and not path.is_symlink():
        raise fail(path, "file not found")
    if path.is_dir():
        raise fail(path, "is a directory, expected a file")
    try:
        return bounded(path, "harness file")
    except InputError as exc:
        raise fail(path, str(exc).replace(f"harness file {path} ", "", 1)) from None


def _finite_or_none(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _int_as_orjson(text: str) -> int | float | None:
    """An integer as orjson reads it: beyond the 64-bit range it is a float (None if infinite),
    so that every value parsed by either parser can be hashed by :func:`digest`."""
    value = int(text)
    return value if -(2**63) <= value < 2**64 else _finite_or_none(text)


def loads(data: bytes | str, where: str, *, strict: bool = False, repeats: bool = True) -> Any:
    """Parse JSON with orjson; unless strict, NaN/Infinity (Python's json writes them) -> None.

    Whatever the parser, a string holding a lone surrogate (``"\\ud800"``, which no UTF-8 text
    can carry) is refused with an InputError naming the field. Values nesting more than
    PARSER_DEPTH deep are refused before any parser sees them (and more than MAX_DEPTH by
    ``check_depth``, naming the field, once parsed). ``repeats=False``: the caller checks for
    a key given twice itself (``no_repeated_keys``, over many lines at once).
    """
    from logbook.limits import PARSER_DEPTH, check_nesting, loads_bounded

    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    check_nesting(raw, where, limit=PARSER_DEPTH)
    try:
        value = loads_bounded(data)
    except orjson.JSONDecodeError as exc:
        first = exc
    else:
        if repeats:
            _no_repeated_key(raw, value, where)
        return value
    if strict:
        raise InputError(f"{where}: not valid JSON ({first})") from None
    try:  # only the non-standard constants make orjson refuse a file the stdlib accepts
        value = json.loads(data, parse_constant=lambda _: None, parse_float=_finite_or_none,
                           parse_int=_int_as_orjson)
    except (ValueError, RecursionError):
        raise InputError(f"{where}: not valid JSON ({first})") from None
    check_text(value, where)  # the stdlib, unlike orjson, lets lone surrogates through
    _no_repeated_key(raw, value, where)
    return value


def no_repeated_keys(lines: list[tuple[bytes, Any, str]]) -> None:
    """``_no_repeated_key`` for many (raw, value, where) lines at once: when the lines are the
    bytes Python's json.dumps writes for their values (most harnesses' JSON Lines), one
    encoding of them all shows that no object gives a key twice
    (logbook.format.strict.written_by_python); otherwise line by line."""
    from logbook.format.strict import written_by_python

    same = written_by_python([v for _, v, _ in lines], [raw for raw, _, _ in lines])
    if not same:
        for raw, value, where in lines:
            _no_repeated_key(raw, value, where)


def _no_repeated_key(raw: bytes, value: Any, where: str) -> None:
    """InputError when one object of ``raw`` gives a key twice: the harness's file would mean
    one thing to logbook (the last value) and another to a reader keeping the first."""
    from logbook.format.strict import repeated_key

    again = repeated_key(raw, value, sort=False)
    if again is not None:
        name = again.encode("utf-8", "backslashreplace").decode("utf-8")
        raise InputError(f"{where}: field {name!r} is given twice in one object, which "
                         "readers take differently (the first or the last): not recorded")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _bad_text(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def field_name(parts: Iterable[str | int]) -> str:
    """``("results", "scores", 0, "metrics")`` as ``results.scores[0].metrics``, printable."""
    name = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def check_text(value: Any, where: str) -> None:
    """InputError naming the field when a string or key in ``value`` (parsed JSON) holds a lone
    surrogate: it is not Unicode text, and no entry could be written with it."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if _bad_text(item):
                what = f"field {field_name(at)}" if at else "the value"
                raise InputError(f"{where}: {what} holds a lone surrogate, which is not valid "
                                 "Unicode text")
        elif isinstance(item, dict):
            for key in item:
                if _bad_text(key):
                    raise InputError(f"{where}: field {field_name((*at, key))} has a name "
                                     "holding a lone surrogate, which is not valid Unicode text")
            stack.extend((sub, (*at, key)) for key, sub in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((sub, (*at, i)) for i, sub in reversed(list(enumerate(item))))


def load_json_file(path: Path) -> Any:
    """Read and parse one JSON file."""
    return loads(read_bytes(path), str(path))


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty list."""
    return value if isinstance(value, list) else []


def whole(value: Any, low: int, high: int) -> int | None:
    """``value`` when it is a JSON integer (not a bool) from ``low`` to ``high``, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return None


_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 60
_SHOWN.maxlevel = 3


def shown(value: Any) -> str:
    """A short repr of a value read from a file, for an error message (however deep or long)."""
    return _SHOWN.repr(value)


def check_depth(value: Any, where: str) -> None:
    """InputError naming the field when parsed JSON nests more than MAX_DEPTH levels deep."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict | list) and len(at) >= MAX_DEPTH:
            raise InputError(f"{where}: field {field_name(at[:3])}... nests more than "
                             f"{MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            stack.extend((sub, (*at, key)) for key, sub in item.items())
        elif isinstance(item, list):
            stack.extend((sub, (*at, i)) for i, sub in enumerate(item))


def parse_kv_string(text: str) -> dict[str, str]:
    """``"pretrained=x,dtype=float16"`` (lm-eval's model_args form) as a dict."""
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, val = part.partition("=")
        if key.strip():
            out[key.strip()] = val.strip() if sep else ""
    return out


def prune(value: Any) -> Any:
    """Drop None, non-finite and empty-object values from objects (list entries become None);
    turn ints beyond 2^53 into strings, so that the result is canonical-JSON safe."""
    if isinstance(value, Mapping):
        out = {str(k): prune(v) for k, v in value.items() if _keep(v)}
        return {k: v for k, v in out.items() if v != {}}
    if isinstance(value, list | tuple):
        return [prune(v) if _keep(v) else None for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INT:
        return str(value)
    if isinstance(value, float) and not json_safe(value):
        return repr(value)
    return value


def _keep(value: Any) -> bool:
    if value is None:
        return False
    return not (isinstance(value, float) and not math.isfinite(value))


def number(value: Any) -> float | None:
    """A finite float from a JSON number or bool; None for anything else."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        try:
            result = float(value)
        except OverflowError:  # an integer beyond the float range
            return None
        return result if json_safe(result) else None
    return None


def float_of(value: Any) -> float | None:
    """:func:`number` of a JSON number, bool or numeric string (``"0.7"``); None otherwise."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    return number(value)


def int_of(value: Any) -> int | None:
    """:func:`float_of` when it is a whole number, as an int; None otherwise."""
    result = float_of(value)
    return int(result) if result is not None and result.is_integer() else None


def text_of(value: Any) -> str | None:
    """A version (a string or number) as text; None for anything else."""
    return str(value) if isinstance(value, str | int | float) else None


def json_safe(value: float) -> bool:
    """True for a float canonical JSON writes exactly: finite, and not in (2^53, 1e21),
    where JCS would print integer digits that read back as an unsafe integer."""
    return math.isfinite(value) and not MAX_SAFE_INT < abs(value) < 1e21


def item_id(value: Any) -> str | None:
    """An item id as a string (integers in decimal); None when it is not a usable id."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value:
        return value
    return None


def digest(value: Any) -> str:
    """``sha256:<hex>`` of the key-sorted JSON of ``value``."""
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_tag(hex_digest: Any) -> str | None:
    """A bare 64-hex SHA-256 as ``sha256:<hex>``; None when it is not one."""
    if isinstance(hex_digest, str):
        text = hex_digest.lower().removeprefix("sha256:")
        if re.fullmatch(r"[0-9a-f]{64}", text):
            return "sha256:" + text
    return None


def rfc3339(value: Any) -> str | None:
    """An RFC 3339 string from a Unix time or an ISO 8601 string with an offset; else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return datetime.fromtimestamp(value, UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed.isoformat() if parsed.tzinfo is not None else None
    return None


def build_outcomes(
    metric: str,
    rows: Iterable[tuple[str, float | None, str | None, int | None, str | None]],
    extra: Mapping[str, list[float | None]] | None = None,
    *,
    with_sample: bool = False,
) -> dict[str, Any]:
    """Column-wise outcomes from (id, score, error, sample, cluster) rows.

    ``error``, ``sample``, ``cluster`` and ``extra`` columns appear only when they carry
    information; a row without a score always gets an error string.
    """
    ids: list[str] = []
    scores: list[float | None] = []
    errors: list[str | None] = []
    samples: list[int | None] = []
    clusters: list[str | None] = []
    for rid, score, error, sample, cluster in rows:
        ids.append(rid)
        scores.append(score)
        errors.append(error if score is None else None)
        if score is None and not error:
            errors[-1] = "no score"
        samples.append(sample)
        clusters.append(cluster)
    out: dict[str, Any] = {"metric": metric, "id": ids, "score": scores}
    if any(e is not None for e in errors):
        out["error"] = errors
    if with_sample and any(s is not None for s in samples):
        out["sample"] = samples
    if clusters and all(c is not None for c in clusters):
        out["cluster"] = clusters
    if extra:
        out["extra"] = {name: list(col) for name, col in extra.items()}
    return out
