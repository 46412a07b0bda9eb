"""A run's usage record (docs/format.md, "Usage"; the model is logbook.model.run.Usage):
reading it from what a harness or a command line says, and giving it to the run it belongs
to. Pure: no I/O.

A harness output or a command that yields several runs used its tokens, time and money once,
for all of them together: that usage belongs to no one run, and splitting it would invent
figures. So it is given only to an output's one run (`given_to_one`); an output of several
runs records none from the harness, and a --cost or --tokens option given for it is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from logbook.errors import InputError

_COST = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s+([A-Z]{3})\s*")


def parse_cost(text: str, option: str = "--cost") -> dict[str, Any]:
    """``"0.42 USD"`` as ``{"amount": 0.42, "currency": "USD"}``: an amount of at least 0 and
    an ISO 4217 currency code (three upper-case letters); an InputError naming ``option``."""
    m = _COST.fullmatch(text)
    if m is None:
        raise InputError(f"{option} {text!r}: give AMOUNT CURRENCY, an amount of at least 0 "
                         "and an ISO 4217 code, e.g. \"0.42 USD\"")
    amount = float(m[1])
    if not math.isfinite(amount):
        raise InputError(f"{option} {text!r}: the amount is not a finite number")
    return {"amount": amount, "currency": m[2]}


def from_options(cost: str | None, tokens_in: int | None,
                 tokens_out: int | None) -> dict[str, Any] | None:
    """The usage the options `--cost`, `--tokens-in` and `--tokens-out` give (None: none)."""
    usage: dict[str, Any] = {}
    for option, value, key in (("--tokens-in", tokens_in, "tokens_in"),
                               ("--tokens-out", tokens_out, "tokens_out")):
        if value is not None:
            if value < 0:
                raise InputError(f"{option} {value}: a count of tokens is at least 0")
            usage[key] = value
    if cost is not None:
        usage["cost"] = parse_cost(cost)
    return usage or None


def seconds_between(start: Any, end: Any) -> float | None:
    """The seconds from one ISO 8601 time (with an offset) to another; None when either is
    not such a time or the end comes first."""
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    try:
        a, b = datetime.fromisoformat(start), datetime.fromisoformat(end)
        seconds = (b - a).total_seconds()
    except (ValueError, TypeError):  # not a time; or one naive, the other aware
        return None
    return seconds if seconds >= 0 else None


def token_counts(by_model: Any) -> dict[str, int]:
    """Tokens in and out summed over the models of a usage table ``{model: {input_tokens,
    output_tokens}}`` (Inspect's ``stats.model_usage``); a count that is not a whole number
    of at least 0 is left out, and a total only given when every model gives it."""
    if not isinstance(by_model, Mapping) or not by_model:
        return {}
    out = {}
    for key, name in (("tokens_in", "input_tokens"), ("tokens_out", "output_tokens")):
        said = [u.get(name) if isinstance(u, Mapping) else None for u in by_model.values()]
        counts = [c for c in said if type(c) is int and c >= 0]
        if len(counts) == len(said):
            out[key] = sum(counts)
    return out


def given_to_one(runs: list[dict[str, Any]], usage: Mapping[str, Any] | None) -> None:
    """Give ``usage`` (what one harness output used) to its run, when it holds exactly one;
    its fields replace what the run says."""
    if usage and len(runs) == 1:
        runs[0]["usage"] = {**(runs[0].get("usage") or {}), **usage}


def merged(body: Mapping[str, Any], usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """``body`` with ``usage``'s fields over its own usage (nothing when ``usage`` is None)."""
    if not usage:
        return dict(body)
    return {**body, "usage": {**(body.get("usage") or {}), **usage}}
