"""`logbook export --sqlite FILE`: the demo ledger as a flat database, checked with sqlite-utils
against what `report` and `log` say (issue 21, item 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from conftest import run_cli

PLAN = "kv-q8-vs-f16"


def ok(*args: str) -> Any:
    r = run_cli(*args)
    assert r.code == 0, (args, r.err)
    return r


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "demo"
    ok("demo", "--dir", str(folder))
    monkeypatch.setenv("LOGBOOK_KEY", str(folder / "demo.key"))  # the demo's own key signs
    (tmp_path / "out").mkdir()
    return folder


def test_the_export_holds_what_the_report_says(demo: Path, tmp_path: Path) -> None:
    report = ok("--ledger", str(demo), "report", PLAN, "--json").json
    first = report["arms"][0]["runs"][0]["digest"]
    ok("--ledger", str(demo), "retract", first, "--reason", "wrong prompt template",
       "--category", "harness_defect")
    report = ok("--ledger", str(demo), "report", PLAN, "--json").json
    out = tmp_path / "out" / "flat.db"
    r = ok("--ledger", str(demo), "export", "--sqlite", str(out))
    assert f"to {out}" in r.err and r.out == ""
    db = sqlite_utils.Database(out)
    assert {"entries", "plans", "runs", "items", "claims", "retractions", "notes",
            "findings"} <= set(db.table_names())
    assert {"arm_scores", "unfinished_runs", "retracted_runs", "failed_items"} <= \
        set(db.view_names())
    log = ok("--ledger", str(demo), "log", "--json").json
    assert db.table("entries").count == len(log)
    assert list(db.query("PRAGMA foreign_key_check")) == []

    runs = {row["digest"]: row for row in db.table("runs").rows}
    for arm in report["arms"]:
        for row in arm["runs"]:
            flat = runs[row["digest"]]
            assert (flat["plan_slug"], flat["arm"], flat["status"]) == \
                (PLAN, arm["name"], row["status"])
            assert flat["retracted"] == int(row["retracted"])
            if row["status"] == "completed":
                assert flat["score"] == pytest.approx(row["score"], abs=1e-12)
                assert flat["missing"] == row["missing"]
            else:  # a failed run: its reason, never a score
                assert flat["score"] is None and flat["reason"] == row["reason"]
    assert runs[first]["retracted"] == 1
    assert [r["digest"] for r in db.query("SELECT digest FROM retracted_runs")] == [first]
    unfinished = list(db.query("SELECT status, reason FROM unfinished_runs"))
    assert unfinished and all(u["status"] != "completed" and u["reason"] for u in unfinished)
    plan = next(iter(db.table("plans").rows))
    assert (plan["slug"], plan["verdict"]) == (PLAN, report["verdict"]["status"])
    items = db.table("items").count
    assert items == sum(row["items"] or 0 for row in runs.values())
    assert [n["text"] for n in db.table("notes").search("crashed")]  # full-text search
    assert [r["reason"] for r in db.table("retractions").search("template")] == \
        ["wrong prompt template"]
    r = run_cli("--ledger", str(demo), "audit", "--json")  # exit 1: the retraction of one
    assert r.code in (0, 1), r.err  # of f16's runs while its others count is A22's error
    audit = r.json
    assert db.table("findings").count == len(audit["findings"])


def test_the_export_replaces_only_an_earlier_export(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "flat.db"
    ok("--ledger", str(demo), "export", "--sqlite", str(out))
    ok("--ledger", str(demo), "export", "--sqlite", str(out))  # an export: replaced
    ledger_db = demo / ".logbook" / "ledger.db"
    before = ledger_db.read_bytes()
    r = run_cli("--ledger", str(demo), "export", "--sqlite", str(ledger_db))
    assert r.code == 2 and "not a logbook export" in r.err
    assert ledger_db.read_bytes() == before
    other = tmp_path / "out" / "notes.txt"
    other.write_text("mine")
    assert run_cli("--ledger", str(demo), "export", "--sqlite", str(other)).code == 2
    assert other.read_text() == "mine"
    r = run_cli("--ledger", str(demo), "export", "--sqlite", str(out), "--out", "x.jsonl")
    assert r.code == 2 and "--sqlite" in r.err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["flat.db", "notes.txt"]


def test_a_ledger_that_does_not_verify_is_not_exported(demo: Path, tmp_path: Path) -> None:
    from test_analysis_verifies import BANNER, bytes_only

    bytes_only(demo)
    out = tmp_path / "out" / "flat.db"
    r = run_cli("--ledger", str(demo), "export", "--sqlite", str(out))
    assert r.code == 1 and BANNER in r.err
    assert not out.exists()


def test_the_docs_name_every_table_and_view() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "reporting.md").read_text()
    section = doc.split("## A flat database for SQL and datasette", 1)[1]
    from logbook.storage.flat import VIEWS

    for name in [*VIEWS, "plans", "runs", "items", "claims", "retractions", "notes",
                 "findings", "entries"]:
        assert f"`{name}`" in section, name


@pytest.mark.parametrize("value", [
    None, "", "é ≠ e", 0, -3, 2**62, 0.5, float("inf"), True, False, b"\x00\xff",
    {"a": [1, 2.5, None], "é": {"b": "c"}}, [1, "two", [3]], (1, "x"), [], {},
])
def test_a_cell_is_stored_as_sqlite_utils_would(value: Any) -> None:
    """The export writes its rows with one statement, not through sqlite-utils' insert_all:
    each value is held to sqlite-utils' own conversion (a dict, list or tuple as its JSON
    text, anything else as it is), so an export reads as it did when sqlite-utils wrote it."""
    from sqlite_utils.db import jsonify_if_needed

    from logbook.storage.flat import _cell

    assert _cell(value) == jsonify_if_needed(value)
    assert type(_cell(value)) is type(jsonify_if_needed(value))


def test_a_run_of_many_items_is_exported_row_by_row(demo: Path, tmp_path: Path) -> None:
    """Every item row of every run, counted as written (the counts the command prints are the
    rows the file holds)."""
    out = tmp_path / "out" / "flat.db"
    r = ok("--ledger", str(demo), "export", "--sqlite", str(out))
    db = sqlite_utils.Database(out)
    for name in ("entries", "plans", "runs", "items", "claims", "findings"):
        assert f"{db.table(name).count} {name}" in r.err, (name, r.err)
    items = sum(row["items"] or 0 for row in db.query("SELECT items FROM runs"))
    assert db.table("items").count == items > 0
