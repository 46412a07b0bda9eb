"""Signatures are checked by libsodium (PyNaCl); the cryptography package stays the reference.
The two must give the same answer on every signature of a real ledger and on every way an
attacker could change one (issue 22): flipped bits, another key or message, S not reduced,
small-order R and keys, non-canonical keys, wrong lengths."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
from conftest import run_cli

from logbook.crypto.points import L, small_order_encodings
from logbook.crypto.public import verify_signature, verify_signature_reference
from logbook.format.canonical import SIGNATURE_DOMAIN


def _signed(ledger_dir: Path) -> list[tuple[bytes, bytes, bytes]]:
    for i in range(6):
        assert run_cli("note", f"finding {i}").code == 0
    keys = {}
    out = []
    lines = [orjson.loads(line) for line in run_cli("export").out.splitlines()]
    for line in lines:
        body = line["entry"]["body"]
        for k in body.get("keys") or []:
            raw = base64.b64decode(k["public"])
            keys[line["entry"]["signer"]] = raw
    for line in lines:
        message = SIGNATURE_DOMAIN + bytes.fromhex(line["digest"])
        out.append((keys[line["entry"]["signer"]], base64.b64decode(line["signature"]),
                    message))
    return out


def _variants(pub: bytes, sig: bytes, msg: bytes) -> list[tuple[str, bytes, bytes, bytes]]:
    out = [("as signed", pub, sig, msg)]
    for i in range(0, 64, 3):  # a bit flipped in R and in S
        bad = bytearray(sig)
        bad[i] ^= 1 << (i % 8)
        out.append((f"signature byte {i}", pub, bytes(bad), msg))
    s = int.from_bytes(sig[32:], "little")
    if s + L < 2**256:
        out.append(("S + L (not reduced)", pub, sig[:32] + (s + L).to_bytes(32, "little"), msg))
    for j, point in enumerate(sorted(small_order_encodings())):
        out.append((f"small-order R {j}", pub, point + sig[32:], msg))
        out.append((f"small-order key {j}", point, sig, msg))
    p = 2**255 - 19
    y = int.from_bytes(pub, "little") & ((1 << 255) - 1)
    if y + p < 2**255:
        out.append(("non-canonical key", (y + p).to_bytes(32, "little"), sig, msg))
    flipped = bytearray(msg)
    flipped[-1] ^= 1
    out += [("another message", pub, sig, bytes(flipped)), ("no domain", pub, sig, msg[-32:]),
            ("zero signature", pub, bytes(64), msg), ("short signature", pub, sig[:63], msg),
            ("long signature", pub, sig + b"\0", msg), ("short key", pub[:31], sig, msg),
            ("zero key", bytes(32), sig, msg)]
    return out


def test_libsodium_and_the_reference_agree_on_every_signature(ledger_dir: Path) -> None:
    signed = _signed(ledger_dir)
    assert len(signed) >= 7
    other_key = signed[0][0][::-1]
    cases = 0
    for pub, sig, msg in signed:
        for what, p, s, m in [*_variants(pub, sig, msg), ("another key", other_key, sig, msg)]:
            ours, reference = verify_signature(p, s, m), verify_signature_reference(p, s, m)
            assert ours == reference, (what, ours, reference)
            assert ours == (what == "as signed"), what
            cases += 1
    assert cases > 7 * 40


def test_signatures_checked_on_every_core_say_what_one_by_one_says(
        ledger_dir: Path, monkeypatch: Any) -> None:
    """A pool of workers (a large ledger) reports exactly the findings, in the same order,
    as the check in order: here with the pool forced on a small ledger in which an attacker
    damaged two signatures."""
    from test_tamper import Attacker, Row, flip_signature  # the tamper suite's attacker

    from logbook.verify import signatures

    _signed(ledger_dir)
    attacker = Attacker(ledger_dir / ".logbook" / "ledger.db")
    for seq in (3, 5):
        row = attacker.row(seq)
        attacker.put(Row(row.seq, row.digest, row.raw, flip_signature(row.signature, 40)))
    attacker.close()
    serial = run_cli("verify", "--json")
    monkeypatch.setattr(signatures, "PARALLEL_MIN", 2)
    monkeypatch.setattr(signatures, "workers", lambda: 2)
    pooled = run_cli("verify", "--json")
    assert serial.code == pooled.code == 1
    assert pooled.json["findings"] == serial.json["findings"]
    assert [f["seq"] for f in serial.json["findings"] if f["check"] == "signature"] == [3, 5]
