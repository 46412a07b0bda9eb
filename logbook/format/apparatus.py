"""A run's apparatus as analysis names it: dotted field names, and which of them name the run
itself (seeds, times, paths, the command line) rather than the system measured (DESIGN §4.4),
and what a completed plan run leaves unsaid about that system. Pure; no heavy imports."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import orjson

# Per-run identity is never a confound (DESIGN §4.4): seeds, times, session, host, process,
# command line, output paths.
IDENTITY_SUFFIXES = ("seed", "started", "finished", "session", "host", "hostname", "pid",
                     "output_path", "output_dir", "log_dir", "timestamp", "date", "run_id",
                     "eval_id", "task_id", "memory_bytes")
# `retries.used` is what befell this run (a figure of the run, like its times), not a setting
# of the system: runs of one apparatus differ in it, and it is never a confound.
IDENTITY_PREFIXES = ("captured.command", "captured.env", "captured.os.release", "retries.used",
                     "applied.log")  # the load log's file name (logbook.format.applied)

# The typed apparatus fields (docs/recording.md, "Typed apparatus fields"): object -> field ->
# (what a value must be, in words; the test). Every other apparatus field stays free-form.
# `variant` is where a run names its prompt variant when its plan declares `variants`.
VARIANT = "prompt_hash"


def _whole(least: int) -> tuple[str, Any]:
    return (f"a whole number of {least} or more",
            lambda v: type(v) is int and v >= least)


TYPED: dict[str, dict[str, tuple[str, Any]]] = {
    "execution": {"batch_size": _whole(1), "concurrency": _whole(1),
                  "batch_invariant": ("true or false", lambda v: type(v) is bool)},
    "retries": {"cap": _whole(0), "used": _whole(0)},
    "scoring": {"order": ("a non-empty text", lambda v: type(v) is str and v != "")},
}


def typed_error(apparatus: Any) -> str | None:
    """The sentence naming the first typed apparatus field (TYPED) whose value is of the wrong
    type (``execution.batch_size is "auto": a whole number of 1 or more``), None when all
    are well typed or absent. A null value is absent (the run does not say)."""
    if not isinstance(apparatus, dict):
        return None
    for group, fields in TYPED.items():
        node = apparatus.get(group)
        if node is None:
            continue
        if not isinstance(node, dict):
            return (f"{group} is {_shown(node)}: an object of "
                    f"{', '.join(fields)}")
        for name, (words, test) in fields.items():
            value = node.get(name)
            if value is not None and not test(value):
                return f"{group}.{name} is {_shown(value)}: {words}"
    return None


def _shown(value: Any) -> str:
    try:
        return orjson.dumps(value, default=repr).decode()
    except TypeError:  # an integer past 64 bits, a lone surrogate: JSON as Python writes it
        import json

        return json.dumps(value, default=repr)


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Apparatus as dotted names -> scalar values (lists as canonical JSON text)."""
    out: dict[str, Any] = {}
    _put(out, prefix, obj)
    return out


def _put(out: dict[str, Any], name: str, value: Any) -> None:
    """`flatten` written into one dict (no merging of dicts); a dict's scalar fields are put
    in its own loop (the check flattens every run's apparatus: a call a field cost more)."""
    if not isinstance(value, dict):
        out[name] = _json_text(value) if isinstance(value, list) else value
        return
    for k, v in value.items():
        key = f"{name}.{k}" if name else str(k)
        if isinstance(v, dict):
            _put(out, key, v)
        else:
            out[key] = _json_text(v) if isinstance(v, list) else v


def _json_text(value: list[Any]) -> str:
    """A list field's value: its canonical JSON text."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


@lru_cache(maxsize=65536)  # the same few field names, over and over (the audit asks per run)
def is_identity(name: str) -> bool:
    """A field that names this run rather than the system measured (seeds, times, paths,
    the command line): never a confound, never part of the apparatus key."""
    low = name.lower()
    last = low.rsplit(".", 1)[-1]
    if any(last.endswith(s) for s in IDENTITY_SUFFIXES) or "seed" in last:
        return True
    return any(low == p or low.startswith(p + ".") for p in IDENTITY_PREFIXES)


def system_fields(flat: dict[str, Any]) -> list[tuple[str, Any]]:
    """The flat apparatus's fields that describe the system measured, sorted by name: not the
    run's identity (`is_identity`), nor an ``applied.*`` field a declared field already
    requests (logbook.format.applied.restated: compared once, as declared; A38 holds the two
    together)."""
    return [(k, flat[k]) for k in _system_names(tuple(flat))]


@lru_cache(maxsize=4096)
def _system_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """The names `system_fields` keeps of a flat apparatus's field names, sorted: which
    depends on the names alone, and runs of one harness share theirs, so each list of them is
    judged once (the check asks for every run)."""
    from logbook.format.applied import restated

    again = restated(dict.fromkeys(names)) if any(k.startswith("applied.") for k in names) \
        else set()
    return tuple(sorted(k for k in names if not is_identity(k) and k not in again))


def pins(plan: dict[str, Any], arm: str | None) -> dict[str, Any]:
    """A plan's pins as flat fields: its `pinned`, then its arm's `apparatus` (what a run of
    ``arm`` requests where it says nothing itself: logbook.format.applied)."""
    out = flatten(plan.get("pinned") or {})
    for a in plan.get("arms") or []:
        if isinstance(a, dict) and a.get("name") == arm:
            out.update(flatten(a.get("apparatus") or {}))
    return out


def system_gaps(body: dict[str, Any]) -> list[str]:
    """What a completed plan run does not say about its system: `model`, `decoding.*`."""
    if body.get("status") != "completed" or not body.get("plan"):
        return []
    app = body.get("apparatus") or {}
    gaps = [] if app.get("model") else ["model"]
    decoding = app.get("decoding")
    if not (isinstance(decoding, dict) and any(v is not None for v in decoding.values())):
        gaps.append("decoding.*")
    return gaps


def temperature_of(fields: Iterable[tuple[str, Any]]) -> float | None:
    """The sampling temperature an apparatus decodes at: its `decoding.temperature`, else the
    first of its fields (in the order given) named temperature; None when it records none."""
    fields = list(fields)
    value = next((v for k, v in fields if k == "decoding.temperature"), None)
    if value is None:
        value = next((v for k, v in fields if k.rsplit(".", 1)[-1].lower() == "temperature"),
                     None)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None

