"""Pins compare values, not spellings, and `logbook run` reads the harness's own flags before
it starts (issue 32, items 2 and 8): lm-eval writes `--batch_size 1` as "1" and a pin of 1 takes
it; a flag that contradicts a pin is refused before the command runs (its marker file never
appears); an arm that has its runs_per_arm is not run again unless --beyond-plan says why."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import plan_body, write_json
from conftest import run_cli

from logbook.ledger.intake import denotes


@pytest.mark.parametrize(("value", "want"), [
    ("1", 1), (1, 1.0), ("8", 8), ("True", True), ("true", True), ("False", False),
    ("0.5", 0.5), ("1e-3", 0.001), ([1, "2"], [1, 2]), ({"a": "3"}, {"a": 3}), ("auto", "auto"),
])
def test_values_that_denote_the_pin(value: Any, want: Any) -> None:
    assert denotes(value, want) and denotes(want, value)


@pytest.mark.parametrize(("value", "want"), [
    ("auto", 8), ("auto:4", 4), ("01", 1), ("1 ", 1), (" 1", 1), ("yes", True), ("1", True),
    (True, 1), (0, False), ("1", 2), ([1], [1, 1]), ({"a": 1}, {"b": 1}), (None, 0),
    ("None", None), ("8", "08"),
])
def test_values_that_do_not(value: Any, want: Any) -> None:
    assert not denotes(value, want) and not denotes(want, value)


def _plan(work: Path, **extra: Any) -> None:
    body = plan_body("pinned", **extra)
    r = run_cli("plan", str(write_json(work / "plan.json", body)))
    assert r.code == 0, r.err


def _stand_in(folder: Path, name: str) -> Path:
    """A program named like the harness that only leaves a marker: if it runs, it shows."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport pathlib\n"
                    "pathlib.Path('ran-marker').write_text('ran')\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _run(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "logbook", "run", *args], cwd=work,
                          env=os.environ.copy(), capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.mark.parametrize(("pinned", "command"), [
    ({"harness_config.batch_size": 1},
     ["lm_eval", "--model", "dummy", "--tasks", "t", "--batch_size", "8", "--output_path",
      "out", "--log_samples"]),
    ({"harness_config.num_fewshot": 0},
     ["lm_eval", "--model", "dummy", "--tasks", "t", "--num_fewshot", "5", "--output_path",
      "out", "--log_samples"]),
    ({"harness_config.seeds.fewshot_seed": 1234},
     ["lm_eval", "--model", "dummy", "--tasks", "t", "--seed", "0,1234,1234,7",
      "--output_path", "out", "--log_samples"]),
    ({"model": "my-org/my-7b"},
     ["lm_eval", "--model", "hf", "--model_args", "pretrained=other/model,dtype=bf16",
      "--tasks", "t", "--output_path", "out", "--log_samples"]),
    ({"harness_config.config.epochs": 2}, ["inspect", "eval", "t.py", "--epochs", "3"]),
    ({"harness_config.task_args.shots": 0}, ["inspect", "eval", "t.py", "-T", "shots=5"]),
    ({"decoding.temperature": 0}, ["inspect", "eval", "t.py", "--temperature", "0.7"]),
])
def test_a_flag_that_contradicts_a_pin_is_refused_before_the_command_runs(
        pinned: dict[str, Any], command: list[str], ledger_dir: Path, tmp_path: Path) -> None:
    _plan(ledger_dir, pinned=pinned)
    program = _stand_in(tmp_path / "bin", command[0])
    before = run_cli("log", "--json").json
    r = _run(ledger_dir, "--plan", "pinned", "--arm", "f16", "--", str(program), *command[1:])
    assert r.returncode == 2, r.stderr
    (key,) = pinned
    last = r.stderr.splitlines()[-1]  # (the line before says which output it would read)
    assert key in last and "the command line's apparatus" in last, r.stderr
    assert not (ledger_dir / "ran-marker").exists()  # the command never started
    assert run_cli("log", "--json").json == before
    # the same flags, agreeing with the pin, start the command (which then writes nothing)
    valued = ("--batch_size", "--num_fewshot", "--epochs", "--temperature")
    agreeing = [str(pinned[key]) if i > 0 and command[i - 1] in valued else a
                for i, a in enumerate(command)]
    if agreeing != command:
        r = _run(ledger_dir, "--plan", "pinned", "--arm", "f16", "--", str(program),
                 *agreeing[1:])
        assert (ledger_dir / "ran-marker").exists(), r.stderr


def test_beyond_plan(ledger_dir: Path, tmp_path: Path) -> None:
    _plan(ledger_dir, runs_per_arm=1, n_items=3)
    items = tmp_path / "items.jsonl"
    writer = ["sh", "-c", "touch ran-marker; printf '%s\\n' "
              "'{\"id\": \"a\", \"score\": 1}' '{\"id\": \"b\", \"score\": 0}' > " + str(items)]
    r = _run(ledger_dir, "--plan", "pinned", "--arm", "f16", "--outcomes", str(items), "--",
             *writer)
    assert r.returncode == 0, r.stderr
    (ledger_dir / "ran-marker").unlink()
    r = _run(ledger_dir, "--plan", "pinned", "--arm", "f16", "--outcomes", str(items), "--",
             *writer)
    assert r.returncode == 2 and "--beyond-plan" in r.stderr and "runs_per_arm" in r.stderr
    assert not (ledger_dir / "ran-marker").exists()
    r = _run(ledger_dir, "--plan", "pinned", "--arm", "f16", "--outcomes", str(items),
             "--beyond-plan", "the first run's GPU was shared", "--", *writer)
    assert r.returncode == 0, r.stderr
    runs = [e["entry"]["body"] for e in run_cli("log", "--json").json
            if e["kind"] == "run"]
    assert runs[-1]["beyond_plan"] == "the first run's GPU was shared" and runs[-1]["plan"]
    audit = run_cli("audit", "--json").json
    (a04,) = [f for f in audit["findings"] if f["check"] == "A04"]
    assert "the first run's GPU was shared" in a04["message"]
    # the other arm is not full: no reason needed, and none is refused
    r = _run(ledger_dir, "--plan", "pinned", "--arm", "q8", "--outcomes", str(items), "--",
             *writer)
    assert r.returncode == 0, r.stderr


LM_EVAL_DATA = Path(__file__).parents[1] / "integrations" / "data" / "lm_eval"


@pytest.mark.slow
def test_a_batch_size_pin_takes_lm_evals_string(ledger_dir: Path) -> None:
    """Real lm-evaluation-harness writes `--batch_size 1` as "1"; a pin of 1 takes it."""
    import shutil
    from importlib.util import find_spec

    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent))
    if lm_eval is None or find_spec("lm_eval") is None:
        pytest.skip("needs lm-evaluation-harness: pip install -e '.[lm-eval]'")
    shutil.copytree(LM_EVAL_DATA, ledger_dir / "tasks")
    body = plan_body("tiny", arms=("dummy", "other"), pinned={"harness_config.batch_size": 1},
                     suite={"name": "tiny_mc", "version": "1", "n_items": 12},
                     metric={"name": "acc", "kind": "proportion"})
    assert run_cli("plan", str(write_json(ledger_dir / "plan.json", body))).code == 0
    r = subprocess.run([sys.executable, "-m", "logbook", "run", "--plan", "tiny", "--arm",
                        "dummy", "--", lm_eval, "--model", "dummy", "--tasks", "tiny_mc",
                        "--include_path", "tasks", "--batch_size", "1", "--output_path", "out",
                        "--log_samples"], cwd=ledger_dir, capture_output=True, text=True,
                       env={**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    (results,) = (ledger_dir / "out").glob("*/results_*.json")
    assert orjson.loads(results.read_bytes())["config"]["batch_size"] == "1"
    (run,) = [e["entry"]["body"] for e in run_cli("log", "--json").json if e["kind"] == "run"]
    assert run["plan"] and run["arm"] == "dummy"  # counted, not refused
    assert run["apparatus"]["harness_config"]["batch_size"] == "1"
