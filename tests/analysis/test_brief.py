"""A scripted agent over three sessions, through the public commands (issue 9)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import prebuilt
import pytest
from builders import plan_body, write_json, write_jsonl
from conftest import run_cli
from test_report import _run_with_score

# the module's ledger is initialised once and copied into each test (tests/prebuilt.py)
initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir


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
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "brief.json").read_text())
    jsonschema.validate(_brief(), schema)


def test_brief_does_not_import_scipy(ledger_dir: Path) -> None:
    code = ("import sys\nfrom logbook.cli.main import run\nrun(['brief', '--json'])\n"
            "bad = [m for m in sys.modules if m.startswith(('scipy', 'numpy'))]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ledger_dir, env=dict(os.environ),
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()[-2000:]


def test_open_plans_through_amendments_and_retractions(ledger_dir: Path,
                                                      tmp_path: Path) -> None:
    # brief answers "finished?" for untouched plans from the index and the plans' JSON in
    # SQLite, and counts amended plans and plans with retractions in full: both must agree.
    def plan(slug: str, k: int) -> str:
        r = run_cli("plan", str(write_json(tmp_path / f"{slug}.json", plan_body(
            slug=slug, runs_per_arm=k, n_items=200, arms=("a", "b")))), "--json")
        assert r.code == 0, r.err
        return r.json["digest"]

    def runs(p: str, a: int, b: int) -> list[str]:
        drafts = [_run(p, arm, 0.7, seed, "s") for arm, n in (("a", a), ("b", b))
                  for seed in range(n)]
        return _append(tmp_path, f"{p[:8]}-{a}-{b}.jsonl", drafts) if drafts else []

    def amend(slug: str, k: int) -> str:
        r = run_cli("amend", slug, "--set", f"runs_per_arm={k}", "--reason", "why", "--json")
        assert r.code == 0, r.err
        return r.json["digest"]

    def retract(ref: str) -> None:
        assert run_cli("retract", ref, "--reason", "bad", "--category", "other").code == 0

    runs(plan("done", 2), 2, 2)
    retract(runs(plan("run-retracted", 2), 2, 2)[-1])   # b falls to 1 of 2
    runs(plan("amended-down", 3), 2, 2)
    amend("amended-down", 2)                             # 2 of 2 now: finished
    runs(plan("amended-up", 2), 2, 2)
    amend("amended-up", 3)                               # 2 of 3 now: open
    runs(plan("lopsided", 2), 4, 1)                      # enough runs in all, b short
    runs(plan("arm-unrun", 2), 2, 0)
    retract(plan("plan-retracted", 2))
    runs(plan("amendment-withdrawn", 2), 2, 2)
    retract(amend("amendment-withdrawn", 3))             # back to 2 of 2: finished
    got = {p["slug"]: ({a["arm"]: (a["completed"], a["planned"]) for a in p["arms"]},
                       p["next_arm"]) for p in _brief()["open_plans"]}
    assert got == {
        "run-retracted": ({"a": (2, 2), "b": (1, 2)}, "b"),
        "amended-up": ({"a": (2, 3), "b": (2, 3)}, "a"),
        "lopsided": ({"a": (4, 2), "b": (1, 2)}, "b"),
        "arm-unrun": ({"a": (2, 2), "b": (0, 2)}, "b"),
    }


@pytest.mark.parametrize("batch", [5000, 2, 1])
def test_what_rests_on_a_retraction(ledger_dir: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, batch: int) -> None:
    # The candidates are found by a byte search over batches of entries (the read model's
    # entries_mentioning); small batches put hits at the first and last byte of a buffer and
    # on batch boundaries.
    import logbook.verify.checked_reads

    monkeypatch.setattr(logbook.verify.checked_reads, "SCAN_BATCH", batch)
    r = run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(
        slug="rest", runs_per_arm=2, n_items=200, arms=("a", "b")))), "--json")
    plan = r.json["digest"]
    good, bad, other = _append(tmp_path, "r.jsonl", [_run(plan, "a", 0.7, 1, "s"),
                                                      _run(plan, "b", 0.7, 2, "s"),
                                                      _run(plan, "a", 0.7, 3, "s")])

    def note(text: str, *refs: str) -> str:
        args = [a for ref in refs for a in ("--ref", ref)]
        n = run_cli("note", text, *args, "--json")
        assert n.code == 0, n.err
        return n.json["digest"]

    on_bad = [note("first", bad), note("unrelated", good), note("both", good, bad),
              note("only mentions " + other), note("last", bad)]
    claim = run_cli("claim", "rest", "--arm", "b", "--statement", "b scores 70", "--json")
    assert claim.code == 0, claim.err
    assert run_cli("retract", bad, "--reason", "bad", "--category", "other").code == 0
    assert run_cli("retract", other, "--reason", "bad", "--category", "other").code == 0
    rows = {r["digest"]: r["rests_on"] for r in _brief()["resting_on_retracted"]}
    # a digest in a note's text is not a reference; parsing confirms every byte match
    assert rows == {on_bad[0]: [bad], on_bad[2]: [bad], on_bad[4]: [bad],
                    claim.json["digest"]: [bad]}


def test_plan_shapes_are_the_checked_plans(ledger_dir: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # brief reads every plan's runs_per_arm and arms from the read model, which the check
    # fills from the plans' checked bytes: by a full check (copy made anew, or in memory) and
    # by a resumed one; each must give what the plan's body says
    from logbook.ledger.read_model import checked_reading
    from logbook.ledger.service import Ledger

    def shapes() -> list[tuple[int, str, Any]]:
        with Ledger.open(ledger_dir, write=False) as ledger, checked_reading(ledger):
            return [(s, d, orjson.loads(x)) for s, d, x in ledger.brief_reads().plan_shapes()]

    def bodies() -> list[tuple[int, str, Any]]:
        with Ledger.open(ledger_dir, write=False) as ledger:
            return [(e.seq, e.digest, [e.body["runs_per_arm"], e.body["arms"]])
                    for e in ledger.log(kind="plan")]

    monkeypatch.setenv("LOGBOOK_STATE_DIR", str(tmp_path / "state"))
    for i, k in enumerate((1, 3, 12)):
        body = plan_body(slug=f"shape-{i}", runs_per_arm=k, arms=("a", "b", "ünï"[: i + 1]))
        assert run_cli("plan", str(write_json(tmp_path / f"s{i}.json", body))).code == 0
        assert shapes() == bodies()  # the first check is full, the next ones resume
    assert len(bodies()) == 3
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")  # a full check, its copy in memory
    assert shapes() == bodies()

def test_brief_lists_plans_whose_runs_disagree_beyond_their_band(ledger_dir: Path,
                                                                 tmp_path: Path) -> None:
    # The audit's A18 (an arm's runs vary more than the band of their apparatus) is stored by
    # `logbook audit`; the brief reads it from there, beside the runs to re-measure (A12).
    from test_audit import append, calibrated_band, honest_runs, make_plan

    calibrated_band(tmp_path)
    plan = make_plan(tmp_path, runs=5)
    append(tmp_path, honest_runs(plan, control=(0.70, 0.71, 0.69, 0.70, 0.71),
                                 treatment=(0.72, 0.70, 0.80, 0.62, 0.71)))
    assert _brief()["beyond_band"] == []  # nothing until an audit has stored it
    assert run_cli("audit").code == 0
    b = _brief()
    assert [f["check"] for f in b["beyond_band"]] == ["A18"]
    assert b["beyond_band"][0]["entries"][0] == plan
    assert any(step.startswith("runs disagree beyond their band: plan kv arm q8")
               for step in b["next"]), b["next"]
    text = run_cli("brief").out
    assert "runs beyond their band:\n  plan kv arm q8: runs @10, @12, @14, @16, @18" in text


def test_a_run_draft_joins_the_session_of_logbook_session(ledger_dir: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/agents.md: set LOGBOOK_SESSION once, and every run appended joins that session,
    # whether through `logbook run`, `append --from` or a plain draft (unless it names one).
    r = run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(
        slug="sess", runs_per_arm=2, n_items=200, arms=("a", "b")))), "--json")
    plan = r.json["digest"]
    monkeypatch.setenv("LOGBOOK_SESSION", "agent-7")
    unnamed = _run(plan, "a", 0.7, 1, "x")
    del unnamed["body"]["session"]
    named = _run(plan, "b", 0.7, 2, "s-explicit")
    _append(tmp_path, "s.jsonl", [unnamed, named])
    b = _brief()
    assert b["previous_session"]["session"] == "s-explicit"  # the last run's session
    shown = run_cli("log", "--kind", "run", "--json")
    assert [e["entry"]["body"]["session"] for e in shown.json] == ["agent-7", "s-explicit"]


def test_brief_says_a_band_must_be_remeasured_under_a_new_evaluator(ledger_dir: Path,
                                                                    tmp_path: Path) -> None:
    from test_audit import append, scored

    stamp = {"evaluator": {"name": "match", "config_hash": "sha256:" + "a" * 64}}
    append(tmp_path, [scored(None, "q8", s, k, **stamp) for k, s in
                      enumerate((0.70, 0.72, 0.70, 0.72, 0.71))])
    assert run_cli("band", "kv_cache_precision=q8").code == 0
    assert _brief()["bands"][0]["remeasure"] is None
    new = {"evaluator": {"name": "match", "config_hash": "sha256:" + "b" * 64}}
    later = append(tmp_path, [scored(None, "q8", 0.71, 9, **new)], "later.jsonl")
    b = _brief()["bands"][0]
    assert b["remeasure"]["digest"] == later[0]
    assert b["remeasure"]["evaluator_config_hash"] == "sha256:" + "b" * 64
    assert "must be re-measured" in run_cli("brief").out


def test_a_damaged_or_forged_stored_audit_never_crashes_brief(ledger_dir: Path) -> None:
    import sqlite3

    assert run_cli("audit").code == 0
    db = ledger_dir / ".logbook" / "ledger.db"
    for forged in (b"not json", b"[1]", b'{"a": 1}',
                   b'[{"check": "A04", "severity": "error", "message": "FORGED"}]'):
        with sqlite3.connect(db) as conn:
            conn.execute("INSERT INTO audits(size, at, findings) VALUES (?, ?, ?)",
                         (1, "x", forged.decode()))
        r = run_cli("brief")
        assert r.code == 0, r.err
        b = run_cli("brief", "--json").json
        assert b["audit"]["verified"] is False
    # the forged error is shown only as what was stored, never as verified
    assert "FORGED" in r.out and "not verified" in r.out


def test_the_brief_schema_is_its_shapes_and_holds_every_section(ledger_dir: Path,
                                                                 tmp_path: Path) -> None:
    """schemas/brief.json is derived from analysis/brief_shapes.py: a brief with every
    section filled (open plans, a retraction and what rests on it, a claim, notes, the
    stored audit's errors, a checkpoint) validates, and the derived constraints bite."""
    import json

    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "brief.json").read_text())
    plan = run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(
        slug="full", runs_per_arm=2, n_items=200, arms=("a", "b")))), "--json").json["digest"]
    first, _ = _append(tmp_path, "r.jsonl", [_run(plan, "a", 0.7, 1, "s1"),
                                             _run(plan, "b", 0.7, 2, "s1")])
    claim = run_cli("claim", "full", "--arm", "a", "--statement", "a scores 70", "--json")
    assert claim.code == 0, claim.err
    assert run_cli("retract", first, "--reason", "bad", "--category", "other").code == 0
    assert run_cli("note", "after it", "--ref", plan).code == 0
    assert run_cli("audit").code == 1  # the claim rests on a retracted run: an error
    assert run_cli("checkpoint").code == 0
    b = _brief()
    assert b["open_plans"] and b["retractions"] and b["resting_on_retracted"]
    assert b["claims"] and b["notes"] and b["audit"]["errors"]
    assert b["integrity"]["verified"] and b["integrity"]["latest_checkpoint"]
    assert b["previous_session"]["runs"]
    jsonschema.validate(b, schema)
    assert set(schema["required"]) == set(b)  # every section is always there
    broken = [
        {**b, "next": [*b["next"], "one", "two", "three"]},  # at most three next steps
        {**b, "open_plans": [{**b["open_plans"][0], "surprise": 1}]},  # no unknown key
        {**b, "claims": [{k: v for k, v in b["claims"][0].items() if k != "status"}]},
        {**b, "integrity": {**b["integrity"], "verified": {
            **b["integrity"]["verified"], "entries": "many"}}},
    ]
    for bad in broken:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


@pytest.mark.parametrize("args", [["brief", "--json"], ["brief"]])
def test_brief_and_report_do_not_import_pydantic(ledger_dir: Path, tmp_path: Path,
                                                 args: list[str]) -> None:
    """The typed outputs are plain dataclasses: pydantic is for the schema export only."""
    assert run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(
        slug="light", runs_per_arm=1, n_items=200, arms=("a", "b"))))).code == 0
    assert run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "r.jsonl", [
        _run_with_score("light", "a", 0.7, 200, 1), _run_with_score("light", "b", 0.7, 200, 2)
    ]))).code == 0
    for cmd in (args, ["report", "light", *args[1:]]):
        code = ("import sys\nfrom logbook.cli.main import run\n"
                f"run({cmd!r})\n"
                "bad = [m for m in sys.modules if m.startswith('pydantic')]\n"
                "assert not bad, bad\n")
        r = subprocess.run([sys.executable, "-c", code], cwd=ledger_dir, env=dict(os.environ),
                           capture_output=True, timeout=120)
        assert r.returncode == 0, (cmd, r.stderr.decode()[-2000:])


def test_a_band_is_remeasured_when_any_evaluator_field_changes(ledger_dir: Path,
                                                               tmp_path: Path) -> None:
    """The judge's model changed, its config hash (as recorded) did not: still another
    evaluator, and the band describes the old one."""
    from test_audit import append, scored

    def judge(model: str) -> dict[str, Any]:
        return {"evaluator": {"model": model, "config_hash": "sha256:" + "a" * 64}}

    append(tmp_path, [scored(None, "q8", s, k, **judge("judge-70b")) for k, s in
                      enumerate((0.70, 0.72, 0.70, 0.72, 0.71))])
    assert run_cli("band", "kv_cache_precision=q8").code == 0
    same = append(tmp_path, [scored(None, "q8", 0.71, 8, **judge("judge-70b"))], "same.jsonl")
    assert _brief()["bands"][0]["remeasure"] is None, same
    later = append(tmp_path, [scored(None, "q8", 0.71, 9, **judge("judge-405b"))], "l.jsonl")
    b = _brief()["bands"][0]
    assert b["remeasure"]["digest"] == later[0]
    assert b["remeasure"]["changed"] == ["evaluator.model"]
    assert "evaluator.model changed" in run_cli("brief").out
    # withdrawn, that run says nothing about the band any more
    assert run_cli("retract", later[0], "--reason", "wrong judge", "--category",
                   "harness_defect").code == 0
    assert _brief()["bands"][0]["remeasure"] is None


def test_brief_judges_the_ledger_as_it_is_now(ledger_dir: Path, tmp_path: Path) -> None:
    """A run the last audit said to re-measure, retracted since, is not to re-measure; a
    claim resting on a retracted run, retracted itself, is not to retract."""
    from test_audit import append, scored

    runs = append(tmp_path, [scored(None, "q8", s, k) for k, s in
                             enumerate((0.70, 0.71, 0.70, 0.95))])  # the last: a surprise
    assert run_cli("audit").code == 0
    assert any(runs[3] in f["entries"] for f in _brief()["remeasure"])
    said = run_cli("note", "the surprise holds", "--ref", runs[3], "--json")
    assert said.code == 0, said.err
    assert run_cli("retract", runs[3], "--reason", "scored against the wrong key",
                   "--category", "harness_defect").code == 0
    b = _brief()
    assert not any(runs[3] in f["entries"] for f in b["remeasure"]), b["remeasure"]
    assert [r["seq"] for r in b["resting_on_retracted"]] == [said.json["seq"]]
    assert run_cli("retract", said.json["digest"], "--reason", "rested on a withdrawn run",
                   "--category", "analysis_error").code == 0
    b = _brief()
    assert b["resting_on_retracted"] == []
    assert not any("rests on a retracted entry" in s for s in b["next"])


@pytest.mark.parametrize("column, value", [("size", "'x'"), ("at", "x'00'"), ("findings", "x'00'")])
def test_an_altered_audit_record_is_one_sentence_and_a_new_audit_mends_it(
        ledger_dir: Path, column: str, value: str) -> None:
    # the audit records are kept beside the chain, unsigned: an altered column stops brief
    # with one sentence naming it (exit 1, never a traceback), and the next audit's record,
    # the last one, is what brief reads again
    import sqlite3

    assert run_cli("note", "something").code == 0
    assert run_cli("audit").code == 0
    conn = sqlite3.connect(ledger_dir / ".logbook" / "ledger.db")
    with conn:
        conn.execute(f"UPDATE audits SET {column} = {value}")
    conn.close()
    r = run_cli("brief")
    assert r.code == 1, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and f"the {column} of a stored audit record" in lines[0], r.err
    assert run_cli("audit").code == 0
    assert run_cli("brief").code == 0
