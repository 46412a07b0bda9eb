"""Run selectors for compare and band: `PLAN:ARM`, `session:ID`, `FIELD=VALUE`, combined with
commas (every term must hold)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from logbook.analysis.view import LedgerView, RunView
from logbook.errors import InputError


def _value_matches(have: Any, want: str) -> bool:
    if have is None:
        return False
    if isinstance(have, str):
        return have == want
    try:
        return bool(have == orjson.loads(want))
    except orjson.JSONDecodeError:
        return str(have) == want


def _session_is(sid: str) -> Callable[[RunView], bool]:
    return lambda r: r.session == sid


def _field_is(name: str, value: str) -> Callable[[RunView], bool]:
    return lambda r: _value_matches(r.apparatus.get(name), value)


def _arm_is(plan: str, arm: str) -> Callable[[RunView], bool]:
    return lambda r: r.plan == plan and r.arm == arm


def parse(view: LedgerView, selector: str) -> Callable[[RunView], bool]:
    """A predicate over runs; InputError naming the term that cannot be read."""
    terms: list[Callable[[RunView], bool]] = []
    for raw in selector.split(","):
        term = raw.strip()
        if not term:
            raise InputError(f"selector {selector!r} has an empty term")
        if term.startswith("session:"):
            sid = term.split(":", 1)[1].strip()
            if not sid:
                raise InputError(f"selector term {term!r} names no session (session:ID)")
            terms.append(_session_is(sid))
        elif "=" in term:
            field, value = (part.strip() for part in term.split("=", 1))
            if not field or not value:
                raise InputError(f"selector term {term!r} needs a field and a value "
                                 "(FIELD=VALUE, e.g. engine_build=b1234)")
            terms.append(_field_is(field, value))
        elif ":" in term:
            plan_ref, arm = term.rsplit(":", 1)
            plan = view.plan(plan_ref)
            if arm not in [a["name"] for a in plan.arms()]:
                raise InputError(f"selector {term!r}: {arm!r} is not an arm of plan "
                                 f"{plan.slug}")
            terms.append(_arm_is(plan.digest, arm))
        else:
            raise InputError(f"selector term {term!r} is not PLAN:ARM, session:ID or "
                             "FIELD=VALUE")
    return lambda r: all(t(r) for t in terms)


def select(view: LedgerView, selector: str) -> list[RunView]:
    """Every run the selector matches; InputError when it matches none (a typo, most often)."""
    pred = parse(view, selector)
    runs = [r for r in view.runs if pred(r)]
    if not runs:
        raise InputError(f"selector {selector!r} matches no run of the ledger")
    return runs
