"""Checks an entry must pass against the ledger as it stands, inside the append transaction
(the body's own shape is checked before, by the models). Each refusal is one InputError that
names the field at fault; nothing is written."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from logbook.crypto.public import PublicKey, fingerprint
from logbook.errors import InputError
from logbook.format import kinds
from logbook.format.metrics import BOUNDED_KINDS
from logbook.ledger import intake
from logbook.ledger.suites import Suites
from logbook.storage.base import EntryLog
from logbook.tlog import merkle


class Standing:
    """The ledger as it stands inside the append transaction: its reads, a plan's body with
    its standing amendments (``plan_body(digest, without)``), and its size. A plain class:
    a dataclass would cost every cold append about 0.7 ms to build."""

    __slots__ = ("plan_body", "reads", "size", "suites")

    def __init__(self, reads: EntryLog, plan_body: Callable[..., dict[str, Any]],
                 size: int, suites: Suites) -> None:
        self.reads = reads
        self.plan_body = plan_body
        self.size = size
        self.suites = suites


Rule = Callable[[Standing, dict[str, Any]], None]


def check_state(kind: str, body: dict[str, Any], at: Standing) -> None:
    """The admission rule of ``kind`` (the kinds registry's `admission`) against the ledger as
    it stands; the signing key is checked before, by the Ledger service."""
    spec = kinds.KINDS.get(kind)
    if spec is not None and spec.admission is not None:
        rule: Rule = kinds.load(spec.admission)
        rule(at, body)


def admit_run(at: Standing, body: dict[str, Any]) -> None:
    store = at.reads
    if body.get("plan"):
        expect(store, body["plan"], "plan", "body.plan")
        plan = at.plan_body(body["plan"])
        _arm_of(plan, body.get("arm"), "body.arm")
        _scores_fit(plan, body.get("outcomes"))
        intake.check_run(at.suites, body["plan"], plan, body)
        _split_held(at, body, plan)
    else:
        _split_held(at, body, None)
    if body.get("intended"):
        expect(store, body["intended"]["plan"], "plan", "body.intended.plan")
    if body.get("reproduces"):
        _reproduces(store, body)
    intake.check_source(store, body)


def _split_held(at: Standing, body: dict[str, Any], plan: dict[str, Any] | None) -> None:
    """logbook.ledger.suite_door.check_run_split for a run that names a split (itself or
    through its plan's suite); a run that names none is spared the suites' door and its
    import (most appends)."""
    app = body.get("apparatus")
    if (app.get("split") if isinstance(app, dict) else None) is None and \
            ((plan or {}).get("suite") or {}).get("split") is None:
        return
    from logbook.ledger.suite_door import check_run_split

    check_run_split(at, body, plan)


def _reproduces(store: EntryLog, body: dict[str, Any]) -> None:
    """A reproduction repeats a run: the same metric, on the same suite (its dataset identity
    when the original records one, else its task)."""
    seq, _ = expect(store, body["reproduces"], "run", "body.reproduces")
    original = _body_of(store, body["reproduces"])
    theirs = (original.get("outcomes") or {}).get("metric")
    mine = (body.get("outcomes") or {}).get("metric")
    if theirs is not None and mine is not None and mine != theirs:
        raise InputError(f"body.outcomes.metric: this run measures {mine!r}, and the run it "
                         f"reproduces (@{seq}) measured {theirs!r}: a reproduction measures "
                         "the same metric")
    known, suite = intake.dotted(original.get("apparatus"), "dataset_hash")
    if known:
        _, given = intake.dotted(body.get("apparatus"), "dataset_hash")
        if given != suite:
            said = "gives none" if given is None else f"is {given}"
            raise InputError(f"body.apparatus.dataset_hash: the run it reproduces (@{seq}) "
                             f"was run on {suite}, and this run's {said}: a reproduction runs "
                             "the same suite")
    elif original.get("task") is not None and body.get("task") != original.get("task"):
        raise InputError(f"body.task: the run it reproduces (@{seq}) ran task "
                         f"{original.get('task')!r}, and this run "
                         f"{'names none' if body.get('task') is None else repr(body['task'])}"
                         ": a reproduction runs the same suite")


def refused(body: dict[str, Any], why: str) -> dict[str, Any]:
    """A run its plan refused, as the exploratory run that keeps it in view: plan and arm null,
    the plan and arm it named kept as ``intended`` with the refusal, its note saying why
    (docs/recording.md, "Refused runs stay in view")."""
    note = "; ".join(n for n in (body.get("note"), why) if n)
    intended = {"plan": body["plan"], "arm": body.get("arm") or "?", "reason": why}
    return {**body, "plan": None, "arm": None, "note": note, "intended": intended}


def admit_admission(at: Standing, body: dict[str, Any]) -> None:
    """An earlier run, not counted in any plan, not retracted and not admitted before, that
    the plan as it stands (amendments applied) accepts in the arm: every check of the door
    (logbook.ledger.intake.check_run) again."""
    store = at.reads
    seq, _ = expect(store, body["run"], "run", "body.run")
    plan_seq, _ = expect(store, body["plan"], "plan", "body.plan")
    for digest, what in ((body["run"], f"run @{seq}"), (body["plan"], f"plan @{plan_seq}")):
        if store.retractions_of([digest]).get(digest):
            raise InputError(f"body.{'run' if digest == body['run'] else 'plan'}: {what} is "
                             "retracted, and a retracted entry cannot be admitted to")
    run = _body_of(store, body["run"])
    if run.get("plan") is not None:
        raise InputError(f"body.run: run @{seq} is already counted in plan "
                         f"{str(run['plan'])[:12]}, arm {run.get('arm')!r}")
    earlier = store.entries_where("admission", targets=[body["run"]])
    standing = store.retractions_of([a.digest for a in earlier])
    live = [a for a in earlier if a.digest not in standing]
    if live:
        raise InputError(f"body.run: run @{seq} is already admitted (by admission "
                         f"@{live[0].seq})")
    plan = at.plan_body(body["plan"])
    _arm_of(plan, body.get("arm"), "body.arm")
    counted = {**run, "plan": body["plan"], "arm": body["arm"]}
    counted.pop("intended", None)
    try:
        _scores_fit(plan, run.get("outcomes"))
        intake.check_run(at.suites, body["plan"], plan, counted)
    except InputError as exc:
        raise InputError(f"body.run: plan {plan.get('slug')} as it stands still refuses run "
                         f"@{seq} in arm {body['arm']!r} ({exc})") from None


def admit_amendment(at: Standing, body: dict[str, Any]) -> None:
    expect(at.reads, body["plan"], "plan", "body.plan")
    from logbook.model.validate import validate_body

    amended = {**at.plan_body(body["plan"]), **body["changes"]}
    try:
        validate_body("plan", amended)
    except InputError as exc:
        raise InputError(f"body.changes: the amended plan is invalid: {exc}") from None
    _runs_fit(at, body["plan"], amended, "body.changes")


def admit_retraction(at: Standing, body: dict[str, Any]) -> None:
    store = at.reads
    _, kind = _retractable(store, body["target"])
    if kind == "amendment":  # the plan reverts: do its runs fit?
        plan = _body_of(store, body["target"])["plan"]
        _runs_fit(at, plan, at.plan_body(plan, without=body["target"]), "body.target")


def admit_claim(at: Standing, body: dict[str, Any]) -> None:
    store = at.reads
    if body.get("plan"):
        expect(store, body["plan"], "plan", "body.plan")
        plan = at.plan_body(body["plan"])
        arms = body.get("arm")
        for i, arm in enumerate(arms if isinstance(arms, list) else [arms]):
            if arm is not None:
                _arm_of(plan, arm, "body.arm" if not isinstance(arms, list)
                        else f"body.arm[{i}]")
    for i, r in enumerate(body.get("runs") or []):
        expect(store, r, "run", f"body.runs[{i}]")
    n = body["ledger_size"]
    if n > at.size:
        raise InputError(f"body.ledger_size: {n} is beyond the ledger's size {at.size}")
    root = merkle.root_from_nodes(n, store.tree_node).hex()
    if root != body["ledger_root"]:
        raise InputError(f"body.ledger_root: does not match the ledger's Merkle root "
                         f"at size {n} ({root})")


def admit_band(at: Standing, body: dict[str, Any]) -> None:
    for i, r in enumerate(body.get("runs") or []):
        expect(at.reads, r, "run", f"body.runs[{i}]")


def admit_key(at: Standing, body: dict[str, Any]) -> None:
    _key_change(at.reads, body)


def admit_timestamp(at: Standing, body: dict[str, Any]) -> None:
    """A timestamp names a tree the ledger has (its size and root, recomputed from the stored
    tree), and its answer grants a token over that checkpoint's body at the time it says."""
    import binascii

    import orjson

    from logbook.crypto.timestamps import read_response
    from logbook.tlog.checkpoint import Checkpoint, body_text
    from logbook.tlog.merkle import root_from_nodes
    from logbook.verify.proofs import origin_of

    size, root = body["size"], body["root"]
    if size > at.size:
        raise InputError(f"body.size: the ledger holds {at.size} entries, not {size}")
    if root_from_nodes(size, at.reads.tree_node).hex() != root:
        raise InputError(f"body.root: the ledger's tree of size {size} has another root")
    genesis = next(iter(at.reads.entries_at([0])), None)
    uuid = orjson.loads(genesis.entry)["body"]["uuid"] if genesis is not None else ""
    message = body_text(Checkpoint(origin_of(uuid), size, bytes.fromhex(root)))
    try:
        der = base64.b64decode(body["response"], validate=True)
    except binascii.Error:
        raise InputError("body.response is not base64") from None
    stamp = read_response(der, message, "body.response")
    if stamp.time != body["time"]:
        raise InputError(f"body.time: the token says {stamp.time}, not {body['time']}")


def admit_genesis(at: Standing, body: dict[str, Any]) -> None:
    for i, k in enumerate(body.get("keys") or []):
        PublicKey.checked(base64.b64decode(k["public"]), f"body.keys[{i}].public: "
                          "the key")


def expect(store: EntryLog, digest: str, kind: str | None, field: str) -> tuple[int, str]:
    """(seq, kind) of the entry ``digest`` names; InputError if none, or not of ``kind``."""
    found = store.kind_of(digest)
    if found is None:
        raise InputError(f"{field}: no entry has digest {digest}")
    if kind is not None and found[1] != kind:
        raise InputError(f"{field}: entry {digest[:12]} is a {found[1]}, not a {kind}")
    return found


def _arm_of(plan: dict[str, Any], arm: Any, field: str) -> None:
    arms = [a.get("name") for a in plan.get("arms", [])]
    if arm not in arms:
        raise InputError(f"{field}: {arm!r} is not an arm of the plan "
                         f"(its arms are {', '.join(map(str, arms))})")


def _scores_fit(plan: dict[str, Any], outcomes: Any) -> None:
    """Item scores of a proportion or pass@k plan lie in [0, 1]."""
    kind = (plan.get("metric") or {}).get("kind")
    if kind not in BOUNDED_KINDS or not isinstance(outcomes, dict):
        return
    for i, s in enumerate(outcomes.get("score") or ()):
        if s is not None and not 0.0 <= s <= 1.0:
            raise InputError(f"body.outcomes.score[{i}]: {s!r} lies outside [0, 1], and the "
                             f"plan's metric {plan['metric'].get('name')!r} is a {kind}")
    k = plan["metric"].get("k")
    if kind == "pass_at_k" and isinstance(k, int):
        _samples_fit(outcomes, k)


def _samples_fit(outcomes: dict[str, Any], k: int) -> None:
    """pass@k counts passing samples: each item needs at least k samples, each passed (1)
    or not (0), or missing."""
    ids = outcomes.get("id") or []
    for i, s in enumerate(outcomes.get("score") or ()):
        if s is not None and s not in (0.0, 1.0):
            raise InputError(f"body.outcomes.score[{i}]: {s!r} is neither 0 nor 1; a pass@k "
                             "metric counts samples that pass")
    written: dict[Any, int] = {}
    for item in ids:
        written[item] = written.get(item, 0) + 1
    short = next(((item, c) for item, c in written.items() if c < k), None)
    if short is not None:
        raise InputError(f"body.outcomes.sample: item {short[0]!r} has {short[1]} sample(s), "
                         f"fewer than the plan's pass@k k={k}")


def _body_of(store: EntryLog, digest: str) -> dict[str, Any]:
    import orjson

    stored = store.entry_by_digest(digest)
    assert stored is not None
    return dict(orjson.loads(stored.entry)["body"])


def _runs_fit(at: Standing, plan: str, body: dict[str, Any], field: str) -> None:
    """A plan whose metric becomes a proportion or pass@k: its standing runs' scores must
    already lie in [0, 1] (amendments are rare; this reads the plan's runs)."""
    kind = (body.get("metric") or {}).get("kind")
    if kind not in BOUNDED_KINDS:
        return
    store = at.reads
    for r, _arm in intake.plan_runs(store, plan):
        try:
            _scores_fit(body, _body_of(store, r.digest).get("outcomes"))
        except InputError as exc:
            raise InputError(f"{field}: the plan's metric would be a {kind}, but run @{r.seq} "
                             f"has scores outside [0, 1] ({exc})") from None


def _retractable(store: EntryLog, target: str) -> tuple[int, str]:
    seq, kind = expect(store, target, None, "body.target")
    if kind == "genesis":
        raise InputError("body.target: the genesis entry cannot be retracted (it is the "
                         "ledger's identity; start a new ledger instead)")
    if kind == "retraction":
        raise InputError(f"body.target: entry @{seq} is a retraction, and a retraction cannot "
                         "be withdrawn; append a note saying why, and the entry again if it "
                         "should count")
    if kind == "key":
        raise InputError(f"body.target: entry @{seq} is a key entry; withdraw a key with "
                         "`logbook keys revoke`")
    earlier = store.retractions_of([target]).get(target)
    if earlier:
        raise InputError(f"body.target: entry @{seq} is already retracted (by "
                         f"{earlier[0][:12]})")
    return seq, kind


def _key_change(store: EntryLog, body: dict[str, Any]) -> None:
    raw = base64.b64decode(body["public"])
    if body["action"] == "add":
        PublicKey.checked(raw, "body.public: the key")
    fp = fingerprint(raw)
    known = {k[0]: k for k in store.signing_keys()}
    if body["action"] == "add" and fp in known:
        raise InputError("body.public: this key is already registered in the ledger")
    if body["action"] == "revoke":
        if fp not in known or known[fp][4] is not None:
            raise InputError("body.public: this key is not a valid key of the ledger")
        if not any(k[4] is None for f, k in known.items() if f != fp):
            raise InputError("body.public: this is the ledger's only valid key; revoking it "
                             "would leave no key able to sign (add another key first)")


def admit_check(at: Standing, body: dict[str, Any]) -> None:
    """A spot-check judges exactly the items its draw gives from the run it names (a run with
    outcomes, not retracted): every one, and no other (logbook.format.spotcheck). A
    contamination check stands on its own."""
    if body.get("type") != "spot-check":
        return
    from logbook.format.spotcheck import draw

    store = at.reads
    seq, _ = expect(store, body["run"], "run", "body.run")
    if store.retractions_of([body["run"]]).get(body["run"]):
        raise InputError(f"body.run: run @{seq} is retracted; spot-check a run that stands")
    ids = ((_body_of(store, body["run"]).get("outcomes") or {}).get("id")) or []
    if not ids:
        raise InputError(f"body.run: run @{seq} has no items to spot-check")
    d = body["draw"]
    drawn = draw(body["run"], [str(i) for i in ids], d["n"], d["seed"])
    judged = [v["id"] for v in body["verdicts"]]
    missing = [i for i in drawn if i not in set(judged)]
    other = [i for i in judged if i not in set(drawn)]
    if other:
        raise InputError(f"body.verdicts: item {other[0]!r} is not one the draw (n {d['n']}, "
                         f"seed {d['seed']}) gives from run @{seq}: a spot-check judges the "
                         "items drawn, not items chosen")
    if missing:
        raise InputError(f"body.verdicts: item {missing[0]!r} was drawn (n {d['n']}, seed "
                         f"{d['seed']}) but has no verdict ({len(missing)} drawn items have "
                         "none; give `unsure` where you cannot tell)")
