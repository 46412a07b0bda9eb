"""Derived index rows computed from an entry's envelope: pure, shared by append, reindex, verify.

Everything here is a function of the signed bytes alone, so `verify` can recompute it and
compare it with what the store holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True)
class IndexRow:
    seq: int
    digest: str
    kind: str
    ts: str
    signer: str
    plan: str | None
    arm: str | None
    slug: str | None
    status: str | None
    session: str | None
    target: str | None

    def as_tuple(self) -> tuple[Any, ...]:
        return (self.seq, self.digest, self.kind, self.ts, self.signer, self.plan, self.arm,
                self.slug, self.status, self.session, self.target)


@dataclass(frozen=True)
class OutcomeRow:
    """One run's per-item outcomes: summary columns plus the columns themselves (JSON)."""

    seq: int
    metric: str
    n: int
    n_missing: int
    total: float
    columns: bytes

    def as_tuple(self) -> tuple[Any, ...]:
        return (self.seq, self.metric, self.n, self.n_missing, self.total, self.columns)


INDEX_COLUMNS = ("seq", "digest", "kind", "ts", "signer", "plan", "arm", "slug", "status",
                 "session", "target")
OUTCOME_COLUMNS = ("seq", "metric", "n", "n_missing", "total", "columns")


def _body(env: dict[str, Any]) -> dict[str, Any]:
    body = env.get("body")
    return body if isinstance(body, dict) else {}


def _str(value: Any) -> str | None:
    """Derived columns hold text; anything else in a (tampered) entry derives as NULL."""
    return value if isinstance(value, str) else None


def index_row(seq: int, digest: str, env: dict[str, Any]) -> IndexRow:
    return IndexRow(*index_tuple(seq, digest, env))


def index_tuple(seq: int, digest: str, env: dict[str, Any]) -> tuple[Any, ...]:
    """The entry_index row as a tuple, in INDEX_COLUMNS order (verify compares these)."""
    body = env.get("body")
    if not isinstance(body, dict):
        body = {}
    kind = env.get("kind")
    if not isinstance(kind, str):
        kind = ""
    plan = arm = slug = status = session = target = None
    if kind == "run":
        plan, arm = body.get("plan"), body.get("arm")
        status, session = body.get("status"), body.get("session")
    elif kind == "plan":
        slug = body.get("slug")
    elif kind == "amendment":
        plan = body.get("plan")
    elif kind == "claim":
        plan, arm = body.get("plan"), body.get("arm")
        if isinstance(arm, list):
            arm = ",".join(str(a) for a in arm)
    elif kind == "retraction":
        target = body.get("target")
    return (seq, digest, kind, _str(env.get("ts")) or "", _str(env.get("signer")) or "",
            _str(plan), _str(arm), _str(slug), _str(status), _str(session), _str(target))


def outcome_row(seq: int, env: dict[str, Any]) -> OutcomeRow | None:
    if env.get("kind") != "run":
        return None
    oc = _body(env).get("outcomes")
    if not isinstance(oc, dict):
        return None
    scores = oc.get("score") if isinstance(oc.get("score"), list) else []
    n_missing = scores.count(None)
    try:
        total = float(sum(scores) if not n_missing else sum(s for s in scores if s is not None))
    except TypeError:  # a tampered entry: count only the numbers
        total = float(sum(s for s in scores if isinstance(s, int | float)
                          and not isinstance(s, bool)))
    return OutcomeRow(
        seq=seq,
        metric=str(oc.get("metric", "")),
        n=len(scores),
        n_missing=n_missing,
        total=total,
        columns=orjson.dumps(oc),
    )


def key_changes(seq: int, env: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(action, name, public b64) changes to the signing keys made by this entry."""
    body = _body(env)
    if env.get("kind") == "genesis":
        keys = body.get("keys") if isinstance(body.get("keys"), list) else []
        return [("add", _str(k.get("name")) or "", _str(k.get("public")) or "", "genesis")
                for k in keys if isinstance(k, dict)]
    if env.get("kind") == "key":
        return [(_str(body.get("action")) or "", _str(body.get("name")) or "",
                 _str(body.get("public")) or "", _str(body.get("reason")) or "")]
    return []


def references(env: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, digest) pairs this entry refers to; each must name an earlier entry."""
    body = _body(env)
    kind = env.get("kind")
    refs: list[tuple[str, str]] = []
    if kind in ("run", "amendment", "claim") and isinstance(body.get("plan"), str):
        refs.append(("body.plan", body["plan"]))
    if kind == "retraction" and isinstance(body.get("target"), str):
        refs.append(("body.target", body["target"]))
    for field, kinds in (("refs", ("note",)), ("runs", ("claim", "band"))):
        if kind in kinds:
            values = body.get(field)
            if values is not None and not isinstance(values, list):
                refs.append((f"body.{field}", values))  # not a list: reported as a reference
                continue
            refs += [(f"body.{field}[{i}]", r) for i, r in enumerate(values or [])]
    return refs
