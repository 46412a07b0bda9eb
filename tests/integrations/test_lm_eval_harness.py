"""Real lm-evaluation-harness runs (`pip install -e '.[lm-eval]'`): `lm_eval --model dummy` on a
local task (data/lm_eval: twelve questions read from a JSON Lines file; offline, no Hub), under
`logbook run` without --from, and `simple_evaluate` in Python followed by `record()`.

The dummy model answers at random, so every figure is checked against lm-eval's own output of
the same run (its results file, its samples, its results dictionary), never against a number.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import plan_body, write_json
from conftest import run_cli

DATA = Path(__file__).parent / "data" / "lm_eval"
LM_EVAL = shutil.which("lm_eval", path=str(Path(sys.executable).parent))
OFFLINE = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}

pytestmark = [pytest.mark.slow,  # lm_eval takes ~10 s to import
              pytest.mark.skipif(LM_EVAL is None or find_spec("lm_eval") is None,
                                 reason="needs lm-evaluation-harness: pip install -e "
                                 "'.[lm-eval]' (torch==2.13.0 first)")]


def prepare(work: Path, plan: bool = True) -> None:
    """The local tasks in ``work/tasks`` (their data_files are relative to it), and a plan
    whose suite is tiny_mc."""
    shutil.copytree(DATA, work / "tasks")
    if plan:
        body = plan_body("tiny-mc", arms=("dummy", "other"),
                         suite={"name": "tiny_mc", "version": "1", "n_items": 12},
                         metric={"name": "acc", "kind": "proportion"})
        assert run_cli("plan", str(write_json(work / "plan.json", body))).code == 0


def lm_eval_args(task: str, out: str, *extra: str) -> list[str]:
    assert LM_EVAL is not None
    return [LM_EVAL, "--model", "dummy", "--tasks", task, "--include_path", "tasks",
            "--output_path", out, *extra]


def shell(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=work, env={**os.environ, **OFFLINE},
                          capture_output=True, text=True, timeout=300, check=False)


def runs(ledger: Path | None = None) -> list[dict[str, Any]]:
    r = run_cli("export") if ledger is None else run_cli("--ledger", str(ledger), "export")
    assert r.code == 0, r.err
    return [e["entry"]["body"] for e in map(orjson.loads, r.out.splitlines())
            if e["entry"]["kind"] == "run"]


def lm_eval_wrote(out: Path, task: str) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    """lm_eval's own files of one run: its results file, results and samples lines."""
    (results_file,) = out.glob("*/results_*.json")
    stamp = results_file.name.removeprefix("results_").removesuffix(".json")
    samples = results_file.with_name(f"samples_{task}_{stamp}.jsonl")
    lines = [orjson.loads(line) for line in samples.read_bytes().splitlines() if line.strip()]
    return results_file, orjson.loads(results_file.read_bytes()), lines


def check_figures(run: dict[str, Any], reported: dict[str, Any],
                  samples: list[dict[str, Any]]) -> None:
    """The run holds lm-eval's figures and its per-item outcomes, document by document."""
    o = run["outcomes"]
    assert o["metric"] == "acc" and len(o["id"]) == len(samples) == 12
    assert o["id"] == [str(s["doc_id"]) for s in samples]
    assert o["score"] == [float(s["acc"]) for s in samples]
    assert run["reported"]["value"] == reported["acc,none"]
    assert run["reported"]["stderr"] == reported["acc_stderr,none"]
    assert math.fsum(o["score"]) / len(o["score"]) == pytest.approx(reported["acc,none"],
                                                                    abs=1e-12)


def test_logbook_run_finds_lm_evals_output_without_from(ledger_dir: Path,
                                                        tmp_path: Path) -> None:
    prepare(ledger_dir)
    done = shell(ledger_dir, sys.executable, "-m", "logbook", "run", "--plan", "tiny-mc",
                 "--arm", "dummy", "--", *lm_eval_args("tiny_mc", "out", "--log_samples"))
    assert done.returncode == 0, done.stderr
    assert "reading the lm-eval output the command writes to out" in done.stderr
    results_file, results, samples = lm_eval_wrote(ledger_dir / "out", "tiny_mc")
    (run,) = runs()  # exactly one
    assert run["status"] == "completed" and run["arm"] == "dummy" and run["plan"]
    assert run["task"] == "tiny_mc" and run["source"]["file"] == results_file.name
    check_figures(run, results["results"]["tiny_mc"], samples)
    assert run["apparatus"]["captured"]["command"][1:3] == ["--model", "dummy"]
    # the run `logbook append --from lm-eval` makes of the same files
    other = tmp_path / "other"
    other.mkdir()
    assert run_cli("init", str(other), "--name", "other").code == 0
    r = run_cli("--ledger", str(other), "append", "--from", "lm-eval", str(ledger_dir / "out"))
    assert r.code == 0, r.err
    (appended,) = runs(other)
    for field in ("task", "outcomes", "reported", "source"):  # "started": logbook run's clock
        assert run[field] == appended[field], field
    assert run_cli("verify").code == 0


def test_a_task_that_errors_is_a_failed_run_with_lm_evals_exit(ledger_dir: Path) -> None:
    prepare(ledger_dir)
    done = shell(ledger_dir, sys.executable, "-m", "logbook", "run", "--plan", "tiny-mc",
                 "--arm", "dummy", "--", *lm_eval_args("tiny_broken", "out", "--log_samples"))
    assert done.returncode == 1, done.stderr  # lm_eval's own exit status, passed on
    assert "'query' is undefined" in done.stderr  # lm_eval's traceback reached the terminal
    (run,) = runs()
    assert run["status"] == "failed" and "outcomes" not in run  # no items: none was scored
    assert run["reason"].startswith("the command exited with status 1: jinja2.exceptions."
                                    "UndefinedError: 'query' is undefined; outcomes not read")
    (output,) = run["logs"]  # the command's output, kept with the run
    assert "UndefinedError: 'query' is undefined" in output["excerpt"]


def test_without_log_samples_nothing_is_recorded_and_it_says_why(ledger_dir: Path) -> None:
    prepare(ledger_dir, plan=False)
    # under logbook run: refused before lm_eval starts
    done = shell(ledger_dir, sys.executable, "-m", "logbook", "run", "--",
                 *lm_eval_args("tiny_mc", "out"))
    assert done.returncode == 2 and "give lm_eval --log_samples" in done.stderr
    assert not (ledger_dir / "out").exists()
    # lm_eval run by hand without it: its output cannot be appended item by item
    done = shell(ledger_dir, *lm_eval_args("tiny_mc", "out"))
    assert done.returncode == 0, done.stderr
    (results_file,) = (ledger_dir / "out").glob("*/results_*.json")  # results, no samples
    assert not list(results_file.parent.glob("samples_*"))
    r = run_cli("append", "--from", "lm-eval", "out")
    assert r.code == 2 and "samples file not found" in r.err and "--log_samples" in r.err
    assert r.err.count("\n") == 1 and runs() == []


def test_record_after_simple_evaluate(ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    prepare(ledger_dir)
    import lm_eval
    from lm_eval.tasks import TaskManager

    from logbook.errors import InputError
    from logbook.integrations.lm_eval import record

    tasks = TaskManager(include_path=str(ledger_dir / "tasks"))
    results = lm_eval.simple_evaluate(model="dummy", tasks=["tiny_mc"], task_manager=tasks,
                                      log_samples=True)
    assert results is not None
    (entry,) = record(results, plan="tiny-mc", arm="dummy", ledger=ledger_dir)
    (run,) = runs()
    assert entry.body == run and run["arm"] == "dummy" and run["plan"]
    check_figures(run, results["results"]["tiny_mc"], results["samples"]["tiny_mc"])
    assert run["source"]["file"] == "simple_evaluate results"
    assert run["apparatus"]["model"] == "dummy"
    # the same evaluation saved as lm_eval's command line saves it, then appended from its files:
    # the same run but for what the file adds (its name and hash) and what capture adds
    from lm_eval.loggers import EvaluationTracker

    saved = {k: v for k, v in results.items() if k != "samples"}
    tracker = EvaluationTracker(output_path=str(ledger_dir / "saved"))
    tracker.save_results_aggregated(results=saved, samples=results["samples"])
    tracker.save_results_samples(task_name="tiny_mc", samples=results["samples"]["tiny_mc"])
    other = ledger_dir.parent / "other"
    other.mkdir()
    assert run_cli("init", str(other), "--name", "other").code == 0
    r = run_cli("--ledger", str(other), "append", "--from", "lm-eval", str(ledger_dir / "saved"))
    assert r.code == 0, r.err
    (from_file,) = runs(other)
    for field in ("task", "outcomes", "reported", "started", "note"):
        assert run.get(field) == from_file.get(field), field
    mine = {k: v for k, v in run["apparatus"].items() if k != "captured"}
    assert mine == from_file["apparatus"]
    with pytest.raises(InputError, match="already"):  # the same results, twice
        record(results, plan="tiny-mc", arm="dummy", ledger=ledger_dir)
    # without log_samples there are no per-item scores: refused, nothing written
    plain = lm_eval.simple_evaluate(model="dummy", tasks=["tiny_mc"], task_manager=tasks,
                                    log_samples=False)
    with pytest.raises(InputError, match="log_samples=True"):
        record(plain, plan="tiny-mc", arm="dummy", ledger=ledger_dir)
    assert len(runs()) == 1 and run_cli("verify").code == 0


DOC = Path(__file__).parents[2] / "docs" / "recording.md"


def test_doc_dummy_model_commands_run(ledger_dir: Path) -> None:
    """docs/recording.md's `dummy` example: its first bash block, verbatim, then its python
    block, then the few-shot study's bash block, in the same folder with lm-evaluation-harness
    for real; and the doc's recipe for the suite identity, on lm_eval's samples."""
    import hashlib
    import json
    import re

    text = DOC.read_text()
    shell_block, shots_block = re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S)
    (python_block,) = [b for b in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
                       if "TaskManager" in b]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", shell_block], cwd=ledger_dir,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-c", python_block], cwd=ledger_dir,
                          env={**env, **OFFLINE}, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", shots_block], cwd=ledger_dir,
                          env={**env, **OFFLINE}, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "Arm two-shot (treatment): 2/2 completed" in done.stdout, done.stdout
    assert "Arm zero-shot (control): 2/2 completed" in done.stdout, done.stdout
    by_run, by_record, *shots = runs()
    assert [r["arm"] for r in shots] == ["zero-shot", "two-shot"] * 2
    assert all(r["plan"] for r in shots)
    (recipe,) = re.findall(r"^    (triples = .*?\n    \"sha256:\".*?)\n", text, re.M | re.S)
    for run, out in zip(shots, ("out-0-1", "out-2-1", "out-0-2", "out-2-2"), strict=True):
        _, written, samples = lm_eval_wrote(ledger_dir / out, "tiny_mc")
        local = {"samples": samples, "hashlib": hashlib, "json": json}
        exec(recipe.replace("\n    ", "\n").replace('"sha256:" +', "found = \"sha256:\" +"),
             local)
        assert run["apparatus"]["dataset_hash"] == local["found"]
        assert run["apparatus"]["prompt_hash"] == "sha256:" + written["task_hashes"]["tiny_mc"]
    assert len({r["apparatus"]["dataset_hash"] for r in shots}) == 1
    assert len({r["apparatus"]["prompt_hash"] for r in shots if r["arm"] == "two-shot"}) == 2
    assert by_run["arm"] == by_record["arm"] == "dummy" and by_run["plan"] == by_record["plan"]
    _, results, samples = lm_eval_wrote(ledger_dir / "out", "tiny_mc")
    assert by_run["outcomes"]["score"] == [float(s["acc"]) for s in samples]
    assert by_run["reported"]["value"] == results["results"]["tiny_mc"]["acc,none"]
    assert by_record["source"]["file"] == "simple_evaluate results"
    assert len(by_record["outcomes"]["id"]) == 8
