"""Figures on the web pages that agree with the report (issue 37 item 5): a plan's default
alpha is shown as the value the analysis uses (0.05), not "None"; a run scored in epochs
counts its items as `missing` counts them, its outcome rows named apart as records; a
finding that lays its fields out as a table (A06) is shown as a table, not one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import served
from builders import plan_body, run_body, write_json
from conftest import run_cli
from served import get

FIXTURES = Path(__file__).parents[1] / "fixtures"
server = served.server


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("figures")
    folder = base / "ledger"
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(base / "config"))
    mp.chdir(base)
    try:
        folder.mkdir()
        assert run_cli("init", str(folder), "--name", "figures").code == 0
        mp.setenv("LOGBOOK_DIR", str(folder))
        body = plan_body("pp")
        assert "alpha" not in body  # the plan leaves alpha to its default
        assert run_cli("plan", str(write_json(base / "pp.json", body))).code == 0
        r = run_cli("append", "--from", "inspect", str(FIXTURES / "inspect/run-main"))
        assert r.code == 0, r.err
        run = int(r.out.split()[0])
        for arm, build in (("f16", "b1234"), ("q8", "b9999")):  # A06: the builds differ
            body = run_body("pp", arm, seed=len(build))
            body["apparatus"]["engine_build"] = build
            path = write_json(base / f"{arm}.json", {"kind": "run", "body": body})
            assert run_cli("append", str(path)).code == 0
        yield {"folder": folder, "run": run}
    finally:
        mp.undo()


def test_the_default_alpha_is_shown_as_its_value(server: str) -> None:
    status, page, _ = get(f"{server}/plans/pp")
    assert status == 200 and "alpha 0.05;" in page and "alpha None" not in page


def test_a_run_in_epochs_counts_items_as_missing_does(server: str,
                                                     planted: dict[str, Any]) -> None:
    status, d, _ = get(f"{server}/runs/@{planted['run']}.json")
    assert status == 200
    run = d["run"]
    assert (run["items"], run["records"], run["missing"]) == (200, 400, 0)
    _, page, _ = get(f"{server}/runs/@{planted['run']}")
    assert "200 (400 records: samples or epochs)" in page


def test_a_findings_table_is_a_table(server: str) -> None:
    status, d, _ = get(f"{server}/audit.json")
    assert status == 200
    (a06,) = [f for f in d["audit"]["findings"] if f["check"] == "A06"]
    assert "\n  field" in a06["message"]  # the audit prints its fields as a table
    for page in ("/audit", "/plans/pp"):
        _, html, _ = get(f"{server}{page}")
        assert '<table class="finding-table">' in html, page
        assert "<td>engine_build</td><td>&#x27;b1234&#x27;</td><td>&#x27;b9999&#x27;</td>" in html


def test_findings_are_counted_per_plan_as_audit_plan_counts_them(
        server: str, planted: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_DIR", str(planted["folder"]))
    r = run_cli("audit", "--plan", "pp", "--json")
    assert r.code in (0, 1), r.err
    expected = r.json["findings"]
    assert len(expected) >= 2  # A06 and more: a count of one would not tell
    status, d, _ = get(f"{server}/plans.json")
    assert status == 200
    (pp,) = [p for p in d["plans"] if p["slug"] == "pp"]
    assert pp["findings"] == len(expected)
    _, plan, _ = get(f"{server}/plans/pp.json")
    assert sorted((f["check"], f["message"]) for f in plan["report"]["findings"]) == \
        sorted((f["check"], f["message"]) for f in expected)
