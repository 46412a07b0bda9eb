"""The entry kinds: ONE registry (DESIGN §3, §4.4). Each row says, for one kind:

* ``model``: the pydantic model of its body, as ``module:Class``, loaded only when a body is
  validated (reading and verifying never import pydantic);
* ``refs``: the body fields that refer to earlier entries (a dotted name is a field of an
  object field: ``intended.plan``), and the kind each must name. At
  append they are resolved (prefix, @SEQ or slug to a full digest) and checked; `verify` finds
  every reference that names no earlier entry, and a single reference (not a list) that names
  another kind than its own;
* ``indexed``: the body fields copied into the entry index (logbook.storage.index), each into
  the column of its name, or ``column=dotted.field`` (a run's ``target`` is the plan that
  refused it, ``intended.plan``);
* ``admission``: the check the entry must pass against the ledger as it stands, inside the
  append transaction, as ``module:function`` (logbook.ledger.admission), or None.

Adding a kind is one model module, one row here, its documentation (docs/format.md) and, when
it needs one, its admission rule.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Ref:
    """A body field that refers to earlier entries by digest."""

    field: str
    names: str | None = None  # the kind the entry it names must be (None: any)
    many: bool = False  # a list of references

    @property
    def label(self) -> str:
        return f"body.{self.field}"

    @property
    def top(self) -> str:
        """The body's own field the reference is in (``intended`` of ``intended.plan``)."""
        return self.field.partition(".")[0]

    def get(self, body: dict[str, Any]) -> Any:
        """The reference's value in ``body`` (None when a field on its way is not an object)."""
        value: Any = body
        for name in self.field.split("."):
            value = value.get(name) if isinstance(value, dict) else None
        return value

    def holds(self, body: dict[str, Any]) -> bool:
        """Whether ``body`` has the field (null included)."""
        *outer, last = self.field.split(".")
        for name in outer:
            body = body.get(name)  # type: ignore[assignment]
            if not isinstance(body, dict):
                return False
        return last in body

    def put(self, body: dict[str, Any], value: Any) -> dict[str, Any]:
        """``body`` with the reference set to ``value`` (objects on the way copied)."""
        head, _, rest = self.field.partition(".")
        out = dict(body)
        out[head] = Ref(rest).put(out[head], value) if rest else value
        return out


@dataclass(frozen=True)
class Kind:
    name: str
    model: str
    refs: tuple[Ref, ...] = ()
    indexed: tuple[str, ...] = ()
    admission: str | None = None


_ADMIT = "logbook.ledger.admission:"
_PLAN = Ref("plan", "plan")

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("genesis", "logbook.model.entries:Genesis", admission=_ADMIT + "admit_genesis"),
    Kind("key", "logbook.model.entries:Key", admission=_ADMIT + "admit_key"),
    Kind("plan", "logbook.model.plan:Plan", indexed=("slug",),
         admission="logbook.ledger.suite_door:admit_plan"),
    Kind("amendment", "logbook.model.plan:Amendment", refs=(_PLAN,), indexed=("plan",),
         admission=_ADMIT + "admit_amendment"),
    Kind("run", "logbook.model.run:Run", refs=(_PLAN, Ref("intended.plan", "plan"),
                                               Ref("reproduces", "run")),
         indexed=("plan", "arm", "status", "session", "target=intended.plan"),
         admission=_ADMIT + "admit_run"),
    Kind("retraction", "logbook.model.entries:Retraction", refs=(Ref("target"),),
         indexed=("target",), admission=_ADMIT + "admit_retraction"),
    Kind("claim", "logbook.model.entries:Claim", refs=(_PLAN, Ref("runs", "run", many=True)),
         indexed=("plan", "arm"), admission=_ADMIT + "admit_claim"),
    Kind("band", "logbook.model.entries:Band", refs=(Ref("runs", "run", many=True),),
         admission=_ADMIT + "admit_band"),
    Kind("admission", "logbook.model.admission:Admission",
         refs=(Ref("run", "run"), _PLAN), indexed=("plan", "arm", "target=run"),
         admission=_ADMIT + "admit_admission"),
    Kind("note", "logbook.model.entries:Note", refs=(Ref("refs", many=True),)),
    Kind("timestamp", "logbook.model.entries:Timestamp", admission=_ADMIT + "admit_timestamp"),
    Kind("check", "logbook.model.checks:Check", refs=(Ref("run", "run"),),
         indexed=("target=run",), admission=_ADMIT + "admit_check"),
    Kind("suite", "logbook.model.suites:SuiteRecord",
         admission="logbook.ledger.suite_door:admit_suite"),
)}

NAMES: tuple[str, ...] = tuple(KINDS)


@cache
def load(path: str) -> Any:
    """The object a ``module:name`` path names (a body model, an admission rule)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
