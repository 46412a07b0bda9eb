"""A scripted agent over three sessions, through the public commands (issue 9)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import plan_body, write_json, write_jsonl
from conftest import run_cli
from test_report import _run_with_score


def _brief() -> dict[str, Any]:
    r = run_cli("brief", "--json")
    assert r.code == 0, r.err
    return r.json


def _append(tmp: Path, name: str, drafts: list[dict[str, Any]]) -> list[str]:
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / name, drafts)), "--json")
    assert r.code == 0, r.err
    rows = r.json if isinstance(r.json, list) else [r.json]
    return [row["digest"] for row in rows]


def _run(plan: str, arm: str, score: float, seed: int, session: str) -> dict[str, Any]:
    d = _run_with_score(plan, arm, score, 200, seed, session=session)
    d["body"]["apparatus"]["engine_build"] = "b1"  # one pipeline for both arms
    d["body"]["apparatus"]["kv_cache_precision"] = arm
    return d


def test_three_sessions(ledger_dir: Path, tmp_path: Path) -> None:
    # -- session 1: nothing to do yet; plan, two runs, then a crash mid-plan --------------
    b = _brief()
    assert b["open_plans"] == [] and b["retractions"] == []
    assert "plan" in b["next"][-1]
    plan_file = write_json(tmp_path / "plan.json", plan_body(
        slug="kv-three", runs_per_arm=3, n_items=200, arms=("base", "new")))
    r = run_cli("plan", str(plan_file), "--json")
    assert r.code == 0, r.err
    plan = r.json["digest"]
    assert run_cli("checkpoint").code == 0
    _append(tmp_path, "s1.jsonl", [_run(plan, "base", 0.70, 1, "s1"),
                                   _run(plan, "new", 0.71, 2, "s1")])
    crash = subprocess.run(
        [sys.executable, "-m", "logbook", "run", "--plan", "kv-three", "--arm", "base",
         "--session", "s1", "--outcomes", "items.jsonl", "--", sys.executable, "-c",
         "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"],
        cwd=ledger_dir, env=dict(os.environ), capture_output=True, timeout=60)
    assert crash.returncode == 128 + 9, crash.stderr

    # -- session 2: the brief names the open plan, the next arm and what s1 did -------------
    b = _brief()
    assert [p["slug"] for p in b["open_plans"]] == ["kv-three"]
    arms = {a["arm"]: a for a in b["open_plans"][0]["arms"]}
    assert (arms["base"]["completed"], arms["base"]["aborted"]) == (1, 1)
    assert arms["new"]["completed"] == 1
    assert b["open_plans"][0]["next_arm"] == "base"  # new ran last among completed runs
    assert b["previous_session"]["session"] == "s1"
    assert [r["status"] for r in b["previous_session"]["runs"]] == [
        "completed", "completed", "aborted"]
    assert any("kv-three" in step and "base" in step for step in b["next"])
    digests = _append(tmp_path, "s2.jsonl", [
        _run(plan, "base", 0.71, 3, "s2"), _run(plan, "new", 0.70, 4, "s2"),
        _run(plan, "base", 0.69, 5, "s2"), _run(plan, "new", 0.40, 6, "s2")])
    surprise = digests[-1]
    claim = run_cli("claim", "kv-three", "--arm", "base", "--statement", "base scores 70",
                    "--json")
    assert claim.code == 0, claim.err
    bad = digests[0]
    assert run_cli("retract", bad, "--reason", "prompt template was stale",
                   "--category", "harness_defect").code == 0
    audit = run_cli("audit", "--json")
    assert audit.code in (0, 1), audit.err

    # -- session 3: the retraction, what rests on it, the open work and the re-measure ------
    b = _brief()
    assert [r["target"] for r in b["retractions"]] == [bad]
    assert b["retractions"][0]["reason"] == "prompt template was stale"
    resting = {r["digest"] for r in b["resting_on_retracted"]}
    assert claim.json["digest"] in resting
    assert [p["slug"] for p in b["open_plans"]] == ["kv-three"]
    assert b["open_plans"][0]["next_arm"] == "base"  # base fell back to 2/3
    assert any(surprise in f["entries"] for f in b["remeasure"]), b["remeasure"]
    assert b["audit"] is not None and b["audit"]["size"] == b["ledger"]["size"]
    assert b["previous_session"]["session"] == "s2"
    text = run_cli("brief").out
    assert text.startswith("NEXT:")
    assert len(text.splitlines()) <= 40  # one screen


def test_brief_json_matches_its_schema(ledger_dir: Path) -> None:
    import json

    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parent.parent / "schemas" / "brief.json").read_text())
    jsonschema.validate(_brief(), schema)


def test_brief_does_not_import_scipy(ledger_dir: Path) -> None:
    code = ("import sys\nfrom logbook.cli.main import run\nrun(['brief', '--json'])\n"
            "bad = [m for m in sys.modules if m.startswith(('scipy', 'numpy'))]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ledger_dir, env=dict(os.environ),
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
