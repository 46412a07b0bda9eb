"""What runs used, summed (issue 36, item 7): `report` per arm and for the plan against a hand
computation (failed and retracted runs counted, two currencies never added, runs recording
none counted), its JSON held to schemas/report.json; `brief` comparing an open plan's budget
with what its runs spent, under and over, and a budget amended."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli

SCHEMAS = Path(__file__).parents[2] / "schemas"
BUDGET = {"amount": 1.0, "currency": "USD", "tokens": 10_000, "wall_hours": 1}


def _append(body: dict[str, Any]) -> dict[str, Any]:
    r = run_cli("append", str(write_json(Path("d.json"), draft("run", body))), "--json")
    assert r.code == 0, r.err
    return dict(r.json)


def _plan(budget: Any = BUDGET) -> str:
    extra = {"budget": budget} if budget is not None else {}
    r = run_cli("plan", str(write_json(Path("p.json"), plan_body("kv", **extra))), "--json")
    assert r.code == 0, r.err
    return str(r.json["digest"])


def _scenario() -> dict[str, Any]:
    """Five runs of plan kv: two of f16, three of q8 (one failed, one retracted that records
    nothing), costs in USD and one in EUR."""
    plan = _plan()
    seqs = {}
    seqs["f1"] = _append(run_body(plan, "f16", seed=1, usage={
        "tokens_in": 1000, "tokens_out": 200, "wall_seconds": 600,
        "cost": {"amount": 0.30, "currency": "USD"}}))["seq"]
    seqs["f2"] = _append(run_body(plan, "f16", seed=2, usage={
        "tokens_in": 1500, "tokens_out": 250, "cost": {"amount": 0.45, "currency": "USD"}}))["seq"]
    seqs["q1"] = _append(run_body(plan, "q8", seed=3, usage={
        "tokens_in": 900, "wall_seconds": 1200,
        "cost": {"amount": 0.20, "currency": "EUR"}}))["seq"]
    seqs["qf"] = _append(run_body(plan, "q8", status="failed", usage={
        "wall_seconds": 30, "cost": {"amount": 0.10, "currency": "USD"}}))["seq"]
    gone = _append(run_body(plan, "q8", seed=4))
    seqs["qr"] = gone["seq"]
    r = run_cli("retract", gone["digest"], "--reason", "wrong prompt template", "--category",
                "harness_defect")
    assert r.code == 0, r.err
    return seqs


def _report() -> dict[str, Any]:
    r = run_cli("report", "kv", "--json")
    assert r.code == 0, r.err
    return dict(r.json)


def test_report_sums_per_arm_and_plan_as_computed_by_hand(ledger_dir: Path) -> None:
    seqs = _scenario()
    cost = _report()["cost"]
    plan, (f16, q8) = cost["plan"], cost["arms"]
    # by hand: f16 = runs f1, f2; q8 = q1, qf (failed), qr (retracted, no usage)
    assert f16["arm"] == "f16" and q8["arm"] == "q8"
    f, q = f16["usage"], q8["usage"]
    assert (f["runs"], f["unrecorded"], f["failed"], f["retracted"]) == (2, 0, 0, [])
    assert f["tokens_in"] == {"total": 2500, "runs": 2}
    assert f["tokens_out"] == {"total": 450, "runs": 2}
    assert f["wall_seconds"] == {"total": 600, "runs": 1}
    assert [(m["currency"], m["runs"]) for m in f["money"]] == [("USD", 2)]
    assert f["money"][0]["amount"] == pytest.approx(0.75, abs=1e-12)
    assert (q["runs"], q["unrecorded"], q["failed"], q["retracted"]) == (3, 1, 1, [seqs["qr"]])
    assert q["tokens_in"] == {"total": 900, "runs": 1} and q["tokens_out"] is None
    assert q["wall_seconds"] == {"total": 1230, "runs": 2}
    assert [(m["currency"], m["amount"], m["runs"]) for m in q["money"]] == [
        ("EUR", 0.20, 1), ("USD", 0.10, 1)]  # never added together
    assert (plan["runs"], plan["unrecorded"], plan["failed"]) == (5, 1, 1)
    assert plan["tokens_in"] == {"total": 3400, "runs": 3}
    assert plan["tokens_out"] == {"total": 450, "runs": 2}
    assert plan["wall_seconds"] == {"total": 1830, "runs": 3}
    usd = next(m for m in plan["money"] if m["currency"] == "USD")
    assert usd["amount"] == pytest.approx(0.85, abs=1e-12) and usd["runs"] == 3
    money, tokens, hours = cost["budget"]
    assert (money["what"], money["unit"], money["budget"], money["over"]) == (
        "money", "USD", 1.0, False)
    assert money["spent"] == pytest.approx(0.85, abs=1e-12)
    assert money["share"] == pytest.approx(0.85, abs=1e-12)
    assert money["unrecorded"] == 1  # the retracted run records no cost (EUR is besides)
    assert money["besides"] == [{"currency": "EUR", "amount": 0.20, "runs": 1}]
    assert (tokens["spent"], tokens["budget"], tokens["unrecorded"]) == (3850, 10_000, 2)
    assert hours["spent"] == pytest.approx(1830 / 3600) and hours["unrecorded"] == 2
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(_report(), json.loads((SCHEMAS / "report.json").read_text()))


def test_report_text_prints_the_sums_and_the_budget(ledger_dir: Path) -> None:
    seqs = _scenario()
    r = run_cli("report", "kv")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert (f"  cost: 5 runs (1 failed or aborted, retracted @{seqs['qr']}, 1 recorded none): "
            "tokens in 3,400 (3 runs), out 450 (2 runs); wall 30.5 min (3 runs); "
            "0.20 EUR (1 run); 0.85 USD (3 runs)") in lines, r.out
    assert ("    arm f16: 2 runs: tokens in 2,500 (2 runs), out 450 (2 runs); wall 10.0 min "
            "(1 run); 0.75 USD (2 runs)") in lines
    assert ("  budget: spent 0.85 of 1.00 USD (85%); 1 run(s) recorded none; besides "
            "0.20 EUR (not counted against it)") in lines
    assert "  budget: used 3,850 of 10,000 tokens (38%); 2 run(s) recorded none" in lines
    assert "  budget: ran 0.51 of 1.00 wall hours (51%); 2 run(s) recorded none" in lines


def test_a_plan_without_usage_or_budget_says_nothing_of_cost(ledger_dir: Path) -> None:
    plan = _plan(budget=None)
    _append(run_body(plan, "f16", seed=1))
    assert "cost" not in _report()
    assert "cost:" not in run_cli("report", "kv").out
    assert "budget" not in run_cli("brief", "--json").json["open_plans"][0]


def _brief() -> dict[str, Any]:
    r = run_cli("brief", "--json")
    assert r.code == 0, r.err
    return dict(r.json)


def test_brief_compares_the_budget_under_and_over(ledger_dir: Path) -> None:
    _scenario()
    b = _brief()
    (p,) = b["open_plans"]
    money = p["budget"][0]
    assert money["spent"] == pytest.approx(0.85, abs=1e-12) and not money["over"]
    assert not any("budget" in step for step in b["next"])
    text = run_cli("brief").out
    assert ("    budget: spent 0.85 of 1.00 USD (85%); 1 run(s) recorded none; besides 0.20 EUR "
            "(not counted against it)") in text.splitlines()
    # one more run spends past the budget: NEXT says so first
    _append(run_body(p["plan"], "f16", seed=5, usage={"cost": {"amount": 0.20,
                                                               "currency": "USD"}}))
    b = _brief()
    money = b["open_plans"][0]["budget"][0]
    assert money["over"] and money["spent"] == pytest.approx(1.05, abs=1e-12)
    assert b["next"][0].startswith("plan kv is over its budget: spent 1.05 of 1.00 USD (105%), "
                                   "over budget"), b["next"]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(b, json.loads((SCHEMAS / "brief.json").read_text()))
    # the budget is amendable as any plan field: raised, the plan is within it again
    r = run_cli("amend", "kv", "--set", 'budget={"amount": 2, "currency": "USD"}', "--reason",
                "the second model costs more per token")
    assert r.code == 0, r.err
    b = _brief()
    assert [x["what"] for x in b["open_plans"][0]["budget"]] == ["money"]
    assert not b["open_plans"][0]["budget"][0]["over"]
    assert not any("budget" in step for step in b["next"])
    assert _report()["cost"]["budget"][0]["budget"] == 2


def test_a_bad_budget_amendment_changes_nothing(ledger_dir: Path) -> None:
    _plan()
    before = run_cli("export").out
    r = run_cli("amend", "kv", "--set", 'budget={"amount": 2}', "--reason", "more")
    assert r.code == 2, r.err
    assert "budget" in r.err and len(r.err.strip().splitlines()) == 1
    assert run_cli("export").out == before


def test_the_reporting_doc_shows_what_the_report_prints(ledger_dir: Path) -> None:
    """docs/reporting.md's "Cost" example is the report of this module's scenario, line by
    line."""
    _scenario()
    doc = (Path(__file__).parents[2] / "docs" / "reporting.md").read_text()
    section = doc.split("## Cost\n", 1)[1].split("\n## ", 1)[0]
    shown = [line[4:] for line in section.splitlines() if line.startswith("    ")]
    assert len(shown) == 6
    printed = run_cli("report", "kv").out.splitlines()
    for line in shown:
        assert f"  {line}" in printed, (line, printed)


def test_the_html_report_has_the_cost_section(ledger_dir: Path) -> None:
    _scenario()
    r = run_cli("report", "kv", "--html", "kv.html")
    assert r.code == 0, r.err
    page = Path("kv.html").read_text()
    assert "<h2>Cost</h2>" in page
    assert "budget: spent 0.85 of 1.00 USD (85%)" in page
    assert "arm f16: 2 runs: tokens in 2,500 (2 runs)" in page


def test_the_sums_are_the_same_from_the_checked_copy_and_without_it(
        ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first report checks in full and keeps the runs' facts (usage among them); the next
    resumes from them; with no state folder the runs are read from the ledger: one answer."""
    _scenario()
    first, resumed = _report()["cost"], _report()["cost"]
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    assert first == resumed == _report()["cost"]
