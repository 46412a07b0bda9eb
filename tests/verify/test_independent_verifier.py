"""The independent verifier (written from docs/format.md alone) against real ledgers.

It must accept every honest ledger the product builds (several shapes), reject every tampered
export and entries table of the tamper suite, and agree with `logbook verify` on whether a
randomly damaged export verifies.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import independent_verifier as iv
import orjson
import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import CliResult, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tamper import (  # the fixtures are reused: one scenario ledger for this module too
    DB_ATTACKS,
    EXPORT_ATTACKS,
    NONCONFORMING,
    Attacker,
    Expect,
    Scenario,
    assert_verified,
    db,
    export_lines,
    nonconforming_export,
    ok,
    parse_line,
    read_private,
    resigned_export,
    scenario,
    sign_envelope,
    verify_db,
    verify_file,
    write_lines,
)

__all__ = ["db", "export_lines", "scenario"]  # fixtures, imported for pytest

# Attacks on derived tables only: the format spec does not define those tables (section 7
# names them; section 8 is informative), so an entries-only verifier cannot and must not see
# them. Every other attack changes the entries and must be caught.
DERIVED_ONLY = {name for name in DB_ATTACKS if name.startswith("derived-")}


def assert_named(findings: list[dict[str, Any]], expected: list[Expect]) -> None:
    assert findings, "the independent verifier accepted a tampered ledger"
    for f in findings:
        assert set(f) == {"check", "severity", "message", "seq", "entries"}, f
    for e in expected:
        assert any(e.matches(f) for f in findings), (e, findings)


# --- honest ledgers of several shapes -------------------------------------------------------


def test_scenario_ledger_verifies(scenario: Scenario) -> None:
    assert iv.verify_export(scenario.export) == []
    assert iv.verify_db(scenario.db) == []
    assert iv.verify_export(scenario.export, scenario.fp_a) == []
    assert iv.verify_db(scenario.db, str(scenario.pub_a)) == []
    assert [f["check"] for f in iv.verify_db(scenario.db, scenario.fp_b)] == ["trust"]
    assert len(iv.read_export(scenario.export)) == scenario.size


def test_genesis_only_ledger_verifies(ledger_dir: Path, tmp_path: Path) -> None:
    ok(run_cli("export", "--out", str(tmp_path / "e.jsonl")))
    assert iv.verify_export(tmp_path / "e.jsonl") == []
    assert iv.verify_db(ledger_dir / ".logbook" / "ledger.db") == []


def merkle_root(digests: list[str]) -> str:
    """RFC 9162 root over the entries' raw digests, for a claim's ledger_root."""
    from logbook.tlog import merkle

    return merkle.root_hash([bytes.fromhex(d) for d in digests]).hex()


def appended(r: CliResult) -> list[dict[str, Any]]:
    ok(r)
    value = r.json
    return value if isinstance(value, list) else [value]


def build_varied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Exploratory runs, odd numbers and text, a plan with amendment, band, claim, retractions,
    and a key rotation that ends with the genesis key revoked and a third key signing."""
    fp_a = ok(run_cli("init", ".", "--name", "varied", "--json")).json["fingerprint"]
    odd = run_body(None, None, n_items=8, missing=2)
    odd["outcomes"]["score"][2:] = [0.1, 0.30000000000000004, 1e-7, 5e-324, 1e21, -0.0]
    odd["outcomes"]["extra"] = {"latency": [123456789.125, 2.5e-8, 1.0, 0.5, 3.0, 7.0,
                                            1e300, 4.35]}
    odd["note"] = "caf\u00e9 \u2028 \U0001f600 \"quoted\" \\ tab\t nul\u0000 end"
    explore = [draft("run", run_body(None, None, n_items=10, seed=i)) for i in range(3)]
    runs0 = appended(run_cli("append", str(write_jsonl(tmp_path / "x.jsonl",
                                                      [*explore, draft("run", odd)])),
                             "--jsonl", "--json"))
    plan = write_json(tmp_path / "p.json", plan_body("shape-plan", runs_per_arm=2, n_items=12))
    ok(run_cli("plan", str(plan)))
    runs = appended(run_cli("append", str(write_jsonl(tmp_path / "r.jsonl", [
        draft("run", run_body("shape-plan", arm, n_items=12, seed=s, missing=4))
        for s, arm in enumerate(["f16", "q8", "f16", "q8"])] + [
        draft("run", run_body("shape-plan", "q8", n_items=12, status="aborted"))])),
        "--jsonl", "--json"))
    ok(run_cli("amend", "shape-plan", "--set", "suite.n_items=13", "--reason", "one more"))
    digests = [r["digest"] for r in runs[:4]]
    band = {"selector": "m-7b/suite", "evaluator_config_hash": None, "k": 4, "mean": 0.7,
            "sd": 0.05, "band": 0.1, "z": 1.96, "runs": digests}
    ok(run_cli("append", str(write_json(tmp_path / "b.json", draft("band", band)))))
    log = ok(run_cli("log", "--json")).json
    claim = {"statement": "q8 is no worse", "plan": "shape-plan", "arm": ["f16", "q8"],
             "value": -0.01, "interval": [-0.04, 0.02], "runs": digests,
             "ledger_size": len(log), "ledger_root": merkle_root([e["digest"] for e in log]),
             "figure": "effect", "method": "paired_bootstrap"}
    ok(run_cli("append", str(write_json(tmp_path / "c.json", draft("claim", claim)))))
    note = appended(run_cli("note", "\u6ce8\u610f: see runs", "--ref", runs0[0]["digest"],
                            "--ref", digests[1], "--json"))[0]
    ok(run_cli("retract", note["digest"], "--reason", "typo", "--category", "other"))
    ok(run_cli("retract", digests[0], "--reason", "harness", "--category", "harness_defect",
               "--correction", "rerun"))
    keys: dict[str, Path] = {}
    for name in ("b", "c"):
        keys[name] = tmp_path / f"{name}.key"
        ok(run_cli("keys", "new", "--out", str(keys[name])))
        monkeypatch.setenv("LOGBOOK_KEY", str(keys[name]))
        ok(run_cli("keys", "export", "--out", str(tmp_path / f"{name}.pub")))
        monkeypatch.delenv("LOGBOOK_KEY")
    ok(run_cli("keys", "add", str(tmp_path / "b.pub"), "--name", "b", "--reason", "rotation"))
    monkeypatch.setenv("LOGBOOK_KEY", str(keys["b"]))
    ok(run_cli("keys", "add", str(tmp_path / "c.pub"), "--name", "c", "--reason", "rotation"))
    ok(run_cli("keys", "revoke", fp_a, "--reason", "genesis key retired"))
    monkeypatch.setenv("LOGBOOK_KEY", str(keys["c"]))
    ok(run_cli("keys", "revoke", str(tmp_path / "b.pub"), "--reason", "b retired"))
    ok(run_cli("note", "signed by c, after a and b were revoked"))
    export = tmp_path / "varied.jsonl"
    ok(run_cli("export", "--out", str(export)))
    return {"fp_a": fp_a, "export": export, "db": Path(".logbook/ledger.db").resolve()}


def test_varied_ledger_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shape = build_varied(tmp_path, monkeypatch)
    assert_verified(run_cli("verify", "--json", "--trust", shape["fp_a"]))
    assert_verified(verify_file(shape["export"], "--trust", shape["fp_a"]))
    assert iv.verify_export(shape["export"], shape["fp_a"]) == []
    assert iv.verify_db(shape["db"], shape["fp_a"]) == []
    kinds = {parse_line(line)["entry"]["kind"] for line in
             shape["export"].read_bytes().splitlines()}
    assert kinds == {"genesis", "run", "plan", "amendment", "band", "claim", "note",
                     "retraction", "key"}


def test_varied_ledger_refuses_the_revoked_genesis_key(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # after the rotation A itself is revoked: an entry A signs now must fail in both verifiers
    shape = build_varied(tmp_path, monkeypatch)
    lines = shape["export"].read_bytes().splitlines()
    last = parse_line(lines[-1])
    env = {**last["entry"], "seq": last["seq"] + 1, "prev": last["digest"], "kind": "note",
           "signer": shape["fp_a"], "body": {"text": "A is back", "refs": []}}
    forged = sign_envelope(env, read_private(tmp_path / "home" / "config" / "logbook" / "keys"
                                             / "default.key"))
    lines.append(orjson.dumps({"seq": forged.seq, "digest": forged.digest,
                               "signature": forged.signature, "entry": env}))
    path = write_lines(tmp_path / "forged.jsonl", lines)
    expected = [Expect(forged.seq, frozenset({"signer"}), (forged.digest,), "revoked")]
    assert_named(iv.verify_export(path), expected)
    r = verify_file(path)
    assert r.code == 1 and any(e.matches(f) for e in expected for f in r.json["findings"])


# --- tampered exports and entries tables -------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPORT_ATTACKS))
def test_rejects_tampered_export(name: str, export_lines: list[bytes], scenario: Scenario,
                                 tmp_path: Path) -> None:
    assert iv.verify_export(scenario.export) == []  # the untouched export passes first
    expected = EXPORT_ATTACKS[name](export_lines, scenario)
    path = write_lines(tmp_path / "tampered.jsonl", export_lines)
    findings = iv.verify_export(path)
    assert_named(findings, expected)
    # the product agrees that something is wrong, about the same first entry
    r = verify_file(path)
    assert r.code == 1
    assert min(f["seq"] for f in findings) == min(
        f["seq"] for f in r.json["findings"] if f["seq"] is not None)


@pytest.mark.parametrize("name", sorted(DB_ATTACKS))
def test_entries_table_attacks(name: str, db: Path, scenario: Scenario) -> None:
    assert iv.verify_db(db) == []
    attacker = Attacker(db)
    expected = DB_ATTACKS[name](attacker, scenario)
    attacker.close()
    findings = iv.verify_db(db)
    if name in DERIVED_ONLY:
        assert findings == [], findings  # entries untouched: nothing for this verifier to see
        assert verify_db(db).code == 1  # while the product's derived check does
    else:
        assert_named(findings, expected)


def test_resigned_export_needs_trust(export_lines: list[bytes], scenario: Scenario,
                                     tmp_path: Path) -> None:
    lines, fp_m = resigned_export(export_lines)
    path = write_lines(tmp_path / "resigned.jsonl", lines)
    assert iv.verify_export(path) == []
    assert iv.verify_export(path, fp_m) == []
    assert [f["check"] for f in iv.verify_export(path, scenario.fp_a)] == ["trust"]
    assert [f["check"] for f in iv.verify_export(path, str(scenario.pub_a))] == ["trust"]


def test_resigned_export_listing_the_trusted_key_fails_trust(export_lines: list[bytes],
                                                             scenario: Scenario,
                                                             tmp_path: Path) -> None:
    # STRICTER than section 7 step 3.4 (see independent_verifier.py): the product passes this
    lines, _ = resigned_export(export_lines, keep_genesis_keys=True)
    path = write_lines(tmp_path / "resigned.jsonl", lines)
    assert [f["check"] for f in iv.verify_export(path, scenario.fp_a)] == ["trust"]


def test_empty_inputs_fail(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert [f["check"] for f in iv.verify_export(tmp_path / "empty.jsonl")] == ["empty"]
    (tmp_path / "blank.jsonl").write_bytes(b"\n \n")
    assert [f["check"] for f in iv.verify_export(tmp_path / "blank.jsonl")] == ["empty"]


def test_empty_entries_table_fails(db: Path) -> None:
    a = Attacker(db)
    a.sql("DELETE FROM entries")
    a.close()
    assert [f["check"] for f in iv.verify_db(db)] == ["empty"]


@pytest.mark.parametrize("change", NONCONFORMING)
def test_strict_where_the_spec_is_strict(change: str, export_lines: list[bytes],
                                         scenario: Scenario, tmp_path: Path) -> None:
    """Entries signed correctly with the ledger's own key that break section 1 (v is the
    integer 1, seq an integer, no field beyond the eight): only format checks can see them."""
    path = write_lines(tmp_path / "strict.jsonl", nonconforming_export(export_lines, scenario,
                                                                       change))
    assert {f["check"] for f in iv.verify_export(path)} & {"format", "seq"}, change


# --- differential: random damage to an export ---------------------------------------------


def _same_meaning(a: bytes, b: bytes) -> bool:
    """Whether two export lines say the same thing (same canonical entry, claims, signature)."""
    try:
        ra, rb = orjson.loads(a), orjson.loads(b)
        return bool(iv.rfc8785.dumps(ra["entry"]) == iv.rfc8785.dumps(rb["entry"])
                    and ra["seq"] == rb["seq"] and type(rb["seq"]) is int
                    and ra["digest"] == rb["digest"] and set(ra) == set(rb)
                    and base64.b64decode(ra["signature"]) == base64.b64decode(
                        rb["signature"], validate=True))
    except Exception:  # any unreadable line changes the meaning
        return False


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_byte_damage_agrees_with_product(scenario: Scenario,
                                                data: st.DataObject) -> None:
    lines = scenario.export.read_bytes().splitlines()
    i = data.draw(st.integers(0, len(lines) - 1), label="line")
    line = bytearray(lines[i])
    offset = data.draw(st.integers(0, len(line) - 1), label="offset")
    line[offset] = data.draw(st.integers(0x20, 0x7e).filter(lambda c: c != line[offset]),
                             label="byte")
    harmless = _same_meaning(lines[i], bytes(line))
    lines[i] = bytes(line)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_lines(Path(tmp) / "damaged.jsonl", lines)
        mine = iv.verify_export(path)
        r = verify_file(path)
    assert r.code in (0, 1), r.err[-600:]
    assert (mine == []) == harmless, (mine, harmless)
    assert (r.code == 0) == harmless, (r.json, harmless)


def test_signature_encoding_is_checked_by_bytes(export_lines: list[bytes], scenario: Scenario,
                                                tmp_path: Path) -> None:
    # base64 of 64 bytes ends in "==" and its last character carries 4 unused bits: changing
    # only those bits leaves the signature bytes unchanged; both verifiers look at the bytes.
    row = parse_line(export_lines[3])
    sig = row["signature"]
    assert sig.endswith("==")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet.index(sig[-3])
    row["signature"] = sig[:-3] + alphabet[last ^ 0x01] + "=="
    assert base64.b64decode(row["signature"]) == base64.b64decode(sig)
    export_lines[3] = orjson.dumps(row)
    path = write_lines(tmp_path / "b64.jsonl", export_lines)
    assert iv.verify_export(path) == []
    assert verify_file(path).code == 0


def test_verifier_runs_without_logbook(scenario: Scenario) -> None:
    """Independence, checked: in a fresh interpreter where `import logbook` fails, the
    verifier still accepts the honest export and rejects a damaged one."""
    code = (
        "import sys; sys.modules['logbook'] = None\n"
        f"sys.path.insert(0, {str(Path(iv.__file__).parent)!r})\n"
        "import independent_verifier as iv, pathlib\n"
        f"p = pathlib.Path({str(scenario.export)!r})\n"
        "assert iv.verify_export(p) == []\n"
        "q = p.with_name('cut.jsonl')\n"
        "q.write_bytes(b''.join(p.read_bytes().splitlines(True)[1:]))\n"
        "assert iv.verify_export(q)\n"
        "assert not [m for m in sys.modules if m.startswith('logbook.')]\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
