"""docs/format.md §12's cosigned checkpoint is what the spec's text and logbook's reader both
accept, with the key the text derives; a changed byte is refused by both."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from test_witness_server import independent_check

from logbook.errors import InputError
from logbook.verify.cosignatures import check_cosignatures, quorum_of, read_witness_key

DOC = (Path(__file__).resolve().parents[2] / "docs" / "format.md").read_text()
SECTION = DOC[DOC.index("## 12. Witness cosignatures"):]


def _example() -> tuple[str, str, bytes]:
    note = re.search(r"```\n(logbook/[^\n]+\n\d+\n[^\n]+\n\n(?:\u2014 [^\n]+\n){2})```", SECTION)
    vkey = re.search(r"The witness's verifier key is\n`([^`]+)`", SECTION)
    assert note is not None and vkey is not None
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    seed = hashlib.sha256(b"logbook format.md witness key").digest()
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)
    return note.group(1), vkey.group(1), public


def test_the_documented_cosignature_verifies() -> None:
    note, vkey, public = _example()
    assert base64.b64encode(public).decode() in SECTION
    line = note.splitlines(keepends=True)[-1]
    assert independent_check(note, line, "witness.example/w1", public) == 1767225600
    key = read_witness_key(vkey)
    assert key.public == public and key.key_id.hex() in vkey
    found = check_cosignatures(note, [key])
    assert list(found.valid.values()) == [1767225600] and not found.bad
    assert quorum_of(note, [key], 1) is None


def test_a_changed_byte_is_refused() -> None:
    note, vkey, public = _example()
    changed = note.replace("\n3\n", "\n4\n")
    line = changed.splitlines(keepends=True)[-1]
    from cryptography.exceptions import InvalidSignature

    with pytest.raises(InvalidSignature):
        independent_check(changed, line, "witness.example/w1", public)
    problem = quorum_of(changed, [read_witness_key(vkey)], 1)
    assert problem is not None and "does not verify" in problem
    with pytest.raises(InputError):
        read_witness_key(vkey.replace("+BAUm", "+AQUm"))
