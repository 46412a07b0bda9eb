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


def index_row(seq: int, digest: str, env: dict[str, Any]) -> IndexRow:
    body = env.get("body") or {}
    kind = env.get("kind", "")
    plan = body.get("plan") if kind in ("run", "amendment", "claim") else None
    arm = body.get("arm") if kind in ("run", "claim") else None
    if isinstance(arm, list):
        arm = ",".join(str(a) for a in arm)
    return IndexRow(
        seq=seq,
        digest=digest,
        kind=kind,
        ts=env.get("ts", ""),
        signer=env.get("signer", ""),
        plan=plan,
        arm=arm,
        slug=body.get("slug") if kind == "plan" else None,
        status=body.get("status") if kind == "run" else None,
        session=body.get("session") if kind == "run" else None,
        target=body.get("target") if kind == "retraction" else None,
    )


def outcome_row(seq: int, env: dict[str, Any]) -> OutcomeRow | None:
    if env.get("kind") != "run":
        return None
    oc = (env.get("body") or {}).get("outcomes")
    if not isinstance(oc, dict):
        return None
    scores = oc.get("score") or []
    present = [s for s in scores if s is not None]
    return OutcomeRow(
        seq=seq,
        metric=str(oc.get("metric", "")),
        n=len(scores),
        n_missing=len(scores) - len(present),
        total=float(sum(present)),
        columns=orjson.dumps(oc),
    )


def key_changes(seq: int, env: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(action, name, public b64) changes to the signing keys made by this entry."""
    body = env.get("body") or {}
    if env.get("kind") == "genesis":
        return [("add", k.get("name", ""), k.get("public", ""), "genesis")
                for k in body.get("keys") or []]
    if env.get("kind") == "key":
        return [(body.get("action", ""), body.get("name", ""), body.get("public", ""),
                 body.get("reason", ""))]
    return []


def references(env: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, digest) pairs this entry refers to; each must name an earlier entry."""
    body = env.get("body") or {}
    kind = env.get("kind")
    refs: list[tuple[str, str]] = []
    if kind in ("run", "amendment", "claim") and isinstance(body.get("plan"), str):
        refs.append(("body.plan", body["plan"]))
    if kind == "retraction" and isinstance(body.get("target"), str):
        refs.append(("body.target", body["target"]))
    if kind == "note":
        refs += [(f"body.refs[{i}]", r) for i, r in enumerate(body.get("refs") or [])]
    if kind in ("claim", "band"):
        refs += [(f"body.runs[{i}]", r) for i, r in enumerate(body.get("runs") or [])]
    return refs
