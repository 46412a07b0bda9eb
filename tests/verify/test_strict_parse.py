"""One parse, strict (issue 34, item 4): an entry that gives a key twice in one object, or an
exported envelope whose `v` or `seq` is written `3.0` or `3e0`, means two things to two
readers; `logbook verify` and the independent verifier both refuse it (exit 1, a *format*
finding), in an export and in a ledger's stored bytes signed by a valid key."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import independent_verifier as iv
import orjson
import pytest
from conftest import run_cli
from test_tamper import Attacker, Row, read_private

# the entry text is the attacker's: the last value of a repeated key is the one the signed
# canonical bytes hold, so a last-wins parser (orjson, Python's json) computes the honest digest
TWICE = {
    "kind": (b'"kind":"note"', b'"kind":"plan","kind":"note"'),
    "body-text": (b'"text":"hello"', b'"text":"goodbye","text":"hello"'),
}


def _ledger(tmp: Path) -> Path:
    for args in (("note", "hello"), ("note", "after")):
        assert run_cli(*args).code == 0
    out = tmp / "export.jsonl"
    assert run_cli("export", "--out", str(out)).code == 0
    return out


def _verify(path: Path) -> tuple[int, list[dict[str, object]]]:
    r = run_cli("verify", str(path), "--json")
    return r.code, r.json["findings"]


@pytest.mark.parametrize("case", sorted(TWICE))
def test_an_exported_entry_giving_a_key_twice_is_refused(case: str, ledger_dir: Path,
                                                         tmp_path: Path) -> None:
    export = _ledger(tmp_path)
    lines = export.read_bytes().splitlines()
    honest, planted = TWICE[case]
    assert lines[1].count(honest) == 1
    lines[1] = lines[1].replace(honest, planted)
    assert orjson.loads(lines[1]) == orjson.loads(export.read_bytes().splitlines()[1])
    bad = tmp_path / "twice.jsonl"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    code, findings = _verify(bad)
    assert code == 1
    assert any(f["check"] == "format" and f["seq"] == 1 and "appears twice" in str(f["message"])
               for f in findings), findings
    assert iv.verify(iv.read_export(bad))  # the independent verifier refuses it too
    assert not iv.verify(iv.read_export(export)) and _verify(export)[0] == 0


@pytest.mark.parametrize("spelling", [b"1.0", b"1e0", b"1E0", b"10e-1"])
def test_an_exported_seq_must_be_written_as_an_integer(spelling: bytes, ledger_dir: Path,
                                                       tmp_path: Path) -> None:
    export = _ledger(tmp_path)
    lines = export.read_bytes().splitlines()
    entry = lines[1].index(b'"entry":')
    at = lines[1].index(b'"seq":1', entry)
    lines[1] = lines[1][:at] + b'"seq":' + spelling + lines[1][at + len(b'"seq":1'):]
    bad = tmp_path / "float.jsonl"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    code, findings = _verify(bad)
    assert code == 1
    assert any(f["check"] == "format" and "not JSON integers" in str(f["message"])
               for f in findings), findings
    assert iv.verify(iv.read_export(bad))


def test_a_stored_entry_giving_a_key_twice_is_refused_though_validly_signed(
        ledger_dir: Path, tmp_path: Path) -> None:
    """A co-signer writes bytes whose repeated key hides another kind from a first-wins
    reader; the digest is of those very bytes and the signature is good."""
    _ledger(tmp_path)
    db = ledger_dir / ".logbook" / "ledger.db"
    attacker = Attacker(db)
    raw = attacker.row(2).raw
    forged = raw.replace(b'"kind":"note"', b'"kind":"plan","kind":"note"')
    assert forged != raw and orjson.loads(forged) == orjson.loads(raw)
    key = read_private(tmp_path / "home" / "config" / "logbook" / "keys" / "default.key")
    digest = hashlib.sha256(forged).digest()
    signature = base64.b64encode(key.sign(b"logbook.entry.v1\n" + digest)).decode()
    attacker.put(Row(2, digest.hex(), forged, signature))
    attacker.close()
    r = run_cli("verify", "--json")
    assert r.code == 1
    assert any(f["check"] == "format" and f["seq"] == 2 and "appears twice" in f["message"]
               for f in r.json["findings"]), r.json["findings"]
    assert iv.verify(iv.read_db(db))
