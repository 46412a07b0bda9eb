"""Tests for logbook.tlog.note and logbook.tlog.checkpoint (DESIGN §4.2): C2SP signed notes
and tlog-checkpoints.

Published vectors (tests/data/merkle/signed_note_vectors.json; sources in the README
there): golang.org/x/mod/sumdb/note test keys and signed notes, a sum.golang.org tree head
from transparency-dev/formats, and the C2SP specification examples.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from logbook.errors import InputError
from logbook.tlog.checkpoint import (
    Checkpoint,
    body_text,
    checkpoint_signers,
    parse_checkpoint,
    parse_checkpoint_body,
    sign_checkpoint,
    verify_checkpoint_signature,
)
from logbook.tlog.note import (
    NoteSignature,
    key_hash,
    parse_note,
    parse_verifier_key,
    sign_note,
    verifier_key,
    verify_note,
)

VECTORS = json.loads(
    (Path(__file__).parents[1] / "data" / "merkle" / "signed_note_vectors.json").read_text("utf-8")
)
EM = "\u2014"


def _key(seed_text: bytes) -> tuple[Ed25519PrivateKey, bytes]:
    # Fixed seeds keep failures reproducible (Ed25519 signing is deterministic).
    priv = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed_text).digest())
    return priv, priv.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


PRIV, PUB = _key(b"logbook test key 1")
OTHER_PRIV, OTHER_PUB = _key(b"logbook test key 2")
LEDGER = uuid.UUID("0b7c3e0e-5f2a-4c1d-9e8b-2a6f4d1c9b70")
ORIGIN = f"logbook/{LEDGER}"
ROOT = hashlib.sha256(b"some root").digest()
# base64(0x01 || public key), the key part of a verifier key string.
PUB_B64 = base64.b64encode(b"\x01" + PUB).decode()


def _signed(cp: Checkpoint, priv: Ed25519PrivateKey = PRIV, pub: bytes = PUB) -> str:
    return sign_checkpoint(cp, cp.origin, priv.sign, pub)


# --- round trip ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cp",
    [
        Checkpoint(ORIGIN, 12345, ROOT),
        Checkpoint(ORIGIN, 0, hashlib.sha256(b"").digest()),
        Checkpoint(ORIGIN, 2**64 - 1, ROOT),
        Checkpoint(ORIGIN, 7, ROOT, ("ext one", "ext\u00e9two")),
    ],
    ids=["plain", "empty", "max", "extensions"],
)
def test_round_trip(cp: Checkpoint) -> None:
    text = _signed(cp)
    got, sigs = parse_checkpoint(text)
    assert got == cp
    assert body_text(got) == text.split("\n\n")[0].encode() + b"\n"
    assert len(sigs) == 1
    assert sigs[0].key_name == ORIGIN
    assert sigs[0].key_hash == key_hash(ORIGIN, PUB)
    assert len(sigs[0].signature) == 64
    assert verify_checkpoint_signature(text, [PUB])
    assert verify_checkpoint_signature(text.encode(), [OTHER_PUB, PUB])
    assert verify_checkpoint_signature((got, sigs), [PUB])
    assert not verify_checkpoint_signature(text, [OTHER_PUB])
    assert not verify_checkpoint_signature(text, [])


def test_body_text_exact() -> None:
    cp = Checkpoint(ORIGIN, 42, bytes(range(32)))
    want = f"{ORIGIN}\n42\n{base64.b64encode(bytes(range(32))).decode()}\n".encode()
    assert body_text(cp) == want


def test_independent_reading_of_the_note() -> None:
    """Read a signed checkpoint line by line from the C2SP text, not through the module."""
    cp = Checkpoint(ORIGIN, 987654, ROOT)
    text = _signed(cp)

    lines = text.split("\n")
    assert lines[-1] == ""  # the note ends with a newline
    assert lines[0] == ORIGIN
    assert lines[1] == "987654"
    assert base64.standard_b64decode(lines[2]) == ROOT
    assert lines[3] == ""  # the blank line before the signatures
    assert len(lines) == 6  # origin, size, root, blank, one signature, final ""
    sig_line = lines[4]
    assert sig_line.startswith("\u2014 ")
    name, b64 = sig_line[2:].split(" ")
    assert name == ORIGIN
    blob = base64.standard_b64decode(b64)
    assert len(blob) == 4 + 64
    want_id = hashlib.sha256(ORIGIN.encode() + b"\x0a" + b"\x01" + PUB).digest()[:4]
    assert blob[:4] == want_id
    signed_text = ("\n".join(lines[:3]) + "\n").encode("utf-8")
    Ed25519PublicKey.from_public_bytes(PUB).verify(blob[4:], signed_text)  # raises if bad

    vkey = f"{ORIGIN}+{want_id.hex()}+{PUB_B64}"
    assert verifier_key(ORIGIN, PUB) == vkey
    assert parse_verifier_key(vkey) == (ORIGIN, PUB)


# --- tampering ----------------------------------------------------------------------------


def _replace_line(text: str, n: int, new: str) -> str:
    lines = text.split("\n")
    lines[n] = new
    return "\n".join(lines)


def test_tampered_checkpoints_fail() -> None:
    cp = Checkpoint(ORIGIN, 1000, ROOT)
    text = _signed(cp)
    assert verify_checkpoint_signature(text, [PUB])
    other_root = base64.b64encode(hashlib.sha256(b"other").digest()).decode()
    other_origin = f"logbook/{uuid.UUID(int=LEDGER.int + 1)}"
    sig_b64 = text.split("\n")[4].split(" ")[2]
    blob = bytearray(base64.b64decode(sig_b64))
    blob[10] ^= 0x01
    flipped_sig = base64.b64encode(bytes(blob)).decode()
    blob = bytearray(base64.b64decode(sig_b64))
    blob[0] ^= 0x01
    flipped_id = base64.b64encode(bytes(blob)).decode()
    tampered = {
        "size": _replace_line(text, 1, "1001"),
        "smaller size": _replace_line(text, 1, "999"),
        "root": _replace_line(text, 2, other_root),
        "origin": _replace_line(text, 0, other_origin),
        # Renaming both the origin and the signature's key name still fails: the key id
        # and the signature both cover the name/text.
        "origin and key name": text.replace(ORIGIN, other_origin),
        "signature": text.replace(sig_b64, flipped_sig),
        "key id": text.replace(sig_b64, flipped_id),
        "extension added": text.replace("\n\n", "\nextra\n\n", 1),
    }
    for what, bad in tampered.items():
        parse_checkpoint(bad)  # still well-formed
        assert not verify_checkpoint_signature(bad, [PUB]), what


def test_signature_must_be_by_the_origin() -> None:
    cp = Checkpoint(ORIGIN, 5, ROOT)
    by_other_name = sign_checkpoint(cp, "example.com/someone-else", PRIV.sign, PUB)
    assert verify_note(by_other_name, "example.com/someone-else", [PUB])
    assert not verify_checkpoint_signature(by_other_name, [PUB])


def test_unknown_signatures_ignored_but_a_bad_known_one_rejects() -> None:
    cp = Checkpoint(ORIGIN, 5, ROOT)
    good = _signed(cp)
    witness = sign_note(body_text(cp), "witness.example/w1", OTHER_PRIV.sign, OTHER_PUB)
    both = good + witness.split("\n\n", 1)[1]
    assert len(parse_checkpoint(both)[1]) == 2
    assert verify_checkpoint_signature(both, [PUB])
    assert verify_note(both, "witness.example/w1", [OTHER_PUB])
    # A cosignature of another type (76 bytes) from an unknown key is just ignored.
    cosig = f"{EM} witness.example/w2 {base64.b64encode(b'abcd' + bytes(72)).decode()}\n"
    assert verify_checkpoint_signature(good + cosig, [PUB])
    # Same name, other key id: not our key, ignored (so alone it proves nothing).
    other_key_sig = _signed(cp, OTHER_PRIV, OTHER_PUB)
    assert not verify_checkpoint_signature(other_key_sig, [PUB])
    assert verify_checkpoint_signature(good + other_key_sig.split("\n\n", 1)[1], [PUB])
    # C2SP: a signature from a known key that fails to verify should reject the note,
    # even beside a good one.
    sig_b64 = good.split("\n")[4].split(" ")[2]
    blob = bytearray(base64.b64decode(sig_b64))
    blob[-1] ^= 0x80
    bad_line = f"{EM} {ORIGIN} {base64.b64encode(bytes(blob)).decode()}\n"
    assert not verify_checkpoint_signature(good + bad_line, [PUB])


def test_signers_are_the_keys_that_verified_and_a_bad_known_line_names_none() -> None:
    """checkpoint_signers, which the mirror uses to check a signature once a round, keeps
    verify_note's rule: a good line by one known key beside a failing line by another known
    key rejects the note (no signer), however the keys are given."""
    cp = Checkpoint(ORIGIN, 5, ROOT)
    good, other = _signed(cp), _signed(cp, OTHER_PRIV, OTHER_PUB)
    both = good + other.split("\n\n", 1)[1]
    assert checkpoint_signers(good, [PUB, OTHER_PUB]) == [PUB]
    assert checkpoint_signers(both, [OTHER_PUB, PUB]) == [PUB, OTHER_PUB]  # in line order
    assert checkpoint_signers(other, [PUB]) == []
    sig_b64 = other.split("\n")[4].split(" ")[2]
    blob = bytearray(base64.b64decode(sig_b64))
    blob[-1] ^= 0x80
    bad_other = f"{EM} {ORIGIN} {base64.b64encode(bytes(blob)).decode()}\n"
    for keys in ([PUB, OTHER_PUB], [OTHER_PUB, PUB]):
        assert checkpoint_signers(good + bad_other, keys) == []
        assert not verify_checkpoint_signature(good + bad_other, keys)
    assert checkpoint_signers(good + bad_other, [PUB]) == [PUB]  # the bad line names no key


def test_verify_never_raises_on_junk() -> None:
    for junk in ["", "\n", "not a note", b"\xff\xfe", "a\n1\nroot\n\n"]:
        assert verify_checkpoint_signature(junk, [PUB]) is False
        assert verify_note(junk, ORIGIN, [PUB]) is False
    text = _signed(Checkpoint(ORIGIN, 3, ROOT))
    assert verify_checkpoint_signature(text, [b"short", PUB[:31], b"x" * 33]) is False
    assert verify_checkpoint_signature(text, [b"short", PUB]) is True
    assert verify_checkpoint_signature(("not", "parsed"), [PUB]) is False  # type: ignore[arg-type]
    assert verify_checkpoint_signature((1, 2, 3), [PUB]) is False  # type: ignore[arg-type]
    assert verify_note(("text", []), ORIGIN, [PUB]) is False  # type: ignore[arg-type]
    cp, sigs = parse_checkpoint(text)
    assert verify_note((body_text(cp), ["junk"]), ORIGIN, [PUB]) is False  # type: ignore[list-item]
    assert verify_note((body_text(cp), sigs), ORIGIN, [PUB]) is True


# --- malformed notes ----------------------------------------------------------------------

_GOOD = _signed(Checkpoint(ORIGIN, 1000, ROOT))
_ROOT_B64 = base64.b64encode(ROOT).decode()
_SIG_LINE = _GOOD.split("\n")[4]

MALFORMED: dict[str, str | bytes] = {
    "no final newline": _GOOD[:-1],
    "no blank line": _GOOD.replace("\n\n", "\n"),
    "no signature lines": _GOOD.split("\n\n")[0] + "\n\n",
    "only a body": _GOOD.split("\n\n")[0] + "\n",
    "hyphen not em dash": _GOOD.replace(EM, "-"),
    "en dash": _GOOD.replace(EM, "\u2013"),
    "no space after dash": _GOOD.replace(EM + " ", EM),
    "extra field in signature line": _GOOD[:-1] + " extra\n",
    "signature not base64": _GOOD.replace(_SIG_LINE, f"{EM} {ORIGIN} !!!!"),
    "signature too short": _GOOD.replace(_SIG_LINE, f"{EM} {ORIGIN} AAAAAA=="),
    "key name with plus": _GOOD.replace(f"{EM} {ORIGIN}", f"{EM} a+b"),
    "text after signatures": _GOOD + "trailing words\n",
    "blank line after signatures": _GOOD + "\n",
    "too many signatures": _GOOD + (_SIG_LINE + "\n") * 100,
    "carriage return": _GOOD.replace("\n", "\r\n"),
    "tab": _GOOD.replace(ORIGIN, ORIGIN + "\tx", 1),
    "nul byte": _GOOD.replace("1000", "10\x0000", 1),
    "invalid utf-8": b"\xff" + _GOOD.encode(),
    "lone surrogate": _GOOD.replace(ORIGIN, ORIGIN + "\ud800", 1),
    "two body lines": f"{ORIGIN}\n1000\n\n{_SIG_LINE}\n",
    "empty origin": _GOOD.replace(ORIGIN + "\n1000", "\n1000", 1),
    "size leading zero": _replace_line(_GOOD, 1, "01000"),
    "size negative": _replace_line(_GOOD, 1, "-1000"),
    "size plus sign": _replace_line(_GOOD, 1, "+1000"),
    "size spaces": _replace_line(_GOOD, 1, " 1000"),
    "size hex": _replace_line(_GOOD, 1, "0x3e8"),
    "size underscore": _replace_line(_GOOD, 1, "1_000"),
    "size arabic-indic digits": _replace_line(_GOOD, 1, "\u0661\u0662"),
    "size over 64 bits": _replace_line(_GOOD, 1, str(2**64)),
    "size empty": _replace_line(_GOOD, 1, ""),
    "root not base64": _replace_line(_GOOD, 2, "not base64!"),
    "root url-safe base64": _replace_line(
        _GOOD, 2, base64.urlsafe_b64encode(b"\xfb" * 32).decode()
    ),
    "root unpadded": _replace_line(_GOOD, 2, _ROOT_B64.rstrip("=")),
    "root non-canonical padding bits": _replace_line(_GOOD, 2, _ROOT_B64[:-2] + "Z="),
    "root 31 bytes": _replace_line(_GOOD, 2, base64.b64encode(ROOT[:31]).decode()),
    "root 33 bytes": _replace_line(_GOOD, 2, base64.b64encode(ROOT + b"\x00").decode()),
    "root with space": _replace_line(_GOOD, 2, " " + _ROOT_B64),
    "empty extension line": _GOOD.replace(
        _ROOT_B64 + "\n", _ROOT_B64 + "\n\next\n", 1
    ),  # the last blank line splits, leaving an empty line in the body
    "not text": 12345,  # type: ignore[dict-item]
}


def test_non_canonical_root_case_is_really_non_canonical() -> None:
    # Guard the vector above: the altered padding bits must still decode under a lax
    # decoder, otherwise the case would test something else.
    lax = base64.b64decode(_ROOT_B64[:-2] + "Z=")
    assert len(lax) == 32 and base64.b64encode(lax).decode() != _ROOT_B64[:-2] + "Z="


@pytest.mark.parametrize("text", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_notes_raise_input_error(text: str | bytes) -> None:
    with pytest.raises(InputError) as err:
        parse_checkpoint(text)
    message = str(err.value)
    assert message and "\n" not in message
    assert verify_checkpoint_signature(text, [PUB]) is False


@pytest.mark.parametrize(
    "kwargs",
    [
        {"origin": "", "size": 1, "root": ROOT},
        {"origin": "a\nb", "size": 1, "root": ROOT},
        {"origin": ORIGIN, "size": -1, "root": ROOT},
        {"origin": ORIGIN, "size": 2**64, "root": ROOT},
        {"origin": ORIGIN, "size": True, "root": ROOT},
        {"origin": ORIGIN, "size": "1", "root": ROOT},
        {"origin": ORIGIN, "size": 1, "root": ROOT[:31]},
        {"origin": ORIGIN, "size": 1, "root": ROOT.hex()},
        {"origin": ORIGIN, "size": 1, "root": ROOT, "extensions": ("",)},
        {"origin": ORIGIN, "size": 1, "root": ROOT, "extensions": ("a\nb",)},
        {"origin": ORIGIN, "size": 1, "root": ROOT, "extensions": ["list"]},
    ],
)
def test_invalid_checkpoint_fields_raise_input_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InputError):
        Checkpoint(**kwargs)


def test_parse_checkpoint_body_alone() -> None:
    cp = Checkpoint(ORIGIN, 9, ROOT, ("x",))
    assert parse_checkpoint_body(body_text(cp)) == cp
    assert parse_checkpoint_body(body_text(cp).decode()) == cp
    with pytest.raises(InputError):
        parse_checkpoint_body(b"\xff\n1\n" + base64.b64encode(ROOT) + b"\n")


def test_signing_errors() -> None:
    cp = Checkpoint(ORIGIN, 1, ROOT)
    with pytest.raises(ValueError):  # the signer's key is not the public key given
        sign_checkpoint(cp, ORIGIN, OTHER_PRIV.sign, PUB)
    with pytest.raises(ValueError):
        sign_checkpoint(cp, ORIGIN, lambda body: b"short", PUB)
    with pytest.raises(InputError):
        sign_checkpoint(cp, "bad name", PRIV.sign, PUB)
    with pytest.raises(InputError):
        sign_checkpoint(cp, "a+b", PRIV.sign, PUB)
    with pytest.raises(InputError):
        sign_checkpoint(cp, ORIGIN, PRIV.sign, PUB[:31])
    with pytest.raises(InputError):
        sign_note("no newline", ORIGIN, PRIV.sign, PUB)


@pytest.mark.parametrize(
    "vkey",
    [
        "",
        "name",
        "name+0000",
        verifier_key(ORIGIN, PUB).replace("+", "-", 1),
        verifier_key(ORIGIN, PUB)[:-4],
        verifier_key(ORIGIN, PUB).upper(),
        # Wrong key id for the name and key.
        f"{ORIGIN}+00000000+{PUB_B64}",
        # Unknown signature type byte, with a matching id for that type.
        "+".join(
            [
                ORIGIN,
                hashlib.sha256(ORIGIN.encode() + b"\n\x02" + PUB).digest()[:4].hex(),
                base64.b64encode(b"\x02" + PUB).decode(),
            ]
        ),
        "bad name+00000000+AA==",
    ],
)
def test_parse_verifier_key_rejects(vkey: str) -> None:
    with pytest.raises(InputError):
        parse_verifier_key(vkey)


# --- published vectors --------------------------------------------------------------------


def _vkey_parts(vkey: str) -> tuple[str, str, bytes]:
    name, hex_id, b64 = vkey.split("+", 2)
    raw = base64.b64decode(b64)
    assert raw[0] == 1
    return name, hex_id, raw[1:]


@pytest.mark.parametrize("kp", VECTORS["key_pairs"], ids=lambda kp: kp["name"])
def test_published_verifier_keys(kp: dict[str, Any]) -> None:
    name, hex_id, pub = _vkey_parts(kp["verifier_key"])
    assert name == kp["name"]
    assert key_hash(name, pub).hex() == hex_id
    assert verifier_key(name, pub) == kp["verifier_key"]
    assert parse_verifier_key(kp["verifier_key"]) == (name, pub)
    if kp["signer_key"]:
        # PRIVATE+KEY+<name>+<id>+base64(0x01 || seed): the seed must give the public key.
        _, _, sname, sid, sb64 = kp["signer_key"].split("+", 4)
        seed = base64.b64decode(sb64)
        assert (sname, sid, seed[0], len(seed)) == (name, hex_id, 1, 33)
        priv = Ed25519PrivateKey.from_private_bytes(seed[1:])
        assert priv.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) == pub


def _published_keys() -> dict[str, tuple[bytes, Ed25519PrivateKey | None]]:
    out: dict[str, tuple[bytes, Ed25519PrivateKey | None]] = {}
    for kp in VECTORS["key_pairs"]:
        name, _, pub = _vkey_parts(kp["verifier_key"])
        priv = None
        if kp["signer_key"]:
            priv = Ed25519PrivateKey.from_private_bytes(
                base64.b64decode(kp["signer_key"].split("+", 4)[4])[1:]
            )
        out[name] = (pub, priv)
    return out


@pytest.mark.parametrize("vec", VECTORS["signed_notes"], ids=lambda v: v["desc"][:20])
def test_published_signed_notes(vec: dict[str, Any]) -> None:
    keys = _published_keys()
    body, sigs = parse_note(vec["note"])
    assert body == vec["text"].encode()
    assert [s.key_name for s in sigs] == vec["signers"]
    for name in vec["signers"]:
        pub, _ = keys[name]
        assert verify_note(vec["note"], name, [pub])
        assert not verify_note(vec["note"], name, [OTHER_PUB])
        sig = next(s for s in sigs if s.key_name == name)
        assert sig.key_hash == key_hash(name, pub)
    if vec["signers"] == ["PeterNeumann"]:
        # Ed25519 is deterministic, so signing the same text reproduces the published note.
        pub, priv = keys["PeterNeumann"]
        assert priv is not None
        assert sign_note(vec["text"], "PeterNeumann", priv.sign, pub) == vec["note"]


@pytest.mark.parametrize("vec", VECTORS["checkpoints"], ids=lambda v: v["origin"])
def test_published_checkpoints(vec: dict[str, Any]) -> None:
    cp, sigs = parse_checkpoint(vec["note"])
    assert cp.origin == vec["origin"]
    assert cp.size == vec["size"]
    assert cp.root == base64.b64decode(vec["root_b64"])
    assert body_text(cp) == vec["note"].split("\n\n")[0].encode() + b"\n"
    keys = _published_keys()
    for name in vec["signers"]:
        pub, _ = keys[name]
        sig = next(s for s in sigs if s.key_name == name)
        assert sig.key_hash == key_hash(name, pub)
        assert verify_note(vec["note"], name, [pub])
        # The sum.golang.org tree head is signed by a key not named after its origin, so
        # logbook's origin-bound check declines it.
        assert verify_checkpoint_signature(vec["note"], [pub]) is (name == cp.origin)
    assert not verify_checkpoint_signature(vec["note"], [PUB])


@pytest.mark.parametrize("vec", VECTORS["unsigned_examples"], ids=lambda v: v["desc"][:20])
def test_c2sp_note_example_splits_at_last_blank_line(vec: dict[str, Any]) -> None:
    body, sigs = parse_note(vec["note"])
    assert body == vec["text"].encode()
    assert len(sigs) == 1 and len(sigs[0].signature) == 64
    with pytest.raises(InputError):
        parse_checkpoint(vec["note"])  # a note, but not a checkpoint


def test_note_signature_is_a_value() -> None:
    a = NoteSignature("n", b"\x00" * 4, b"\x01" * 64)
    assert a == NoteSignature("n", b"\x00" * 4, b"\x01" * 64)
    with pytest.raises(AttributeError):
        a.key_name = "m"  # type: ignore[misc]
