"""Plans with a due date (issue 14 item 8): `due` in the plan, A23 in the audit (info before the
date, warning after), and `brief` listing plans past due without a verdict."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli
from test_audit import append, audit, honest_runs

TOML = """slug = "kv"
title = "Does a q8 KV cache cost accuracy?"
runs_per_arm = 3
variable = ["kv_cache_precision"]
due = {due}
[metric]
name = "acc"
kind = "proportion"
[suite]
name = "suite"
version = "1"
n_items = 100
[[arms]]
name = "f16"
role = "control"
[[arms]]
name = "q8"
role = "treatment"
"""


def plan(tmp: Path, due: str) -> str:
    path = tmp / "plan.toml"
    path.write_text(TOML.format(due=due))
    r = run_cli("plan", str(path), "--json")
    assert r.code == 0, r.err
    assert run_cli("checkpoint").code == 0
    return str(r.json["digest"])


def test_a_plan_past_due_without_a_verdict(ledger_dir: Path, tmp_path: Path) -> None:
    digest = plan(tmp_path, "2020-06-30")  # a TOML date literal
    body = run_cli("show", "kv", "--json").json["entry"]["body"]
    assert body["due"] == "2020-06-30"
    append(tmp_path, honest_runs(digest)[:4])  # two runs per arm of three
    f = next(x for x in audit(code=0)["findings"] if x["check"] == "A23")
    assert f["severity"] == "warning" and f["entries"] == [digest]
    assert f["message"] == ("plan kv was due 2020-06-30 and has no verdict yet (f16 2/3, q8 2/3 "
                            "completed runs): report it, or amend or retract it saying why")
    b = run_cli("brief", "--json").json
    assert b["overdue"] == [{"plan": digest, "slug": "kv", "due": "2020-06-30",
                             "runs_done": 4, "runs_planned": 6}]
    assert any(s.startswith("plan kv was due 2020-06-30 and has no verdict") for s in b["next"])
    assert "past due without a verdict: kv (due 2020-06-30, 4/6 runs)" in run_cli("brief").out
    append(tmp_path, honest_runs(digest, seed=10)[4:], "rest.jsonl")  # the verdict is in
    assert "A23" not in [x["check"] for x in audit()["findings"]]
    assert run_cli("brief", "--json").json["overdue"] == []


def test_a_plan_before_its_due_date_is_information(ledger_dir: Path, tmp_path: Path) -> None:
    digest = plan(tmp_path, '"2999-12-31"')  # a string works as well
    append(tmp_path, honest_runs(digest)[:2])
    f = next(x for x in audit(code=0)["findings"] if x["check"] == "A23")
    assert f["severity"] == "info" and "is due 2999-12-31" in f["message"]
    assert run_cli("brief", "--json").json["overdue"] == []


def test_a_due_date_that_is_not_a_date_is_refused(ledger_dir: Path, tmp_path: Path) -> None:
    for bad in ('"2026-13-01"', '"next week"', "2026-12-01T10:00:00Z"):
        path = tmp_path / "bad.toml"
        path.write_text(TOML.format(due=bad))
        r = run_cli("plan", str(path))
        assert r.code == 2, (bad, r.err)
        assert "due" in r.err and "RFC 3339 date" in r.err and len(r.err.splitlines()) == 1
    assert run_cli("log", "--kind", "plan", "--json").json == []  # nothing written
