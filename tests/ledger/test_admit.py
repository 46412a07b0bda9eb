"""Issue 32 items 6 and 7: a run a plan refused keeps the plan and arm it was meant for
(`intended`) and stays in view (report, brief on both paths, audit A24, the web plan page);
`logbook admit` counts it once the amended plan accepts it, checking it again as the door
would; the audit judges admissions (A25); verify checks the references."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import independent_verifier as iv
import pytest
from builders import plan_body, write_json
from conftest import CliResult, run_cli
from test_record import exported, head, one_sentence, outcomes_writer, runs

from logbook.cli import lean


def refused_runs(n: int = 2) -> None:
    """Plan pl whose suite says 2 items; ``n`` runs of arm q8 of 3 items each, which it
    refuses (kept as exploratory runs, exit 1)."""
    r = run_cli("plan", str(write_json(Path("pl.json"), plan_body("pl", n_items=2))))
    assert r.code == 0, r.err
    for _ in range(n):
        r = run_cli("run", "--plan", "pl", "--arm", "q8", "--outcomes", "items.jsonl", "--",
                    *outcomes_writer("items.jsonl", 3))
        assert r.code == 1, r.err
        assert "not counted in plan pl: body.outcomes.id" in r.err


def amend() -> None:
    r = run_cli("amend", "pl", "--set", "suite.n_items=3", "--reason", "the suite has 3 items")
    assert r.code == 0, r.err


def audit() -> dict[str, Any]:
    r = run_cli("audit", "--json")
    assert r.code in (0, 1), r.err
    return r.json


def checks(found: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in found["findings"] if f["check"] == rule]


def brief_both(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[CliResult, CliResult]:
    """`brief ARGS` through the lean start and through typer alone."""
    assert lean.lean_call(["brief", *args], {}) is not None
    quick = run_cli("brief", *args)
    with monkeypatch.context() as mp:
        mp.setattr(lean, "lean_call", lambda _args, _env: None)
        full = run_cli("brief", *args)
    return quick, full


def test_refused_runs_stay_in_view(ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused_runs()
    plan = next(e for e in exported() if e["entry"]["kind"] == "plan")["digest"]
    for body in runs():
        assert body["plan"] is None and body["arm"] is None
        assert body["intended"]["plan"] == plan and body["intended"]["arm"] == "q8"
        assert "n_items 2" in body["intended"]["reason"]
    # report: the runs under the arm they were meant for, with the reason
    text = run_cli("report", "pl")
    assert text.code == 0, text.err
    assert "Arm q8 (treatment): 0/3 completed" in text.out
    assert "2 run(s) meant for this arm were refused, not counted" in text.out
    assert re.search(r"@2 completed: not counted in plan pl: .*n_items 2", text.out)
    rep = run_cli("report", "pl", "--json").json
    assert [(x["seq"], x["arm"]) for x in rep["refused"]] == [(2, "q8"), (3, "q8")]
    # brief, on both paths: the arm is being refused, so it says what to fix, not "run it"
    for r in brief_both(monkeypatch):
        assert r.code == 0, r.err
        assert "plan pl: runs meant for arm q8 are being refused (@3" in r.out
        assert "`logbook admit @3 --plan pl --arm q8`" in r.out and "logbook amend" in r.out
        assert "run arm q8 next" not in r.out
        assert "plan pl: run arm f16 next" in r.out
        assert "refused @2 (arm q8, not counted)" in r.out
    quick, full = brief_both(monkeypatch, "--json")
    assert quick.json["open_plans"] == full.json["open_plans"]
    open_plan = quick.json["open_plans"][0]
    assert open_plan["blocked"] == ["q8"] and open_plan["next_arm"] == "f16"
    assert [r["seq"] for r in open_plan["refused"]] == [2, 3]
    # audit: A24 says so, with the reason
    found = checks(audit(), "A24")
    assert len(found) == 1 and found[0]["severity"] == "warning"
    assert "runs intended for plan pl arm q8 were refused: 2 (@2, @3)" in found[0]["message"]
    assert "n_items 2" in found[0]["message"]
    assert run_cli("verify").code == 0


def test_amend_then_admit_counts_them(ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused_runs()
    amend()
    quick, full = brief_both(monkeypatch)
    for r in (quick, full):  # the plan changed since: admitting is what it suggests now
        assert "2 run(s) it refused may fit it as amended" in r.out
        assert "`logbook admit @2 --plan pl --arm q8`" in r.out
    for ref in ("@2", "@3"):
        r = run_cli("admit", ref, "--plan", "pl", "--arm", "q8", "--reason", "suite fixed")
        assert r.code == 0, r.err
    rep = run_cli("report", "pl", "--json").json
    q8 = next(a for a in rep["arms"] if a["name"] == "q8")
    assert q8["completed"] == 2 and [r["seq"] for r in q8["runs"]] == [2, 3]
    assert all(r["admitted_by"] for r in q8["runs"]) and rep["refused"] == []
    assert "completed admitted" in run_cli("report", "pl").out
    # a claim on the arm cites them, as the plan's runs
    r = run_cli("claim", "pl", "--arm", "q8", "--statement", "q8 scores 33", "--json")
    assert r.code == 0, r.err
    digests = {e["seq"]: e["digest"] for e in exported()}
    assert r.json["entry"]["body"]["runs"] == [digests[2], digests[3]]
    quick, full = brief_both(monkeypatch, "--json")
    for r in (quick, full):
        arms = {a["arm"]: a["completed"] for a in r.json["open_plans"][0]["arms"]}
        assert arms == {"f16": 0, "q8": 2} and r.json["open_plans"][0]["refused"] == []
    found = audit()
    assert not checks(found, "A24") and not checks(found, "A25")
    # verify (bodies against schemas/ too), and the independent verifier of format.md §7
    assert run_cli("verify", "--strict").code == 0
    assert iv.verify_db(ledger_dir / ".logbook" / "ledger.db") == []
    # retracting the admission withdraws it: the run is refused again, in view
    admission = next(e for e in exported() if e["entry"]["kind"] == "admission")["digest"]
    r = run_cli("retract", admission, "--reason", "admitted by mistake", "--category", "other")
    assert r.code == 0, r.err
    rep = run_cli("report", "pl", "--json").json
    assert [x["seq"] for x in rep["refused"]] == [2]
    assert next(a for a in rep["arms"] if a["name"] == "q8")["completed"] == 1


def test_admitted_runs_fill_the_arm_for_run(ledger_dir: Path) -> None:
    """Issue 32 item 8 counts the runs admissions count: an arm whose runs_per_arm are all
    admitted runs is full, and `logbook run` refuses before starting the command."""
    refused_runs(3)
    amend()
    for ref in ("@2", "@3", "@4"):
        r = run_cli("admit", ref, "--plan", "pl", "--arm", "q8", "--reason", "suite fixed")
        assert r.code == 0, r.err
    before = head()
    r = run_cli("run", "--plan", "pl", "--arm", "q8", "--outcomes", "items.jsonl", "--",
                *outcomes_writer("items.jsonl", 3, "open('ran-marker', 'w').close()"))
    assert r.code == 2 and "3 completed runs of arm q8" in r.err, r.err
    assert "--beyond-plan" in r.err and not Path("ran-marker").exists()
    assert head() == before


def test_a_selective_admission_is_flagged(ledger_dir: Path) -> None:
    refused_runs()
    amend()
    assert run_cli("admit", "@2", "--plan", "pl", "--arm", "q8").code == 0
    found = audit()
    a25 = checks(found, "A25")
    assert len(a25) == 1 and a25[0]["severity"] == "error"
    assert "1 other(s) the plan as it stands accepts were not (@3)" in a25[0]["message"]
    assert run_cli("audit").code == 1
    assert run_cli("admit", "@3", "--plan", "pl", "--arm", "q8").code == 0
    assert not checks(audit(), "A25")


def test_a_late_admission_is_a_warning(ledger_dir: Path) -> None:
    refused_runs(1)
    amend()
    r = run_cli("run", "--plan", "pl", "--arm", "f16", "--outcomes", "items.jsonl", "--",
                *outcomes_writer("items.jsonl", 3))
    assert r.code == 0, r.err
    assert run_cli("admit", "@2", "--plan", "pl", "--arm", "q8").code == 0
    a25 = checks(audit(), "A25")
    assert [f["severity"] for f in a25] == ["warning"]
    assert "after 1 later run(s) of the plan were appended (@4)" in a25[0]["message"]


def refused(*args: str, says: str) -> None:
    before = head()
    r = run_cli("admit", *args)
    assert r.code == 2, r.err
    assert says in one_sentence(r.err), r.err
    assert head() == before


def test_admit_refuses_what_the_door_would(ledger_dir: Path) -> None:
    refused_runs()
    # an amendment that does not fix what refused the run: refused again, naming why
    r = run_cli("amend", "pl", "--set", "runs_per_arm=4", "--reason", "more runs")
    assert r.code == 0, r.err
    refused("@2", "--plan", "pl", "--arm", "q8",
            says="body.run: plan pl as it stands still refuses run @2 in arm 'q8' "
            "(body.outcomes.id:")
    amend()
    refused("@2", "--plan", "pl", "--arm", "q4", says="body.arm: 'q4' is not an arm")
    refused("@1", "--plan", "pl", "--arm", "q8", says="body.run: entry")  # a plan, not a run
    assert run_cli("admit", "@2", "--plan", "pl", "--arm", "q8").code == 0
    refused("@2", "--plan", "pl", "--arm", "q8", says="body.run: run @2 is already admitted")
    r = run_cli("retract", "@3", "--reason", "the harness crashed", "--category",
                "harness_defect")
    assert r.code == 0, r.err
    refused("@3", "--plan", "pl", "--arm", "q8", says="body.run: run @3 is retracted")
    rep = run_cli("report", "pl", "--json").json  # still listed, marked; no longer waiting
    assert [(x["seq"], x["retracted"]) for x in rep["refused"]] == [(3, True)]
    assert not checks(audit(), "A24")
    r = run_cli("run", "--plan", "pl", "--arm", "f16", "--outcomes", "items.jsonl", "--",
                *outcomes_writer("items.jsonl", 3))
    assert r.code == 0, r.err
    counted = len(exported()) - 1
    refused(f"@{counted}", "--plan", "pl", "--arm", "f16",
            says=f"body.run: run @{counted} is already counted in plan")
    assert run_cli("verify").code == 0


def test_verify_checks_what_admissions_and_intended_name(ledger_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    refused_runs(1)
    assert run_cli("note", "a note").code == 0  # @3
    # at append: a run's intended plan must be a plan
    body = dict(runs()[0], intended={"plan": "@3", "arm": "q8", "reason": "refused"},
                outcomes={"metric": "acc", "id": ["x"], "score": [1.0]})
    body.pop("apparatus")
    body["apparatus"] = {"model": "m"}
    r = run_cli("append", str(write_json(Path("run.json"), {"kind": "run", "body": body})))
    assert r.code == 2 and "body.intended.plan: entry" in r.err and "not a plan" in r.err
    assert run_cli("verify").code == 0
    # a signer who skips the checks (the admission rules switched off): verify finds both
    from logbook.ledger import admission

    with monkeypatch.context() as mp:
        mp.setattr(admission, "check_state", lambda *_a: None)
        assert run_cli("append", "run.json").code == 0
        assert run_cli("admit", "@3", "--plan", "pl", "--arm", "q8").code == 0
    r = run_cli("verify")
    assert r.code == 1
    assert "body.intended.plan names a note, not a plan" in r.out + r.err
    assert "body.run names a note, not a run" in r.out + r.err
    found = iv.verify_db(ledger_dir / ".logbook" / "ledger.db")
    assert sorted(f["message"].split(" names ")[0] for f in found) == [
        "entry 4: body.intended.plan", "entry 5: body.run"]


def test_the_web_plan_page_lists_refused_runs(ledger_dir: Path) -> None:
    pytest.importorskip("uvicorn")
    import served

    refused_runs()
    logs = ledger_dir / "serve.txt"
    with logs.open("w") as err:
        proc = subprocess.Popen(served.serve_command("--ledger", str(ledger_dir), "serve",
                                                     "--port", "0"),
                                stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            found = re.search(r"http://127\.0\.0\.1:\d+", logs.read_text())
            url = found.group(0) if found else None
            time.sleep(0.1)
        assert url is not None, logs.read_text()
        status, page, _ = served.get(f"{url}/plans/pl")
        assert status == 200
        assert "no runs yet" not in page.split("Arm q8")[1]
        assert "2 run(s) meant for this arm were refused and are not counted" in page
        assert "n_items 2" in page
        status, twin, _ = served.get(f"{url}/plans/pl.json")
        assert status == 200 and [x["seq"] for x in twin["report"]["refused"]] == [2, 3]
        status, listing, _ = served.get(f"{url}/plans.json")
        q8 = next(a for a in listing["plans"][0]["arms"] if a["name"] == "q8")
        assert status == 200 and q8["refused"] == 2 and q8["completed"] == 0
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)


def test_an_admitted_run_is_one_of_the_plans_runs_at_the_door(ledger_dir: Path) -> None:
    """An amendment that bounds the metric to [0, 1] is checked against admitted runs too."""
    body = plan_body("pl", n_items=2, metric={"name": "acc", "kind": "mean",
                                              "higher_is_better": True})
    assert run_cli("plan", str(write_json(Path("pl.json"), body))).code == 0
    writer = ("import json\nwith open('items.jsonl', 'w') as f:\n"
              "    for i in range(3): f.write(json.dumps({'id': i, 'score': 2.0}) + '\\n')\n")
    r = run_cli("run", "--plan", "pl", "--arm", "q8", "--outcomes", "items.jsonl", "--",
                sys.executable, "-c", writer)
    assert r.code == 1, r.err
    amend()
    assert run_cli("admit", "@2", "--plan", "pl", "--arm", "q8").code == 0
    before = head()
    r = run_cli("amend", "pl", "--set", "metric.kind=proportion", "--reason", "a proportion")
    assert r.code == 2 and "run @2 has scores outside [0, 1]" in one_sentence(r.err)
    assert head() == before


def test_admitted_runs_fix_the_suite_at_the_door(ledger_dir: Path) -> None:
    """Once admitted, a run is one of the plan's runs for the door's suite check too: its
    item ids fill the amended suite, and a later run with a fourth id is refused."""
    refused_runs(1)
    amend()
    assert run_cli("admit", "@2", "--plan", "pl", "--arm", "q8").code == 0
    others = [sys.executable, "-c", "import json\nwith open('other.jsonl', 'w') as f:\n"
              "    for i in (7, 8, 9): f.write(json.dumps({'id': i, 'score': 1}) + '\\n')\n"]
    r = run_cli("run", "--plan", "pl", "--arm", "f16", "--outcomes", "other.jsonl", "--",
                *others)  # three items, none of the three the admitted run fixed
    assert r.code == 1 and "not one of the 3 items" in r.err, r.err
    r = run_cli("run", "--plan", "pl", "--arm", "f16", "--outcomes", "same.jsonl", "--",
                *outcomes_writer("same.jsonl", 3))
    assert r.code == 0, r.err
