"""Few-shot studies with real lm-evaluation-harness runs (issue 32): the suite is the items'
data, so a 0-shot and a 2-shot arm of one plan, and a 2-shot arm over several few-shot seeds,
are all counted; the prompt (lm-eval's task hash), `num_fewshot` and the few-shot seed are
apparatus. `record()` after `simple_evaluate` and lm_eval's command line name the same model
and placement for the same evaluation.

`lm_eval --model dummy` on the local task (data/lm_eval), as test_lm_eval_harness.py runs it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import plan_body, write_json
from conftest import run_cli
from test_lm_eval_harness import (
    LM_EVAL,
    OFFLINE,
    lm_eval_args,
    lm_eval_wrote,
    prepare,
    runs,
    shell,
)

pytestmark = [pytest.mark.slow,  # lm_eval takes ~10 s to import
              pytest.mark.skipif(LM_EVAL is None, reason="needs lm-evaluation-harness")]

SEEDS = ("0,1234,1234,2", "0,1234,1234,3", "4")  # the 4th slot (all four for one value):
FEWSHOT_SEEDS = (2, 3, 4)                         # lm-eval's fewshot_seed


def identity(samples: list[dict[str, Any]]) -> str:
    """docs/recording.md's lm-eval suite identity, from lm_eval's samples lines."""
    triples = sorted([str(s["doc_id"]), s["doc_hash"], s["target_hash"]] for s in samples)
    return "sha256:" + hashlib.sha256(
        json.dumps(triples, separators=(",", ":")).encode()).hexdigest()


def shots_plan(work: Path) -> None:
    """0-shot against 2-shot; the prompt (its hash) changes with the shots, and says so."""
    body = plan_body("shots", arms=("zero", "two"),
                     variable=["harness_config.num_fewshot", "prompt_hash"],
                     suite={"name": "tiny_mc", "version": "1", "n_items": 12},
                     metric={"name": "acc", "kind": "proportion"})
    body["arms"][0]["apparatus"] = {"harness_config.num_fewshot": 0}
    body["arms"][1]["apparatus"] = {"harness_config.num_fewshot": 2}
    assert run_cli("plan", str(write_json(work / "plan.json", body))).code == 0


def test_zero_and_two_shot_arms_and_a_two_shot_arm_over_fewshot_seeds(
        ledger_dir: Path) -> None:
    prepare(ledger_dir, plan=False)
    shots_plan(ledger_dir)
    # the 0-shot run under `logbook run`, the three 2-shot runs by lm_eval itself, at once
    env = {**os.environ, **OFFLINE}
    started = [subprocess.Popen(
        [sys.executable, "-m", "logbook", "run", "--plan", "shots", "--arm", "zero", "--",
         *lm_eval_args("tiny_mc", "out0", "--log_samples", "--num_fewshot", "0")],
        cwd=ledger_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    started += [subprocess.Popen(
        lm_eval_args("tiny_mc", f"out2-{i}", "--log_samples", "--num_fewshot", "2",
                     "--seed", seed), cwd=ledger_dir, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for i, seed in enumerate(SEEDS)]
    for process in started:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    for i in range(len(SEEDS)):
        r = run_cli("append", "--from", "lm-eval", f"out2-{i}", "--plan", "shots",
                    "--arm", "two")
        assert r.code == 0 and "not counted" not in r.err, r.err
    zero, *two = runs()
    assert [r["arm"] for r in (zero, *two)] == ["zero", "two", "two", "two"]
    assert all(r["plan"] and r["status"] == "completed" for r in (zero, *two))

    wrote = [lm_eval_wrote(ledger_dir / out, "tiny_mc")
             for out in ("out0", *(f"out2-{i}" for i in range(len(SEEDS))))]
    # lm_eval's own doc and target hashes do not move with the shots or the seed; its task
    # hash (over the prompts) does, every time
    assert len({identity(samples) for _, _, samples in wrote}) == 1
    task_hashes = [results["task_hashes"]["tiny_mc"] for _, results, _ in wrote]
    assert len(set(task_hashes)) == 4
    apps = [r["apparatus"] for r in (zero, *two)]
    assert {a["dataset_hash"] for a in apps} == {identity(wrote[0][2])}
    assert [a["prompt_hash"] for a in apps] == [f"sha256:{h}" for h in task_hashes]
    assert [a["harness_config"]["num_fewshot"] for a in apps] == [0, 2, 2, 2]
    assert [a["harness_config"]["seeds"]["fewshot_seed"] for a in apps[1:]] == list(
        FEWSHOT_SEEDS)
    for app in apps:
        assert app["model"] == "dummy" and app["placement"] == {"requested": "cuda:0"}

    r = run_cli("report", "shots", "--json")
    assert r.code == 0, r.err
    arms = {a["name"]: a for a in orjson.loads(r.out)["arms"]}
    assert arms["zero"]["completed"] == 1 and arms["two"]["completed"] == 3
    # the reporting line names a device the machine has, and cuda:0 only as requested
    line = arms["two"]["line"]
    machine_gpus = zero["apparatus"].get("hardware", {}).get("gpu") or zero["apparatus"][
        "captured"].get("gpus")
    if machine_gpus:
        assert "cuda:0 requested" in line, line
    else:
        assert "cuda" not in line, line
    # the arms differ in the shots and the prompts they make, nothing else (no A06 confound)
    r = run_cli("audit", "--json")
    assert r.code in (0, 1), r.err
    assert [f for f in orjson.loads(r.out)["findings"] if f["check"] == "A06"] == []
    assert run_cli("verify").code == 0


def test_record_and_the_command_line_name_the_same_model_and_placement(
        ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same 2-shot evaluation, by lm_eval's command line (which asks for cuda:0 when given
    no --device) and by simple_evaluate asked for the same device, then record()."""
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    prepare(ledger_dir, plan=False)
    shots_plan(ledger_dir)
    done = shell(ledger_dir, *lm_eval_args("tiny_mc", "out", "--log_samples",
                                           "--num_fewshot", "2", "--seed", "0,1234,1234,7"))
    assert done.returncode == 0, done.stderr
    _, written, _ = lm_eval_wrote(ledger_dir / "out", "tiny_mc")
    assert written["model_name"] != "dummy"  # lm-eval's own name for it: made up
    r = run_cli("append", "--from", "lm-eval", "out", "--plan", "shots", "--arm", "two")
    assert r.code == 0, r.err

    import lm_eval
    from lm_eval.tasks import TaskManager

    from logbook.integrations.lm_eval import record

    results = lm_eval.simple_evaluate(
        model="dummy", tasks=["tiny_mc"], log_samples=True, num_fewshot=2,
        fewshot_random_seed=7, device="cuda:0",
        task_manager=TaskManager(include_path=str(ledger_dir / "tasks")))
    (entry,) = record(results, plan="shots", arm="two", ledger=ledger_dir)
    by_cli, by_record = runs()
    assert by_record == entry.body and by_record["arm"] == by_cli["arm"] == "two"
    cli, rec = by_cli["apparatus"], by_record["apparatus"]
    for field in ("model", "placement", "dataset_hash", "prompt_hash", "engine"):
        assert cli[field] == rec[field], field
    assert rec["model"] == "dummy" and rec["placement"] == {"requested": "cuda:0"}
    for field in ("num_fewshot", "seeds"):
        assert cli["harness_config"][field] == rec["harness_config"][field], field
    assert rec["harness_config"]["num_fewshot"] == 2
    assert rec["harness_config"]["seeds"]["fewshot_seed"] == 7
    # asked for no device, simple_evaluate records none requested
    plain = lm_eval.simple_evaluate(
        model="dummy", tasks=["tiny_mc"], log_samples=True, num_fewshot=2,
        task_manager=TaskManager(include_path=str(ledger_dir / "tasks")))
    (entry,) = record(plain, plan="shots", arm="two", ledger=ledger_dir)
    assert entry.body["apparatus"]["model"] == "dummy"
    assert "placement" not in entry.body["apparatus"]
    assert run_cli("verify").code == 0
