"""An independent verifier of logbook ledgers, written from docs/format.md alone.

It imports nothing from `logbook`: only the standard library, `rfc8785` and `cryptography`.
`verify_export(path)` and `verify_db(path)` return every finding of section 7 as
`{"check", "severity", "message", "seq", "entries"}`; an empty list means the ledger verifies.

Where the spec is silent this verifier chooses the strict reading and says so in a comment
marked SPEC; where it deliberately goes beyond section 7 the comment says STRICTER.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

DOMAIN = b"logbook.entry.v1\n"  # section 3
ZERO = "0" * 64
KINDS = {"genesis", "key", "plan", "amendment", "run", "retraction", "claim", "band", "note",
         "admission", "timestamp", "check", "suite"}
ENVELOPE = {"v", "ledger", "seq", "prev", "ts", "kind", "signer", "body"}  # section 1
# section 5: the body fields that reference earlier entries, per kind (True: a list of them)
REFERENCES = {"run": [("plan", False), ("intended.plan", False), ("reproduces", False)],
              "amendment": [("plan", False)],
              "claim": [("plan", False), ("runs", True)], "band": [("runs", True)],
              "retraction": [("target", False)], "note": [("refs", True)],
              "admission": [("run", False), ("plan", False)], "check": [("run", False)]}
# section 7, step 3.6: the kind a single reference must name
MUST_BE = {("run", "plan"): "plan", ("run", "intended.plan"): "plan", ("run", "reproduces"): "run",
           ("amendment", "plan"): "plan", ("claim", "plan"): "plan",
           ("admission", "plan"): "plan", ("admission", "run"): "run", ("check", "run"): "run"}
OPTIONAL = {("run", "plan"), ("claim", "plan"), ("run", "intended.plan"),
            ("run", "reproduces"), ("check", "run")}  # null or absent: names none

Finding = dict[str, Any]


@dataclass
class Item:
    """One entry as read: its canonical bytes (None when unreadable) and what sits beside it."""

    raw: bytes | None
    seq: Any  # the stored position, or the seq an export claims (checked, never trusted)
    digest: Any  # the stored or claimed digest (checked, never trusted)
    signature: Any


def _reject(_: str) -> Any:
    raise ValueError("NaN and infinities are not JSON")  # section 2


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):  # section 2: a key appears once in an object
        raise ValueError("a key appears twice in one object")
    return dict(pairs)


def _parse(data: bytes) -> Any:
    return json.loads(data, parse_constant=_reject, object_pairs_hook=_unique)


def read_export(path: Path) -> list[Item]:
    items = []
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue  # SPEC: section 6 does not say whether blank lines are allowed
        try:
            row = _parse(line)
            entry = row["entry"]
            if type(entry["v"]) is not int or type(entry["seq"]) is not int:
                raise ValueError("section 1: v and seq are JSON integers (3.0 is not 3)")
            raw = rfc8785.dumps(entry)  # section 6: recompute, never trust
            # section 6: all four fields; seq and digest are claims to check, so never optional
            items.append(Item(raw, row["seq"], row["digest"], row["signature"]))
        except (ValueError, KeyError, TypeError, AttributeError, rfc8785.CanonicalizationError):
            items.append(Item(None, None, None, None))
    return items


def read_db(path: Path) -> list[Item]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT seq, digest, entry, signature FROM entries ORDER BY seq")
        return [Item(e.encode() if isinstance(e, str) else bytes(e), s, d, g)
                for s, d, e, g in rows]
    finally:
        conn.close()


def _public(text: Any) -> bytes | None:
    try:
        raw = base64.b64decode(text, validate=True) if isinstance(text, str) else b""
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 32 else None


def _is_int(v: Any, want: int) -> bool:
    return type(v) is int and v == want  # STRICTER: true is not 1, 1.5 is not an int


def verify(items: list[Item], trusted: str | None = None) -> list[Finding]:
    findings: list[Finding] = []

    def report(check: str, message: str, seq: int | None, entries: list[str]) -> None:
        findings.append({"check": check, "severity": "error", "message": message, "seq": seq,
                         "entries": entries})

    if not items:  # step 1
        report("empty", "no entries: an empty ledger is never verified", None, [])
        return findings
    prev, uuid = ZERO, None  # step 2
    valid: dict[str, Ed25519PublicKey] = {}
    revoked: set[str] = set()
    kinds: dict[str, str] = {}
    for position, item in enumerate(items):
        if item.raw is None:  # SPEC: section 7 does not say how an unreadable entry counts
            report("format", f"entry {position} cannot be read", position, [])
            continue
        digest_b = hashlib.sha256(item.raw).digest()  # step 3.1
        digest = digest_b.hex()
        here = [digest]
        if item.digest != digest:  # stored (database) or claimed (export): always checked
            report("digest", f"entry {position} hashes to {digest}, not {item.digest}",
                   position, [str(item.digest), digest])
        try:
            env = _parse(item.raw)
            canonical = rfc8785.dumps(env) == item.raw  # SPEC: stored bytes must be JCS
        except (ValueError, rfc8785.CanonicalizationError):
            env, canonical = None, False
        if not isinstance(env, dict):
            report("format", f"entry {position} is not a JSON object", position, here)
            prev = digest
            continue
        if not canonical or set(env) != ENVELOPE:  # section 1: no other field, none missing
            report("format", f"entry {position}: not a canonical envelope", position, here)
        if not _is_int(env.get("seq"), position) or not _is_int(item.seq, position):
            report("seq", f"entry {position}: seq {env.get('seq')!r} / {item.seq!r}",
                   position, here)  # step 3.2
        if env.get("prev") != prev:  # step 3.3
            report("prev", f"entry {position}: prev does not name entry {position - 1}",
                   position, here)
        kind, body, signer = env.get("kind"), env.get("body"), env.get("signer")
        body = body if isinstance(body, dict) else {}
        if not _is_int(env.get("v"), 1) or not isinstance(kind, str) or kind not in KINDS:
            report("format", f"entry {position}: version or kind unknown", position, here)
        if position == 0:  # step 3.4
            if kind != "genesis":
                report("genesis", "entry 0 is not a genesis entry", 0, here)
            keys = body.get("keys")
            for k in keys if isinstance(keys, list) else []:
                pub = _public(k.get("public") if isinstance(k, dict) else None)
                if pub is not None:
                    valid[hashlib.sha256(pub).hexdigest()] = Ed25519PublicKey.from_public_bytes(pub)
            uuid = body.get("uuid") if isinstance(body.get("uuid"), str) else None
            if uuid is None or env.get("ledger") != uuid:
                report("ledger", "genesis: ledger differs from the body's uuid", 0, here)
            # STRICTER than step 3.4, which only asks that T be listed: T must have signed the
            # genesis, else a genesis listing T beside the forger's key passes (see report).
            if trusted is not None and (trusted not in valid or signer != trusted):
                report("trust", f"the genesis is not signed by the trusted key {trusted}", 0,
                       here)
        else:
            if env.get("ledger") != uuid:
                report("ledger", f"entry {position} belongs to another ledger", position, here)
            if kind == "genesis":  # SPEC: section 7 does not forbid a later genesis
                report("genesis", f"entry {position} is a second genesis", position, here)
        key = valid.get(signer) if isinstance(signer, str) else None  # step 3.5
        signed = False
        if key is None:
            why = "revoked" if isinstance(signer, str) and signer in revoked else "unknown"
            report("signer", f"entry {position}: signer is a {why} key", position, here)
        else:
            try:
                key.verify(base64.b64decode(item.signature, validate=True), DOMAIN + digest_b)
                signed = True
            except (InvalidSignature, binascii.Error, ValueError, TypeError):
                report("signature", f"entry {position}: the signature does not verify",
                       position, here)
        for name, many in REFERENCES.get(str(kind), []):  # step 3.6
            value: Any = body
            for part in name.split("."):  # intended.plan: a field of an object field
                value = value.get(part) if isinstance(value, dict) else None
            if many and value is None:
                value = []  # SPEC: section 5 does not say whether refs[] / runs[] may be absent
            refs = (value if isinstance(value, list) else None) if many else [value]
            if refs is None:
                report("reference", f"entry {position}: body.{name} is not a list", position,
                       here)
                continue
            for ref in refs:
                if ref is None and (kind, name) in OPTIONAL:
                    continue  # an exploratory run, a claim with no plan, a run not refused
                got = kinds.get(ref) if isinstance(ref, str) else None
                want = MUST_BE.get((str(kind), name))
                if got is None or (want is not None and got != want):
                    report("reference", f"entry {position}: body.{name} names {ref!r}, not an "
                           "earlier entry of the right kind", position, here)
        if kind == "key" and signed:  # step 3.7
            pub = _public(body.get("public"))
            if pub is None:
                report("format", f"entry {position}: key entry without a key", position, here)
                pub = b""
            fp = hashlib.sha256(pub).hexdigest()
            if pub and body.get("action") == "add" and fp not in revoked:
                valid[fp] = Ed25519PublicKey.from_public_bytes(pub)
            elif pub and body.get("action") == "revoke":
                valid.pop(fp, None)
                revoked.add(fp)
        kinds[digest] = str(kind)
        prev = digest  # step 3.8
    return findings


def read_trust(value: str) -> str:
    """`--trust` (section 4): a 64-hex fingerprint, or a public-key file, as a fingerprint."""
    if len(value) == 64 and all(c in "0123456789abcdef" for c in value.lower()):
        return value.lower()
    lines = [ln.strip() for ln in Path(value).read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    if lines[:1] == ["logbook-ed25519-public-key-v1"]:
        lines = lines[1:]
    pub = _public(lines[0]) if len(lines) == 1 else None
    if pub is None:
        raise ValueError(f"{value} is not a logbook public key file")
    return hashlib.sha256(pub).hexdigest()


def verify_export(path: Path, trusted: str | None = None) -> list[Finding]:
    return verify(read_export(path), read_trust(trusted) if trusted else None)


def verify_db(path: Path, trusted: str | None = None) -> list[Finding]:
    return verify(read_db(path), read_trust(trusted) if trusted else None)


# --- committed items: openings (docs/format.md, "Committed items") -------------------------
def _rfc6962_root(leaf: bytes, index: int, size: int, path: list[bytes]) -> bytes | None:
    """RFC 9162 §2.1.3.2: the root an inclusion path gives, or None when it cannot."""
    if not 0 <= index < size:
        return None
    fn, sn = index, size - 1
    r = hashlib.sha256(b"\x00" + leaf).digest()
    for p in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = hashlib.sha256(b"\x01" + p + r).digest()
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = hashlib.sha256(b"\x01" + r + p).digest()
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


def _chosen(root: bytes, run: bytes, n: int, k: int) -> set[int]:
    """SPEC: the partial Fisher-Yates shuffle the format describes."""
    seed = hashlib.sha256(b"logbook.open.v1\n" + root + run + n.to_bytes(8, "big")
                          + k.to_bytes(8, "big")).digest()
    places, counter = list(range(n)), 0
    for j in range(k):
        m = n - j
        limit = 2**64 - 2**64 % m
        while True:
            x = int.from_bytes(hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()[:8],
                               "big")
            counter += 1
            if x < limit:
                break
        pick = j + x % m
        places[j], places[pick] = places[pick], places[j]
    return set(places[:k])


def verify_openings(doc: dict[str, Any], public: bytes) -> list[str]:
    """Every problem with an openings file under the ledger key ``public`` (32 raw bytes)."""
    import struct

    key = Ed25519PublicKey.from_public_bytes(public)
    problems: list[str] = []
    note = doc["checkpoint"]
    body, _, sigs = note.partition("\n\n")
    origin, size_text, root_b64 = body.split("\n")
    size, root = int(size_text), base64.b64decode(root_b64)
    key_id = hashlib.sha256(origin.encode() + b"\n\x01" + public).digest()[:4]
    signed = False
    for line in sigs.splitlines():
        name, _, blob = line.removeprefix("\u2014 ").partition(" ")
        raw = base64.b64decode(blob)
        if name == origin and raw[:4] == key_id:
            try:
                key.verify(raw[4:], (body + "\n").encode())
                signed = True
            except InvalidSignature:
                problems.append("checkpoint signature")
    if not signed or origin != "logbook/" + doc["ledger"]:
        problems.append("checkpoint not signed by the key for this ledger")
    run = doc["run"]
    env = run["entry"]
    digest = hashlib.sha256(rfc8785.dumps(env)).digest()
    if digest.hex() != run["digest"]:
        problems.append("run digest")
    try:
        key.verify(base64.b64decode(run["signature"]), DOMAIN + digest)
    except InvalidSignature:
        problems.append("run signature")
    seq = env["seq"]
    if _rfc6962_root(digest, seq, size, [bytes.fromhex(h) for h in doc["proof"]]) != root:
        problems.append("inclusion")
    oc = env["body"]["outcomes"]
    made = oc["commitment"]
    rows = [o["row"] for o in doc["openings"]]
    if len(set(rows)) != len(rows) or set(rows) != _chosen(root, digest, len(made), doc["k"]):
        problems.append("rows not the ones the checkpoint chooses")
    for o in doc["openings"]:
        i = o["row"]
        score = oc["score"][i]
        scored = b"\xff" * 8 if score is None else struct.pack(">d", float(score))
        preimage = (b"logbook.item-commitment.v1\n" + bytes.fromhex(o["salt"])
                    + hashlib.sha256(oc["id"][i].encode()).digest()
                    + hashlib.sha256(o["content"].encode()).digest() + scored)
        if hashlib.sha256(preimage).hexdigest() != made[i] or o["id"] != oc["id"][i] or \
                o["score"] != score:
            problems.append(f"row {i} does not open its commitment")
    return problems
