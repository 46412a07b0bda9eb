"""The changes of an amendment from `FIELD=VALUE` assignments (`logbook amend --set`).

A dotted field (``suite.n_items``) changes one key inside an object field of the plan as it
stands (its earlier amendments applied): the amendment carries that whole object, changed.
"""

from __future__ import annotations

from typing import Any

import orjson

from logbook.errors import InputError


def merge_changes(current: dict[str, Any], assignments: list[tuple[str, Any]]) -> dict[str, Any]:
    """The amendment's ``changes`` for ``assignments`` (field, value) applied in order to the
    plan body ``current``; InputError naming the field when a dotted part is not an object."""
    changes: dict[str, Any] = {}
    for field, value in assignments:
        top, *rest = field.split(".")
        if not rest:
            changes[top] = value
            continue
        base = changes.get(top, current.get(top))
        if not isinstance(base, dict):
            raise InputError(f"--set {field}: plan field {top!r} is not an object")
        node = base = orjson.loads(orjson.dumps(base))  # a copy: the plan stays as it is
        for i, part in enumerate(rest[:-1]):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise InputError(f"--set {field}: plan field "
                                 f"{'.'.join([top, *rest[:i + 1]])!r} is not an object")
        node[rest[-1]] = value
        changes[top] = base
    return changes
