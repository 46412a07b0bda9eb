"""`logbook.integrations.lm_eval.record()`: the runs of simple_evaluate's results dictionary.

The dictionaries are rebuilt from real lm-evaluation-harness outputs (tests/fixtures/lm_eval:
`lm_eval --model dummy` on local task YAMLs, with --log_samples): the results file is the
dictionary simple_evaluate returned, less its ``samples``, which the samples files hold line by
line. Each must record the runs `logbook append --from lm-eval` makes of those files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import plan_body, write_json
from conftest import run_cli

from logbook.errors import EnvironmentProblem, InputError
from logbook.integrations.lm_eval import record

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lm_eval"


def simple_evaluate_results(folder: Path) -> dict[str, Any]:
    """What simple_evaluate(..., log_samples=True) returned for the run saved in ``folder``."""
    (results_file,) = folder.glob("results_*.json")
    results = orjson.loads(results_file.read_bytes())
    stamp = results_file.name.removeprefix("results_")
    samples = {}
    for task in results["configs"]:
        lines = folder / f"samples_{task}_{stamp.removesuffix('.json')}.jsonl"
        if lines.is_file():
            samples[task] = [orjson.loads(line) for line in lines.read_bytes().splitlines()
                             if line.strip()]
    return {**results, "samples": samples}


def runs(ledger: Path | None = None) -> list[dict[str, Any]]:
    r = run_cli("export") if ledger is None else run_cli("--ledger", str(ledger), "export")
    assert r.code == 0, r.err
    return [e["entry"]["body"] for e in map(orjson.loads, r.out.splitlines())
            if e["entry"]["kind"] == "run"]


@pytest.mark.parametrize("run", ["run-seed1", "run-gen-seed1", "run-2tasks-seed6",
                                 "run-group-seed5"])
def test_record_makes_the_runs_of_the_results_file(ledger_dir: Path, tmp_path: Path,
                                                   run: str) -> None:
    entries = record(simple_evaluate_results(FIXTURES / run))
    recorded = runs()
    assert [e.body for e in entries] == recorded and recorded
    other = tmp_path / "other"
    other.mkdir()
    assert run_cli("init", str(other), "--name", "other").code == 0
    r = run_cli("--ledger", str(other), "append", "--from", "lm-eval", str(FIXTURES / run))
    assert r.code == 0, r.err
    appended = runs(other)
    assert len(appended) == len(recorded)
    for mine, theirs in zip(recorded, appended, strict=True):
        for field in ("status", "task", "group", "outcomes", "reported", "started", "note"):
            assert mine.get(field) == theirs.get(field), field
        captured = mine["apparatus"].pop("captured")
        assert mine["apparatus"] == theirs["apparatus"] and captured["python"]
        assert mine["source"]["harness"] == "lm-evaluation-harness"
        assert mine["source"]["file"] == "simple_evaluate results"
    assert run_cli("verify").code == 0


def test_record_into_a_plan_and_once(ledger_dir: Path, tmp_path: Path) -> None:
    body = plan_body("mc", arms=("dummy", "other"),
                     suite={"name": "synth_mc", "version": "1", "n_items": 200},
                     metric={"name": "acc", "kind": "proportion"})
    assert run_cli("plan", str(write_json(tmp_path / "plan.json", body))).code == 0
    results = simple_evaluate_results(FIXTURES / "run-seed1")
    (entry,) = record(results, plan="mc", arm="dummy", apparatus={"engine": "dummy"})
    assert entry.body["arm"] == "dummy" and entry.body["apparatus"]["engine"] == "dummy"
    with pytest.raises(InputError, match="already"):
        record(results, plan="mc", arm="dummy")
    assert len(runs()) == 1


def test_record_refuses_what_it_cannot_take_and_writes_nothing(ledger_dir: Path) -> None:
    results = simple_evaluate_results(FIXTURES / "run-seed1")
    with pytest.raises(InputError, match="log_samples=True"):
        record({**results, "samples": {}})
    with pytest.raises(InputError, match="lm_eval_version"):
        record({**results, "lm_eval_version": "0.3.0"})
    with pytest.raises(InputError, match="reserved"):
        record(results, apparatus={"captured": {}})
    assert runs() == []


def test_record_keeps_a_run_its_plan_refuses_as_an_exploratory_run_saying_why(
        ledger_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 32: the runs have happened, so record() keeps them as the Inspect hook does (a
    # misspelt plan, an arm without a plan and a pin contradicted once raised, writing nothing)
    body = plan_body("mc", arms=("dummy", "other"),
                     suite={"name": "synth_mc", "version": "1", "n_items": 200},
                     metric={"name": "acc", "kind": "proportion"}, pinned={"engine": "vllm"})
    assert run_cli("plan", str(write_json(tmp_path / "plan.json", body))).code == 0
    (typo,) = record(simple_evaluate_results(FIXTURES / "run-seed1"), plan="mcc", arm="dummy")
    (no_plan,) = record(simple_evaluate_results(FIXTURES / "run-seed2"), arm="nope")
    (pinned,) = record(simple_evaluate_results(FIXTURES / "run-seed3"), plan="mc", arm="dummy",
                       apparatus={"engine": "dummy"})
    assert typo.body["plan"] is None and typo.body["note"] == (
        "not counted in plan mcc: plan: 'mcc' is not a digest, @SEQ or the slug of a plan")
    assert no_plan.body["plan"] is None and no_plan.body["note"] == (
        "not counted in a plan: arm needs plan")
    assert pinned.body["plan"] is None and pinned.body["arm"] is None
    assert pinned.body["note"].startswith("not counted in plan mc: ")
    assert "engine" in pinned.body["note"] and "vllm" in pinned.body["note"]
    said = capsys.readouterr().err
    assert all(e.body["note"] in said for e in (typo, no_plan, pinned))
    assert [r["note"] for r in runs()] == [e.body["note"] for e in (typo, no_plan, pinned)]
    assert not (ledger_dir / ".logbook" / "spool").exists()


def test_a_locked_ledger_spools_the_runs_brief_lists_them_and_append_spool_appends_them(
        ledger_dir: Path) -> None:
    import sqlite3

    holder = sqlite3.connect(ledger_dir / ".logbook" / "ledger.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the ledger's lock
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("LOGBOOK_LOCK_TIMEOUT", "0.2")
            with pytest.raises(EnvironmentProblem, match="locked"):
                record(simple_evaluate_results(FIXTURES / "run-seed1"), ledger=ledger_dir)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    (spooled,) = (ledger_dir / ".logbook" / "spool").glob("*.json")
    (row,) = run_cli("spool", "list", "--json").json
    assert row["file"] == spooled.name and row["source"] == "lm-eval"
    assert row["output"] == "simple_evaluate results" and "locked" in row["why"]
    assert run_cli("brief", "--json").json["spooled"] == [row]
    # a record nobody can read stays in the spool, named, and `append --spool` exits 1
    (spooled.parent / "broken.json").write_text("{not json")
    r = run_cli("append", "--spool")
    assert r.code == 1, r.err
    assert f"from the spool ({spooled.name})" in r.err and not spooled.exists()
    assert "broken.json is not JSON" in r.err and "1 spooled run(s) stay in" in r.err
    (run,) = runs()
    assert run["source"]["file"] == "simple_evaluate results" and run["plan"] is None
    (left,) = run_cli("spool", "list", "--json").json
    assert left["file"] == "broken.json" and "is not JSON" in left["why"]


def test_without_a_ledger_the_runs_are_spooled_and_the_next_write_appends_them(
        tmp_path: Path) -> None:
    folder = tmp_path / "later"
    folder.mkdir()
    with pytest.raises(EnvironmentProblem, match="no ledger"):
        record(simple_evaluate_results(FIXTURES / "run-seed1"), ledger=folder)
    (spooled,) = (folder / ".logbook" / "spool").glob("*.json")
    assert run_cli("init", str(folder), "--name", "later").code == 0
    r = run_cli("--ledger", str(folder), "append", "--from", "lm-eval",
                str(FIXTURES / "run-seed2"))
    assert r.code == 0, r.err
    assert f"from the spool ({spooled.name})" in r.err and not spooled.exists()
    first, second = runs(folder)  # the command's own run, then the spooled one
    assert first["source"]["file"].startswith("results_")
    assert second["source"]["file"] == "simple_evaluate results"


DOC = Path(__file__).parents[2] / "docs" / "recording.md"


def _stand_in_lm_eval() -> Any:
    """The doc's example asks for a vllm model that is not here: a module whose simple_evaluate
    returns what the real one returned for the fixture's run, for the task and model it is
    asked for (as test_record's FAKE_LM_EVAL writes the fixture's files for the doc's shell
    commands). The doc's `dummy` example runs the real one: test_lm_eval_harness.py."""
    import time
    import types

    def simple_evaluate(*, model: str, model_args: str, tasks: list[str],
                        log_samples: bool) -> dict[str, Any]:
        (task,) = tasks
        results = simple_evaluate_results(FIXTURES / "run-seed1")
        doc = orjson.loads(orjson.dumps(results).decode().replace("synth_mc", task))
        doc["config"]["model"], doc["config"]["model_args"] = model, model_args
        doc["model_name"] = dict(kv.split("=") for kv in model_args.split(","))["pretrained"]
        doc["date"] = time.time()
        if not log_samples:
            doc.pop("samples")
        return doc

    module = types.ModuleType("lm_eval")
    module.simple_evaluate = simple_evaluate  # type: ignore[attr-defined]
    return module


def test_doc_lm_eval_python_example_runs(ledger_dir: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    import re

    text = DOC.read_text()
    plan_toml = re.search(r"cat > hellaswag.toml <<'EOF'\n(.*?)^EOF", text, re.S | re.M)
    assert plan_toml is not None
    (tmp_path / "hellaswag.toml").write_text(plan_toml.group(1))
    assert run_cli("plan", str(tmp_path / "hellaswag.toml")).code == 0
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    (block,) = [b for b in blocks if "logbook.integrations.lm_eval" in b and "vllm" in b]
    monkeypatch.setitem(sys.modules, "lm_eval", _stand_in_lm_eval())
    exec(compile(block, str(DOC), "exec"), {"__name__": "doc_example"})
    (run,) = runs()
    assert run["arm"] == "q8" and run["task"] == "hellaswag" and run["plan"] is not None
    assert run["apparatus"]["kv_cache_precision"] == "fp8_e5m2"
    assert capsys.readouterr().out.strip() == f"[{len(exported_lines()) - 1}]"


def exported_lines() -> list[str]:
    r = run_cli("export")
    return r.out.splitlines()
