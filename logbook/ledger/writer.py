"""The Ledger's appends: drafts validated and their references resolved before the lock, then
written in one transaction, each admitted against the ledger as that transaction sees it
(logbook.ledger.admission), signed, indexed and chained (DESIGN §5). `Ledger` (logbook.ledger.
service) takes these methods from `Appending`."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from logbook.crypto.signing import SigningKey
from logbook.errors import EnvironmentProblem, InputError
from logbook.format import canonical, kinds
from logbook.ledger import admission, suites
from logbook.ledger.entry import Entry, now_rfc3339
from logbook.storage import index as derive
from logbook.storage.base import EntryLog, StoredEntry, Txn

if TYPE_CHECKING:
    from logbook.ledger.traces import Packed


class Appending:
    """What `Ledger` does to append (the service holds the store and the reads)."""

    _store: EntryLog

    if TYPE_CHECKING:  # the Ledger's own, which these methods use
        @property
        def uuid(self) -> str: ...

        def plan_body(self, plan_digest: str, without: str | None = None) -> dict[str, Any]:
            ...

        def resolve(self, ref: str, field: str = "reference") -> str: ...

        def entry_at(self, seq: int) -> Entry | None: ...

    def append(self, kind: str, body: dict[str, Any], key: SigningKey,
               once: str | None = None, ledger_id: str | None = None) -> Entry:
        return self.append_many([(kind, body)], key, once=once, ledger_id=ledger_id)[0]

    def append_many(self, drafts: list[tuple[str, dict[str, Any]]], key: SigningKey,
                    once: str | None = None, ledger_id: str | None = None) -> list[Entry]:
        """Validate every draft, then write all of them in one transaction, or none."""
        from logbook.model.validate import check_body

        early = None
        if once is not None:
            if not once.strip():
                raise InputError("--once: the key must not be empty")
            early = self._store.once_digest(once)
        from logbook.limits import check_value_depth

        resolved = []
        # each body's canonical bytes and their parse, made before the lock is taken: the
        # writer holding it only splices them into the envelope (see _write)
        bodies: list[tuple[bytes, Any] | None] = []
        slugs: dict[tuple[str, str], str] = {}  # a batch names its plan once, not per draft
        keep: list[Packed] = []  # item traces to keep once every draft is sound
        for i, (kind, body) in enumerate(drafts):
            where = f"draft {i + 1}: " if len(drafts) > 1 else ""
            try:
                if kind == "run" and isinstance(body, dict) and "traces" in body:
                    from logbook.ledger import traces

                    body, pack = traces.packed(body)
                    keep += [pack] if pack is not None else []
                check_value_depth(body, "body")
                body = self._resolve_refs(kind, body, slugs)
                check_body(kind, body)
                bodies.append(_canonical_body(body))
            except InputError as exc:
                raise type(exc)(where + str(exc)) from None
            resolved.append((kind, body))
        for pack in keep:  # before the entry that names it: an entry never names no blob
            self._store.keep_blob(pack.digest, pack.data)
        if early is not None:
            return self._once_again(str(once), early, resolved)
        lid = ledger_id or self.uuid
        out: list[Entry] = []
        with self._store.transaction(_plans_named(resolved), [key.public.fingerprint]) as txn:
            at = _InTxn(self._store, txn, self.plan_body)
            if once is not None:
                prior = self._store.once_digest(once)
                if prior is not None:  # another process won the race
                    return self._once_again(once, prior, resolved)
            for i, (kind, body) in enumerate(resolved):
                where = f"draft {i + 1}: " if len(resolved) > 1 else ""
                try:
                    out.append(self._write(txn, at, kind, body, key, lid, bodies[i]))
                except InputError as exc:
                    raise type(exc)(where + str(exc)) from None
            if once is not None:
                txn.remember_once(once, out[-1].digest)
        return out

    def _once_again(self, once: str, prior: str, drafts: list[tuple[str, Any]]) -> list[Entry]:
        """The entries an earlier append with key ``once`` wrote, when it wrote these very
        drafts (its whole batch, as then); an InputError naming it when it wrote other
        drafts: a key names one draft, and a second draft under it is never dropped silently."""
        stored = self._store.entry_by_digest(prior)
        if stored is None:  # no append of logbook's wrote that row
            from logbook.errors import StorageDamaged

            raise StorageDamaged(f"--once {once}: the ledger's record of that key names "
                                 f"{prior[:12]}, which is no entry of the ledger: the record "
                                 "was written by something other than an append; nothing "
                                 "was appended")
        last = Entry.from_stored(stored)
        first = last.seq - len(drafts) + 1
        out = []
        for i, (kind, body) in enumerate(drafts):
            earlier = last if first + i == last.seq else self.entry_at(first + i)
            if earlier is None or earlier.kind != kind or earlier.body != body:
                where = f" (draft {i + 1} differs)" if len(drafts) > 1 else ""
                raise InputError(f"--once {once}: that key already recorded another draft, "
                                 f"entry @{last.seq} ({last.digest[:12]}){where}; nothing was "
                                 "appended: give this draft a key of its own")
            out.append(dataclasses.replace(earlier, earlier=True))
        return out

    def _resolve_refs(self, kind: str, body: Any,
                      memo: dict[tuple[str, str], str] | None = None) -> Any:
        """Turn references (the kinds registry's `refs`) given as prefixes, @SEQ or slugs into
        full digests."""
        if not isinstance(body, dict):
            return body
        body = dict(body)

        def one(label: str, value: Any) -> Any:
            if not isinstance(value, str):
                return value
            if memo is None:
                return self.resolve(value, label)
            if (label, value) not in memo:
                memo[label, value] = self.resolve(value, label)
            return memo[label, value]

        spec = kinds.KINDS.get(kind)
        for ref in spec.refs if spec is not None else ():
            value = ref.get(body)
            if not ref.many and ref.holds(body):
                body = ref.put(body, one(ref.label, value))
            elif ref.many and isinstance(value, list):
                body = ref.put(body, [one(f"{ref.label}[{i}]", v) for i, v in enumerate(value)])
        return body

    def _write(self, txn: Txn, at: _InTxn, kind: str, body: dict[str, Any], key: SigningKey,
               ledger_id: str, spliced: tuple[bytes, Any] | None = None) -> Entry:
        size, prev = self._store.head()  # inside the transaction: this batch's writes too
        if kind == "genesis" and size != 0:
            raise InputError("kind: a genesis entry can only be the first entry")
        if kind != "genesis" and size == 0:
            raise EnvironmentProblem("ledger has no genesis entry")
        if kind != "genesis":
            self.check_key(key)
        admission.check_state(kind, body, admission.Standing(self._store, at.plan_body, size,
                                                             at.suites))
        from logbook.limits import check_entry_size, loads_bounded

        # in the order JCS writes them (sorted), as the envelope parses from its bytes
        head = {"kind": kind, "ledger": ledger_id, "prev": prev or canonical.ZERO_DIGEST,
                "seq": size, "signer": key.public.fingerprint, "ts": now_rfc3339(), "v": 1}
        if spliced is not None:
            # "body" sorts first: the envelope's bytes are {"body":…} made before the lock,
            # then the rest's
            raw = spliced[0][:-1] + b"," + canonical.canonical_bytes(head)[1:]
        else:
            raw = canonical.canonical_bytes({**head, "body": body})
        check_entry_size(len(raw))
        digest_b = canonical.digest_bytes(raw)
        digest = digest_b.hex()
        signature = base64.b64encode(key.sign(canonical.signing_input(digest_b))).decode()
        # derive from the bytes as stored (JCS writes 1.0 as 1), exactly as verify will
        envelope = {"body": spliced[1], **head} if spliced is not None else loads_bounded(raw)
        txn.insert_entry(StoredEntry(size, digest, raw, signature))
        derive.index_entry(txn, size, digest, envelope)
        suites.advance(txn, at.suites, size, digest, envelope)
        if kind in ("amendment", "retraction"):
            at.plans.clear()  # a plan's body may have changed
        return Entry(size, digest, envelope, signature, raw)

    def check_key(self, key: SigningKey) -> None:
        """Exit 3 unless ``key`` is a valid signing key of this ledger now."""
        fp = key.public.fingerprint
        if not any(k[0] == fp and k[4] is None for k in self._store.signing_keys()):
            raise EnvironmentProblem(
                f"signing key {key.public.fingerprint[:16]}… is not a valid key of this "
                "ledger (add it with `logbook keys add` signed by a valid key)")


def _plans_named(drafts: list[tuple[str, dict[str, Any]]]) -> dict[str, list[str]]:
    """The plans runs among ``drafts`` are counted in, each with their item ids."""
    out: dict[str, dict[str, None]] = {}
    for kind, body in drafts:
        plan = body.get("plan") if kind == "run" else None
        if isinstance(plan, str):
            ids = (body.get("outcomes") or {}).get("id") or []
            out.setdefault(plan, {}).update(dict.fromkeys(i for i in ids if isinstance(i, str)))
    return {plan: list(ids) for plan, ids in out.items()}


_SPLICE_BELOW = 1 << 20  # larger bodies are written whole under the lock, holding fewer copies


def _canonical_body(body: Any) -> tuple[bytes, Any] | None:
    """``{"body": body}`` as canonical bytes (what an envelope's bytes begin with, and a
    refusal names ``body.<field>`` as the envelope's would), with the body those bytes parse
    to (the body as its entry stores it); None for a body over a MiB, which `_write` makes
    whole instead, so that a large note is held in as few copies as before."""
    from logbook.limits import loads_bounded

    data = canonical.canonical_bytes({"body": body})
    if len(data) > _SPLICE_BELOW:
        return None
    return data, loads_bounded(data)["body"]


class _InTxn:
    """What one append transaction remembers between its drafts: plans' bodies as amended
    (until an amendment or retraction is written) and plans' suite states (logbook.ledger.
    suites.Suites), so that a batch of runs of one plan reads each once."""

    __slots__ = ("_amended", "plans", "suites")

    def __init__(self, store: EntryLog, txn: Txn,
                 amended: Callable[..., dict[str, Any]]) -> None:
        self._amended = amended
        self.plans: dict[tuple[str, str | None], dict[str, Any]] = {}
        self.suites = suites.Suites(store, txn)

    def plan_body(self, plan_digest: str, without: str | None = None) -> dict[str, Any]:
        key = (plan_digest, without)
        if key not in self.plans:
            self.plans[key] = self._amended(plan_digest, without)
        # a copy the caller may change (of JSON values: orjson makes it several times faster)
        return orjson.loads(orjson.dumps(self.plans[key]))  # type: ignore[no-any-return]
