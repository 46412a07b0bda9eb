"""`logbook keys list | new | add | revoke | export`, and what verify makes of them (issue 3)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli


def test_key_lifecycle(ledger_dir: Path, tmp_path: Path, monkeypatch) -> None:
    mine = run_cli("keys", "export")
    assert mine.code == 0 and mine.out.startswith("logbook-ed25519-public-key-v1")
    fp_a = next(ln for ln in mine.out.splitlines() if ln.startswith("# fingerprint:")).split()[-1]
    # a second key for a colleague's machine
    r = run_cli("keys", "new", "--out", str(tmp_path / "b.key"))
    assert r.code == 0
    fp_b = r.out.strip()
    assert run_cli("keys", "new", "--out", str(tmp_path / "b.key")).code == 2  # never overwritten
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "b.key"))
    pub_b = tmp_path / "b.pub"
    assert run_cli("keys", "export", "--out", str(pub_b)).code == 0
    # B cannot sign until a valid key adds it
    r = run_cli("note", "from b")
    assert r.code == 3 and "not a valid key" in r.err
    monkeypatch.delenv("LOGBOOK_KEY")
    r = run_cli("keys", "add", str(pub_b), "--name", "colleague", "--reason", "second machine")
    assert r.code == 0, r.err
    assert run_cli("keys", "add", str(pub_b), "--name", "x", "--reason", "again").code == 2
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "b.key"))
    assert run_cli("note", "from b").code == 0
    monkeypatch.delenv("LOGBOOK_KEY")
    listed = run_cli("keys", "list", "--json").json
    assert {k["fingerprint"] for k in listed} == {fp_a, fp_b}
    r = run_cli("keys", "revoke", fp_b, "--reason", "laptop lost")
    assert r.code == 0, r.err
    listed = {k["fingerprint"]: k for k in run_cli("keys", "list", "--json").json}
    assert listed[fp_b]["valid"] is False and listed[fp_a]["valid"] is True
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "b.key"))
    r = run_cli("note", "after revocation")
    assert r.code == 3
    monkeypatch.delenv("LOGBOOK_KEY")
    # the ledger verifies, with either form of --trust for the genesis key
    assert run_cli("verify", "--trust", fp_a).code == 0
    a_pub = tmp_path / "a.pub"
    a_pub.write_text(mine.out)
    assert run_cli("verify", "--trust", str(a_pub)).code == 0
    r = run_cli("verify", "--trust", fp_b, "--json")
    assert r.code == 1 and r.json["findings"][0]["check"] == "trust"
    # exported public key of a ledger key, by fingerprint
    r = run_cli("keys", "export", fp_b)
    assert r.code == 0 and "colleague" in r.out


def test_trust_refuses_a_private_key_file(ledger_dir: Path, tmp_path: Path) -> None:
    run_cli("keys", "new", "--out", str(tmp_path / "c.key"))
    r = run_cli("verify", "--trust", str(tmp_path / "c.key"))
    assert r.code == 2 and "private key" in r.err
    r = run_cli("verify", "--trust", "not-a-key")
    assert r.code == 2


def test_verify_needs_no_private_key(ledger_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "absent.key"))
    assert run_cli("verify").code == 0
    assert run_cli("log").code == 0
    r = run_cli("verify", "--json")
    assert r.json["ok"] is True and r.json["entries"] == 1


def test_verify_missing_ledger_is_never_verified(tmp_path: Path) -> None:
    r = run_cli("verify")
    assert r.code == 3
