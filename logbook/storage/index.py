"""The rows derived from an entry's bytes: written once, here, for append, reindex and verify.

Everything here is a function of the signed bytes alone: ``derive`` hands an entry's rows (its
index row, its outcomes row, its run sources, its changes to the signing keys) to a sink, which
is the append transaction for append and reindex, and the rows `verify` expects for verify,
which compares them with what the store holds. ``references`` are the digests a body names.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from logbook.format.kinds import KINDS
from logbook.tlog import merkle


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


class KeySink(Protocol):
    """Where the changes an entry makes to the signing keys go."""

    def add_key(self, fingerprint: str, name: str, public: str, seq: int) -> None: ...

    def revoke_key(self, fingerprint: str, seq: int) -> None: ...


class DerivedSink(KeySink, Protocol):
    """Where an entry's derived rows go (the append transaction, or what verify expects)."""

    def insert_index(self, row: tuple[Any, ...]) -> None: ...

    def insert_outcome(self, row: tuple[Any, ...]) -> None: ...

    def insert_sources(self, seq: int, keys: list[str]) -> None: ...


def derive(sink: DerivedSink, seq: int, digest: str, env: dict[str, Any]) -> None:
    """Every derived row of one entry (its envelope as parsed from its stored bytes)."""
    sink.insert_index(index_tuple(seq, digest, env))
    kind = env.get("kind")
    if kind == "run":
        oc = outcome_tuple(seq, env)
        if oc is not None:
            sink.insert_outcome(oc)
        keys = source_keys(env)
        if keys:
            sink.insert_sources(seq, keys)
    elif kind in ("genesis", "key"):
        derive_keys(sink, seq, env)


def derive_keys(sink: KeySink, seq: int, env: dict[str, Any]) -> None:
    """The entry's changes to the signing keys; a public key that is not 32 bytes of strict
    base64 changes nothing (the chain checks report it)."""
    for action, name, public, _reason in key_changes(seq, env):
        try:
            raw = base64.b64decode(public, validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(raw) != 32:
            continue
        fingerprint = hashlib.sha256(raw).hexdigest()
        if action == "add":
            sink.add_key(fingerprint, name, public, seq)
        elif action == "revoke":
            sink.revoke_key(fingerprint, seq)


INDEX_COLUMNS = ("seq", "digest", "kind", "ts", "signer", "plan", "arm", "slug", "status",
                 "session", "target")
OUTCOME_COLUMNS = ("seq", "metric", "n", "n_missing", "total", "columns")
_BODY_COLUMNS = INDEX_COLUMNS[5:]  # copied from the body, by the kinds registry's `indexed`
_NONE = object()  # no JSON object has this key: its column is NULL


def _column_fields(indexed: tuple[str, ...]) -> dict[str, str]:
    """column -> the body field it holds (``column=dotted.field``, or the column's name)."""
    return dict(((c, f) if f else (c, c)) for c, _, f in (i.partition("=") for i in indexed))


assert all(set(_column_fields(k.indexed)) <= set(_BODY_COLUMNS) for k in KINDS.values())
# only `target` may hold a field inside an object field (one type check on the hot path)
assert all("." not in f for k in KINDS.values() for c, f in _column_fields(k.indexed).items()
           if c != "target")
# kind -> for each body column, the top-level body field it holds (_NONE: none for this kind)
_INDEXED: dict[str, tuple[object, ...]] = {
    k.name: tuple(_column_fields(k.indexed).get(c, "").partition(".")[0] or _NONE
                  for c in _BODY_COLUMNS)
    for k in KINDS.values() if k.indexed}
# kind -> the names below its top-level field of the `target` it holds (a run's intended.plan)
_TARGET_IN: dict[str, tuple[str, ...]] = {
    k.name: tuple(f.split(".")[1:]) for k in KINDS.values()
    if "." in (f := _column_fields(k.indexed).get("target", ""))}


def _nested(body: dict[str, Any], names: tuple[str, ...]) -> Any:
    value: Any = body
    for name in names:
        value = value.get(name) if type(value) is dict else None
    return value


def _body(env: dict[str, Any]) -> dict[str, Any]:
    body = env.get("body")
    return body if isinstance(body, dict) else {}


def _str(value: Any) -> str | None:
    """Derived columns hold text; anything else in a (tampered) entry derives as NULL."""
    return value if isinstance(value, str) else None


def index_tuple(seq: int, digest: str, env: dict[str, Any]) -> tuple[Any, ...]:
    """The entry_index row as a tuple, in INDEX_COLUMNS order (verify compares these).

    Hot in verify (once per entry), so written flat: text fields that are not strings (a
    tampered entry) derive as NULL; a list of arms (a claim's) is stored joined by commas.
    """
    body = env.get("body")
    if type(body) is not dict:
        body = {}
    kind = env.get("kind")
    if type(kind) is not str:
        kind = ""
    fields = _INDEXED.get(kind)
    if fields is None:
        plan = arm = slug = status = session = target = None
    else:
        plan, arm, slug, status, session, target = map(body.get, fields)
        if type(arm) is list:
            arm = ",".join(str(a) for a in arm)
        if type(target) is dict:  # a field inside it: a run's target, the plan that refused it
            target = _nested(target, _TARGET_IN.get(kind, ()))
    ts, signer = env.get("ts"), env.get("signer")
    return (seq, digest, kind, ts if type(ts) is str else "",
            signer if type(signer) is str else "",
            plan if type(plan) is str else None, arm if type(arm) is str else None,
            slug if type(slug) is str else None, status if type(status) is str else None,
            session if type(session) is str else None,
            target if type(target) is str else None)


def shape_text(body: dict[str, Any]) -> str:
    """A plan's shape as the checked copy keeps it (logbook.storage.base.PlanShape): the JSON
    text of [runs_per_arm, arms], what `brief` reads of every plan."""
    return orjson.dumps([body.get("runs_per_arm"), body.get("arms")]).decode()


def run_row(seq: int, digest: str, env: dict[str, Any],
            facts: str | None) -> tuple[int, str, str | None, str | None, str | None,
                                        str | None, str | None]:
    """A run's row of the checked copy's run facts: its index fields (as `index_tuple` derives
    them) and its facts as JSON text (logbook.format.runfacts)."""
    row = index_tuple(seq, digest, env)
    return (seq, digest, row[5], row[6], row[8], row[9], facts)


def outcome_tuple(seq: int, env: dict[str, Any]) -> tuple[Any, ...] | None:
    """The outcomes row as a tuple, in OUTCOME_COLUMNS order (verify compares these)."""
    if env.get("kind") != "run":
        return None
    body = env.get("body")
    oc = body.get("outcomes") if type(body) is dict else None
    if type(oc) is not dict:
        return None
    scores = oc.get("score")
    if type(scores) is not list:
        scores = []
    try:
        # the scored values in order (hot in verify, once per run): a zero adds nothing, and
        # leaving the false ones out leaves out None at C speed
        total = float(sum(filter(None, scores)))
    except TypeError:  # a tampered entry: count only the numbers
        total = float(sum(s for s in scores if isinstance(s, int | float)
                          and not isinstance(s, bool)))
    return (seq, str(oc.get("metric", "")), len(scores), scores.count(None), total,
            orjson.dumps(oc))


# sources without a run identity of their own: equal bytes are equal scores, not the same run
NO_IDENTITY = frozenset({"jsonl"})


def source_keys(env: dict[str, Any]) -> list[str]:
    """The keys a run's `source` is found by: its file's SHA-256, and the harness's own run
    identity, each within its harness and part (a run of a jsonl file has none)."""
    body = env.get("body")
    src = body.get("source") if env.get("kind") == "run" and type(body) is dict else None
    if type(src) is not dict or src.get("harness") in NO_IDENTITY:
        return []
    where = orjson.dumps([src.get("harness"), src.get("part")]).decode()
    keys = [f"sha256 {where} {src.get('sha256')}"]
    ids = src.get("ids")
    if type(ids) is dict and ids:
        keys.append(f"ids {where} {orjson.dumps(ids, option=orjson.OPT_SORT_KEYS).decode()}")
    return keys


def key_changes(seq: int, env: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(action, name, public b64) changes to the signing keys made by this entry."""
    body = _body(env)
    if env.get("kind") == "genesis":
        listed = body.get("keys")
        keys = listed if isinstance(listed, list) else []
        return [("add", _str(k.get("name")) or "", _str(k.get("public")) or "", "genesis")
                for k in keys if isinstance(k, dict)]
    if env.get("kind") == "key":
        return [(_str(body.get("action")) or "", _str(body.get("name")) or "",
                 _str(body.get("public")) or "", _str(body.get("reason")) or "")]
    return []


def references(env: dict[str, Any]) -> list[tuple[str, Any]]:
    """(field, digest) pairs this entry refers to (the kinds registry's `refs`); each must
    name an earlier entry. A single reference that is not text is none; a list of references
    that is not a list is reported as one reference."""
    body = _body(env)
    kind = env.get("kind")
    spec = KINDS.get(kind) if isinstance(kind, str) else None
    refs: list[tuple[str, Any]] = []
    for ref in spec.refs if spec is not None else ():
        value = ref.get(body)
        if not ref.many:
            if isinstance(value, str):
                refs.append((ref.label, value))
        elif value is not None and not isinstance(value, list):
            refs.append((ref.label, value))
        else:
            refs += [(f"{ref.label}[{i}]", r) for i, r in enumerate(value or [])]
    return refs


class TreeSink(DerivedSink, Protocol):
    """The append transaction: derived rows and the Merkle tree's nodes."""

    def tree_node(self, level: int, idx: int) -> bytes: ...

    def insert_tree_nodes(self, nodes: list[tuple[int, int, bytes]]) -> None: ...


def index_entry(txn: TreeSink, seq: int, digest: str, env: dict[str, Any]) -> None:
    """Every derived row of the entry at ``seq``, and the tree nodes it completes: what append
    writes for a new entry and reindex for each stored one, in seq order."""
    derive(txn, seq, digest, env)
    txn.insert_tree_nodes(merkle.nodes_completed_by_append(seq, bytes.fromhex(digest),
                                                           txn.tree_node))
