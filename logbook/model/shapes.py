"""The shape of a well-formed body, checked directly, without pydantic (issue 22: a lean
append). ``well_formed`` answers True only when the kind's model (logbook.model.run,
logbook.model.entries) certainly accepts the body; anything else, a doubt included, is
False, and the model then decides and names the field at fault. So the models stay the one
definition of a body and of its error messages; this is a shortcut for the bodies agents
append at every step (runs and notes), and tests/model/test_shapes.py holds it to the models
on random and mutated bodies (never True where the model refuses).

Conservative on purpose: exact JSON types (no subclasses, no bool for a number, no text
with a lone surrogate), integers in a float field only within ±2^53.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from logbook.format.apparatus import typed_error
from logbook.format.reducers import known

_DIGEST = re.compile(r"[0-9a-f]{64}").fullmatch
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}").fullmatch
_SAFE = 2**53
MAX_SCORE = 1e100  # as logbook.model.run.MAX_SCORE (a test holds the two equal)
_STATUSES = ("completed", "failed", "aborted")


def _str(v: Any) -> bool:
    """A str the models take as it is: not a subclass, no lone surrogate (some refuse one)."""
    if type(v) is not str:
        return False
    if v.isascii():
        return True
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(v: Any) -> bool:
    return v != "" and _str(v)


def _opt_str(d: dict[str, Any], key: str) -> bool:
    v = d.get(key)
    return v is None or _str(v)


def _score(v: Any) -> bool:
    t = type(v)
    if t is float:
        return math.isfinite(v) and -MAX_SCORE <= v <= MAX_SCORE
    return t is int and -_SAFE <= v <= _SAFE


def _only(d: dict[str, Any], fields: frozenset[str]) -> bool:
    return all(type(k) is str and k in fields for k in d)  # the names are ASCII


def _str_column(col: Any, n: int, nullable: bool) -> bool:
    if type(col) is not list or len(col) != n:
        return False
    if nullable:
        return all(v is None or _str(v) for v in col)
    return all(_str(v) for v in col)


_OUTCOMES = frozenset(("metric", "id", "score", "cluster", "sample", "error", "component",
                       "extra", "reducer"))


def _outcomes(o: Any) -> bool:
    if type(o) is not dict or not _only(o, _OUTCOMES) or not _text(o.get("metric")):
        return False
    reducer = o.get("reducer")
    if reducer is not None and not (_str(reducer) and known(reducer)):
        return False
    ids, score = o.get("id"), o.get("score")
    if type(ids) is not list or not _str_column(ids, len(ids), False):
        return False
    n = len(ids)
    if type(score) is not list or len(score) != n:
        return False
    for name in ("cluster", "component"):
        if o.get(name) is not None and not _str_column(o[name], n, True):
            return False
    error = o.get("error")
    if error is not None and not _str_column(error, n, True):
        return False
    for i, s in enumerate(score):
        if s is None:
            if error is None or not error[i]:
                return False
        elif not _score(s):
            return False
    extra = o.get("extra")
    if extra is not None:
        if type(extra) is not dict:
            return False
        for k, col in extra.items():
            if not _str(k) or type(col) is not list or len(col) != n:
                return False
            if not all(v is None or _score(v) for v in col):
                return False
    sample = o.get("sample")
    if sample is None:
        return len(set(ids)) == n
    if type(sample) is not list or len(sample) != n:
        return False
    if not all(type(v) is int and -_SAFE <= v <= _SAFE for v in sample):
        return False
    return len(set(zip(ids, sample, strict=True))) == n


_LOG = frozenset(("name", "sha256", "size", "excerpt"))
_INTENDED = frozenset(("plan", "arm", "reason"))
_SOURCE = frozenset(("harness", "file", "sha256", "part", "ids"))


def _log(x: Any) -> bool:
    return (type(x) is dict and _only(x, _LOG) and _text(x.get("name"))
            and _str(x.get("sha256")) and _SHA256(x["sha256"]) is not None
            and type(x.get("size")) is int and 0 <= x["size"] <= _SAFE
            and _opt_str(x, "excerpt"))


def _intended(x: Any) -> bool:
    return (type(x) is dict and _only(x, _INTENDED) and _str(x.get("plan"))
            and _DIGEST(x["plan"]) is not None and _text(x.get("arm"))
            and _text(x.get("reason")))


def _source(x: Any) -> bool:
    if not (type(x) is dict and _only(x, _SOURCE) and _text(x.get("harness"))
            and _text(x.get("file")) and _str(x.get("sha256"))
            and _SHA256(x["sha256"]) is not None and _opt_str(x, "part")):
        return False
    ids = x.get("ids", {})
    return type(ids) is dict and all(_text(k) and _str(v) for k, v in ids.items())


_USAGE = frozenset(("tokens_in", "tokens_out", "wall_seconds", "cost"))
_MONEY = frozenset(("amount", "currency"))
_CURRENCY = re.compile(r"[A-Z]{3}").fullmatch


def _count(v: Any) -> bool:
    return type(v) is int and 0 <= v <= _SAFE


def _amount(v: Any) -> bool:
    if type(v) is float:
        return math.isfinite(v) and v >= 0
    return _count(v)


def _usage(x: Any) -> bool:
    """A usage record logbook.model.run.Usage certainly accepts."""
    if type(x) is not dict or not _only(x, _USAGE) or all(v is None for v in x.values()):
        return False
    for key in ("tokens_in", "tokens_out"):
        if x.get(key) is not None and not _count(x[key]):
            return False
    if x.get("wall_seconds") is not None and not _amount(x["wall_seconds"]):
        return False
    cost = x.get("cost")
    return cost is None or (type(cost) is dict and _only(cost, _MONEY)
                            and _amount(cost.get("amount")) and _str(cost.get("currency"))
                            and _CURRENCY(cost["currency"]) is not None)


_RUN = frozenset(("plan", "arm", "status", "reason", "apparatus", "outcomes", "session",
                  "started", "finished", "logs", "note", "task", "group", "reported",
                  "source", "intended", "beyond_plan", "reproduces", "usage"))
_RUN_STRINGS = ("arm", "reason", "session", "started", "finished", "note", "task", "group")


def _str_keys(x: Any) -> bool:
    return type(x) is dict and all(_str(k) for k in x)


def run(b: dict[str, Any]) -> bool:
    """A body logbook.model.run.Run certainly accepts."""
    if not _only(b, _RUN) or "plan" not in b or "status" not in b or "apparatus" not in b:
        return False
    plan, status = b["plan"], b["status"]
    if plan is not None and not (_str(plan) and _DIGEST(plan) is not None):
        return False
    if not _str(status) or status not in _STATUSES:
        return False
    if not all(_opt_str(b, k) for k in _RUN_STRINGS):
        return False
    if not _str_keys(b["apparatus"]) or typed_error(b["apparatus"]) is not None:
        return False
    reported = b.get("reported")
    if reported is not None and not _str_keys(reported):
        return False
    logs = b.get("logs", [])
    if type(logs) is not list or not all(_log(x) for x in logs):
        return False
    if b.get("source") is not None and not _source(b["source"]):
        return False
    if b.get("intended") is not None and (plan is not None or not _intended(b["intended"])):
        return False
    if b.get("beyond_plan") is not None and not _text(b["beyond_plan"]):
        return False
    reproduces = b.get("reproduces")
    if reproduces is not None and not (_str(reproduces) and _DIGEST(reproduces) is not None):
        return False
    if b.get("usage") is not None and not _usage(b["usage"]):
        return False
    outcomes = b.get("outcomes")
    if outcomes is None:
        if status == "completed":
            return False
    elif not _outcomes(outcomes):
        return False
    if plan is not None and not b.get("arm"):
        return False
    return status == "completed" or bool(b.get("reason"))


_NOTE = frozenset(("text", "refs"))


def note(b: dict[str, Any]) -> bool:
    """A body logbook.model.entries.Note certainly accepts."""
    refs = b.get("refs", [])
    return (_only(b, _NOTE) and _text(b.get("text")) and type(refs) is list
            and all(_str(r) and _DIGEST(r) is not None for r in refs))


CHECKS: dict[str, Callable[[dict[str, Any]], bool]] = {"run": run, "note": note}


def well_formed(kind: str, body: Any) -> bool:
    """True only when ``kind``'s model certainly accepts ``body`` (False: let the model say)."""
    check = CHECKS.get(kind)
    return check is not None and type(body) is dict and check(body)
