"""`logbook audit --selftest` (issue 14 item 7): every rule fires on its violation and stays
quiet on its honest twin, each built in a temporary ledger; exit 0 when all hold."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

from logbook.analysis.audit.registry import rule_ids


def test_selftest_holds_for_every_rule(tmp_path: Path) -> None:
    r = run_cli("audit", "--selftest")  # needs no ledger: nothing touches the user's
    assert r.code == 0, r.out + r.err
    lines = r.out.splitlines()
    assert [ln.split()[0] for ln in lines[1:-1]] == rule_ids()
    assert all(ln.endswith("  ok") for ln in lines[1:-1])
    assert lines[-1] == f"{len(rule_ids())} of {len(rule_ids())} rules hold"
    assert not list(tmp_path.rglob("ledger.db"))  # the scenarios live in temporary folders


def test_selftest_json_names_what_fired_where(tmp_path: Path) -> None:
    r = run_cli("audit", "--selftest", "--only", "A02,A22", "--json")
    assert r.code == 0, r.err
    rows = r.json["rules"]
    assert r.json["ok"] is True and [x["id"] for x in rows] == ["A02", "A22"]
    for x in rows:
        assert x["fired"] and x["quiet"] and x["id"] in x["violation"]
        assert x["id"] not in x["honest"]
    assert run_cli("audit", "--selftest", "--only", "A99").code == 2
