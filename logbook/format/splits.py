"""A suite's splits (docs/format.md §5, "Suites"): the digest that names a split's set of item
ids, and how many looks a held-out split allows. Pure; read by the model, the door and the
analysis alike."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import orjson

# a split of this name is held out (one look) unless its entry says otherwise
HELD_OUT_BY_DEFAULT = "test"


def id_set_digest(ids: Iterable[str]) -> str:
    """``sha256:`` and the SHA-256 of the split's distinct item ids, sorted, as a JSON array:
    the same set of ids gives the same digest whatever their order."""
    return "sha256:" + hashlib.sha256(orjson.dumps(sorted(set(ids)))).hexdigest()


def allowed_looks(name: str, split: dict[str, Any]) -> int | None:
    """How many looks the split ``name`` allows: its ``holdout.looks``, 1 for a split named
    ``test`` that says nothing, None (any number) for any other split."""
    holdout = split.get("holdout")
    if isinstance(holdout, dict) and isinstance(holdout.get("looks"), int):
        return int(holdout["looks"])
    return 1 if name == HELD_OUT_BY_DEFAULT else None
