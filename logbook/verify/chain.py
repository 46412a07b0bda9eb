"""Verification of a ledger or an exported file: every finding, never a vacuous pass.

Imports nothing that signs and nothing heavy (no pydantic, numpy or scipy): an auditor's
`logbook verify` needs only the entries and, optionally, a trusted public key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from logbook.crypto.points import public_key_problem
from logbook.findings import Finding
from logbook.format.canonical import SIGNATURE_DOMAIN, ZERO_DIGEST
from logbook.format.kinds import KINDS
from logbook.format.strict import repeated_key
from logbook.limits import LARGE_TEXT, loads_bounded
from logbook.storage import index as derive
from logbook.storage.base import KeyRow
from logbook.tlog import merkle
from logbook.verify.derived import Digests, KindIndex, derived_finding
from logbook.verify.signatures import SignatureBatch, checker

# kind -> {single reference field: the kind it must name} (a list's members: at append only)
REF_KINDS = {k.name: {r.label: r.names for r in k.refs if r.names and not r.many}
             for k in KINDS.values()}
ENVELOPE_FIELDS = {"v", "ledger", "seq", "prev", "ts", "kind", "signer", "body"}


@dataclass
class Result:
    entries: int = 0
    findings: list[Finding] = field(default_factory=list)
    checks: int = 0
    head: str | None = None
    ledger: str | None = None
    # For checking checkpoints (logbook.verify.checkpoint): the 32-byte digest of every entry in
    # order (the Merkle leaves) and the key history (fingerprint, name, public, added_seq,
    # revoked_seq), both recomputed from the entry bytes. Not part of as_dict().
    digests: Sequence[bytes] = field(default_factory=list, repr=False)
    keys: list[KeyRow] = field(default_factory=list, repr=False)
    unchecked: int = 0  # signatures left to a stored checkpoint (logbook.verify.integrity only)
    # The Merkle root over `digests` when the check rebuilt the tree anyway (a ledger database:
    # logbook.verify.stored), so that no caller hashes every leaf again; None: not computed.
    root: bytes | None = field(default=None, repr=False)
    # every `timestamp` entry (seq, body), for logbook.verify.timestamps to check
    stamps: list[tuple[int, dict[str, Any]]] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return self.checks > 0 and self.entries > 0 and not self.findings

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "entries": self.entries, "ledger": self.ledger,
                "head": self.head, "findings": [f.as_dict() for f in self.findings]}


class ChainVerifier:
    """Feed entries in order; collects every finding about the chain and signatures."""

    def __init__(self, trusted: str | None = None, vouched: int = 0,
                 batch: SignatureBatch | None = None) -> None:
        """``vouched``: entries below this seq are vouched for by a checkpoint the caller
        checks afterwards (logbook.verify.integrity): their signatures are not checked here,
        except those of genesis and key entries, which decide who may sign that checkpoint.
        ``batch``: the other signatures are collected there and checked together by `finish`
        (on every core, logbook.verify.signatures) instead of one by one as they come."""
        self.trusted = trusted
        self.vouched = vouched
        self.batch = batch
        self.unchecked = 0  # signatures left to the checkpoint
        self.result = Result()
        self.expected_seq = 0
        self.prev = ZERO_DIGEST
        self.valid: dict[str, bytes] = {}  # fingerprint -> raw public key
        self.revoked: set[str] = set()
        self.kinds: KindIndex | dict[bytes, str] = {}  # digest -> kind (packed when large)
        self._pack_at, self._check = KindIndex.pack_at, checker()  # verify_signature's answers
        self.digests = Digests()

    def _find(self, check: str, message: str, seq: int | None, entries: list[str]) -> None:
        self.result.findings.append(Finding(check, "error", message, seq, entries))

    def feed(self, stored_seq: int | None, stored_digest: str | None, raw: bytes,
             signature: str) -> dict[str, Any] | None:
        """Check one entry; returns its parsed envelope (or None when unreadable). Hot: each
        check is one comparison in the common case."""
        r = self.result
        r.entries += 1
        r.checks += 1
        position = self.expected_seq
        self.expected_seq = position + 1
        digest_b = _sha256(raw).digest()
        digest = digest_b.hex()
        label = [digest]
        if stored_seq is not None and stored_seq != position:
            self._find("seq", f"entry stored at seq {stored_seq} where seq {position} was "
                       "expected: an entry is missing or out of place", stored_seq, label)
        if stored_digest is not None and stored_digest != digest:
            self._find("digest", f"entry {position}: its bytes hash to {digest[:16]}…, not to "
                       f"the stored digest {stored_digest[:16]}…: the entry was altered",
                       position, [stored_digest, digest])
        try:
            env = _loads(raw) if len(raw) < LARGE_TEXT else loads_bounded(raw)
        except orjson.JSONDecodeError:
            env = None
        if type(env) is not dict:
            self._find("format", f"entry {position} is not a JSON object", position, label)
            self.prev = digest
            self.digests.append(digest_b)
            return None
        if _dumps(env, option=_SORTED) != raw and (again := repeated_key(raw, env)):
            self._find("format", f"entry {position}: key {again!r} appears twice in one object "
                       "(readers may take either value)", position, label)
        get = env.get
        if env.keys() != ENVELOPE_FIELDS:
            extra = sorted(set(env) - ENVELOPE_FIELDS)
            missing_fields = sorted(ENVELOPE_FIELDS - set(env))
            what = (f"unknown field {extra[0]!r}" if extra else
                    f"missing field {missing_fields[0]!r}")
            self._find("format", f"entry {position}: envelope has {what}", position, label)
        if type(v := get("v")) is not int or v != 1:
            self._find("format", f"entry {position}: unsupported version {v!r}", position, label)
        if type(seq := get("seq")) is not int or seq != position:
            self._find("seq", f"entry {position} says seq {seq!r}: entries are missing, "
                       "reordered or duplicated", position, label)
        if get("prev") != self.prev:
            self._find("prev", f"entry {position}: prev {str(get('prev'))[:16]}… does not "
                       f"match the digest of entry {position - 1} ({self.prev[:16]}…)",
                       position, label)
        kind = k if type(k := get("kind")) is str else None
        if kind not in KINDS:
            self._find("format", f"entry {position}: unknown kind {kind!r}", position, label)
        body = b if type(b := get("body")) is dict else {}
        if position == 0:
            self._genesis(env, body, label)
        elif kind == "genesis":
            self._find("genesis", f"entry {position} is a second genesis entry", position,
                       label)
        elif get("ledger") != r.ledger:
            self._find("ledger", f"entry {position} belongs to ledger {get('ledger')!r}, "
                       f"not {r.ledger!r}", position, label)
        self._signature(position, env, digest_b, signature, label)
        for f in _REF_FIELDS.get(kind, ()):  # type: ignore[arg-type]
            if body.get(f) not in (None, []):  # most name nothing: no generator for them
                self._references(position, kind, env, label)  # type: ignore[arg-type]
                break
        if kind == "key" and self._signed_ok:
            self._key_entry(position, body, label)
        elif kind == "timestamp":
            r.stamps.append((position, body))
        self.kinds[digest_b] = (_KIND_NAMES.get(kind) if kind is not None else None) or str(kind)
        if len(self.kinds) >= self._pack_at and type(self.kinds) is dict:
            self.kinds = KindIndex(self.kinds)
        self.prev = digest
        self.digests.append(digest_b)
        r.head = digest
        return env

    def _references(self, position: int, kind: str, env: dict[str, Any],
                    label: list[str]) -> None:
        for fld, ref in derive.references(env):
            want = REF_KINDS[kind].get(fld) if kind in REF_KINDS else None
            named = _digest_key(ref)
            got = self.kinds.get(named) if named is not None else None
            if got is None:
                self._find("reference", f"entry {position}: {fld} names {str(ref)[:16]}…, "
                           "which is not an earlier entry", position, label)
            elif want and got != want:
                self._find("reference", f"entry {position}: {fld} names a {got}, not a "
                           f"{want}", position, label)

    def _genesis(self, env: dict[str, Any], body: dict[str, Any], label: list[str]) -> None:
        if env.get("kind") != "genesis":
            self._find("genesis", "entry 0 is not a genesis entry", 0, label)
        self.result.ledger = body.get("uuid") if isinstance(body.get("uuid"), str) else None
        if env.get("ledger") != self.result.ledger:
            self._find("ledger", "genesis: envelope ledger id differs from the body's uuid", 0,
                       label)
        listed = body.get("keys")
        keys = listed if isinstance(listed, list) else []
        for i, k in enumerate(keys):
            pub = _public(k.get("public") if isinstance(k, dict) else None)
            if pub is not None and self._usable(pub, f"genesis: keys[{i}]", 0, label):
                self.valid[hashlib.sha256(pub).hexdigest()] = pub
        if not self.valid:
            self._find("genesis", "genesis names no valid public key", 0, label)
        if self.trusted is not None and (self.trusted not in self.valid
                                         or env.get("signer") != self.trusted):
            self._find("trust", f"the genesis entry is not signed by the trusted key "
                       f"{self.trusted[:16]}…: this ledger was not started by that key", 0, label)

    def _signature(self, position: int, env: dict[str, Any], digest_b: bytes, signature: str,
                   label: list[str]) -> None:
        self._signed_ok = False
        signer = s if type(s := env.get("signer")) is str else None
        key = self.valid.get(signer)  # type: ignore[arg-type]
        if key is None:
            why = "a revoked key" if signer in self.revoked else "a key unknown to the ledger"
            self._find("signer", f"entry {position} is signed by {why} "
                       f"({str(signer)[:16]}…)", position, label)
            return
        try:
            sig = binascii.a2b_base64(signature, strict_mode=True)
            if ((position < self.vouched or self.batch is not None)
                    and env.get("kind") not in ("genesis", "key")):  # those: in order, here
                if len(sig) != 64:  # its form is still checked: damage shows either way
                    raise ValueError("not a signature")
                if position < self.vouched:
                    self.unchecked += 1
                else:
                    self.batch.add(position, label[0], key, sig,  # type: ignore[union-attr]
                                   SIGNATURE_DOMAIN + digest_b)
                self._signed_ok = True  # said of key entries only, which are never batched
                return
            # libsodium's rules (no small-order key or R, S below L), then its equation
            if not self._check(key, sig, SIGNATURE_DOMAIN + digest_b):
                raise ValueError("the signature does not verify")
        except (binascii.Error, ValueError, TypeError):
            self._find("signature", f"entry {position}: the signature does not verify with "
                       "its signer's key", position, label)
            return
        self._signed_ok = True

    def _usable(self, pub: bytes, what: str, position: int, label: list[str]) -> bool:
        """False, with a finding, for a weak key (ed25519_points): it never becomes valid."""
        problem = public_key_problem(pub)
        if problem is not None:
            self._find("key", f"{what} is a weak key: {problem}", position, label)
        return problem is None

    def _key_entry(self, position: int, body: dict[str, Any], label: list[str]) -> None:
        pub = _public(body.get("public"))
        if pub is None:
            self._find("format", f"entry {position}: key entry without a valid public key",
                       position, label)
            return
        fp = hashlib.sha256(pub).hexdigest()
        if body.get("action") == "add":
            if not self._usable(pub, f"entry {position}: the key it adds", position, label):
                return
            if fp not in self.revoked:
                self.valid[fp] = pub
        elif body.get("action") == "revoke":
            self.valid.pop(fp, None)
            self.revoked.add(fp)

    def finish(self) -> Result:
        if self.batch is not None:
            for position, digest in self.batch.failures():
                self._find("signature", f"entry {position}: the signature does not verify "
                           "with its signer's key", position, [digest])
            # in the order of the entries, as the one-by-one check reports them
            self.result.findings.sort(key=lambda f: -1 if f.seq is None else f.seq)
            self.batch = None
        if self.result.entries == 0:
            self._find("empty", "the ledger holds no entries: nothing was verified", None, [])
        return self.result


_KIND_NAMES = {k: k for k in KINDS}
_sha256, _loads, _dumps = hashlib.sha256, orjson.loads, orjson.dumps  # feed's, looked up once
_SORTED = orjson.OPT_SORT_KEYS
_REF_FIELDS = {k.name: tuple(dict.fromkeys(r.top for r in k.refs))
               for k in KINDS.values() if k.refs}


def _digest_key(ref: Any) -> bytes | None:
    """The 32 bytes a reference names (None: it is not 64 lowercase hex digits)."""
    if not isinstance(ref, str) or len(ref) != 64 or ref != ref.lower():
        return None
    try:
        return bytes.fromhex(ref)
    except ValueError:
        return None


def _public(text: Any) -> bytes | None:
    try:
        raw = base64.b64decode(text, validate=True) if isinstance(text, str) else b""
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 32 else None


def expected_tree(digests: Sequence[bytes]) -> dict[tuple[int, int], bytes]:
    """Every complete subtree node of the tree over the entries' digests."""
    return {(level, idx): h for level, idx, h in merkle.all_nodes(digests)}


def compare_rows(result: Result, table: str, expected: Iterable[tuple[Any, ...]],
                 stored: Iterable[tuple[Any, ...]], digests: Sequence[bytes]) -> None:
    """Findings for every derived row that differs from what the entry bytes say."""
    result.checks += 1
    expected = list(expected)
    stored = [tuple(row) for row in stored]
    if stored == expected:  # the common case, compared at C speed; details only on a mismatch
        return
    exp = {row[0]: row for row in expected}
    seen: set[Any] = set()
    for row in stored:
        key = row[0]
        seen.add(key)
        want = exp.get(key)
        if want != tuple(row):
            result.findings.append(derived_finding(
                table, key, digests, row if want is None else want,
                "a row not derived from any entry" if want is None else
                "it differs from what the entry's bytes say"))
    for key in exp.keys() - seen:
        result.findings.append(derived_finding(table, key, digests, exp[key],
                                               "the row is missing"))


class ExpectedKeys:
    """The signing_keys rows the entries' key changes make, from their bytes (a
    logbook.storage.index.KeySink): [fingerprint, name, public, added, revoked]."""

    def __init__(self) -> None:
        self.keys: dict[str, list[Any]] = {}

    def add_key(self, fingerprint: str, name: str, public: str, seq: int) -> None:
        if fingerprint not in self.keys:  # a key is added once; adding it again changes nothing
            self.keys[fingerprint] = [fingerprint, name, public, seq, None]

    def revoke_key(self, fingerprint: str, seq: int) -> None:
        row = self.keys.get(fingerprint)
        if row is not None and row[4] is None:
            row[4] = seq

    def rows(self) -> list[KeyRow]:
        return [(fp, name, public, added, revoked) for fp, name, public, added, revoked
                in self.keys.values()]


def strict_checks(result: Result, raw_and_envs: Iterable[tuple[int, bytes, Any]]) -> None:
    """`verify --strict`: stored bytes are exactly JCS, and every body passes its model.

    Both only concern what a signer wrote (a forger without the key is caught by the
    signatures): non-canonical bytes would not survive an export, and a body the models refuse
    would not have been appended by logbook. Slower (JCS in Python, pydantic), so opt-in.
    """
    from logbook.errors import InputError
    from logbook.format.canonical import canonical_bytes
    from logbook.model.validate import validate_body

    result.checks += 1
    for seq, raw, env in raw_and_envs:
        if not isinstance(env, dict):
            continue
        label = [hashlib.sha256(raw).hexdigest()]
        try:
            canonical = canonical_bytes(env)
        except InputError as exc:
            canonical = None
            result.findings.append(Finding("canonical", "error", f"entry {seq}: {exc}", seq,
                                           label))
        if canonical is not None and canonical != raw:
            result.findings.append(Finding(
                "canonical", "error", f"entry {seq}: its stored bytes are not the RFC 8785 "
                "canonical form of the envelope they encode", seq, label))
        kind = env.get("kind")
        if isinstance(kind, str) and kind in KINDS:
            try:
                validate_body(kind, env.get("body"))
            except InputError as exc:
                result.findings.append(Finding("schema", "error", f"entry {seq}: {exc}", seq,
                                               label))
