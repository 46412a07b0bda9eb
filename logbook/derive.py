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
    body = _body(env)
    kind = _str(env.get("kind")) or ""
    plan = _str(body.get("plan")) if kind in ("run", "amendment", "claim") else None
    arm = body.get("arm") if kind in ("run", "claim") else None
    if isinstance(arm, list):
        arm = ",".join(str(a) for a in arm)
    return IndexRow(
        seq=seq,
        digest=digest,
        kind=kind,
        ts=_str(env.get("ts")) or "",
        signer=_str(env.get("signer")) or "",
        plan=plan,
        arm=_str(arm),
        slug=_str(body.get("slug")) if kind == "plan" else None,
        status=_str(body.get("status")) if kind == "run" else None,
        session=_str(body.get("session")) if kind == "run" else None,
        target=_str(body.get("target")) if kind == "retraction" else None,
    )


def outcome_row(seq: int, env: dict[str, Any]) -> OutcomeRow | None:
    if env.get("kind") != "run":
        return None
    oc = _body(env).get("outcomes")
    if not isinstance(oc, dict):
        return None
    scores = oc.get("score") if isinstance(oc.get("score"), list) else []
    present = [s for s in scores if isinstance(s, int | float) and not isinstance(s, bool)]
    return OutcomeRow(
        seq=seq,
        metric=str(oc.get("metric", "")),
        n=len(scores),
        n_missing=sum(1 for s in scores if s is None),
        total=float(sum(present)),
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
