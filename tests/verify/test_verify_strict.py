"""`verify --strict`: what only a key holder could get wrong is caught on request — stored bytes
that are not RFC 8785 canonical, and bodies the models refuse."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
from pathlib import Path

from conftest import run_cli


def _append_signed_by_the_ledger_key(ledger_dir: Path, body: dict, raw_of) -> None:
    """What a key holder bypassing `logbook append` could write: a correctly chained and signed
    entry, then `logbook reindex` so that the derived tables agree with it."""
    from logbook.crypto.signing import SigningKey, default_key_path

    key = SigningKey.read(default_key_path())
    db = ledger_dir / ".logbook" / "ledger.db"
    conn = sqlite3.connect(db)
    seq, prev = conn.execute("SELECT seq, digest FROM entries ORDER BY seq DESC LIMIT 1").fetchone()
    genesis = json.loads(conn.execute("SELECT entry FROM entries WHERE seq = 0").fetchone()[0])
    env = {"v": 1, "ledger": genesis["ledger"], "seq": seq + 1, "prev": prev,
           "ts": "2026-11-29T20:00:00.000000Z", "kind": "note",
           "signer": key.public.fingerprint, "body": body}
    raw = raw_of(env)
    digest = hashlib.sha256(raw).digest()
    sig = base64.b64encode(key.sign(b"logbook.entry.v1\n" + digest)).decode()
    conn.execute("INSERT INTO entries (seq, digest, entry, signature) VALUES (?,?,?,?)",
                 (seq + 1, digest.hex(), raw, sig))
    conn.commit()
    conn.close()
    assert run_cli("reindex").code == 0


def test_non_canonical_bytes_are_caught_by_strict(ledger_dir: Path) -> None:
    run_cli("note", "an honest note")
    assert run_cli("verify", "--strict").code == 0
    _append_signed_by_the_ledger_key(
        ledger_dir, {"text": "spaced out", "refs": []},
        lambda env: json.dumps(env, indent=1, sort_keys=True).encode())
    assert run_cli("verify").code == 0  # chain and signature hold
    r = run_cli("verify", "--strict", "--json")
    assert r.code == 1
    assert [f["check"] for f in r.json["findings"]] == ["canonical"]
    assert r.json["findings"][0]["seq"] == 2


def test_a_body_the_models_refuse_is_caught_by_strict(ledger_dir: Path, tmp_path: Path) -> None:
    import rfc8785

    _append_signed_by_the_ledger_key(ledger_dir, {"text": "x", "refs": [], "mood": "sly"},
                                     rfc8785.dumps)
    assert run_cli("verify").code == 0
    r = run_cli("verify", "--strict", "--json")
    assert r.code == 1
    finding = r.json["findings"][0]
    assert finding["check"] == "schema" and "body.mood" in finding["message"]
    out = tmp_path / "export.jsonl"
    assert run_cli("export", "--out", str(out)).code == 0
    assert run_cli("verify", str(out)).code == 0
    r = run_cli("verify", str(out), "--strict", "--json")
    assert r.code == 1 and r.json["findings"][0]["check"] == "schema"
    assert os.path.exists(out)
