"""`logbook run` under issue 13: it reads only what its command wrote, refuses a pinned
contradiction before the command starts, says when a command that exited 0 left a failed run,
keeps the harness's own error, and never calls the tree dirty for the ledger's own folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import prebuilt
from builders import plan_body, write_json
from conftest import run_cli
from test_record import (
    FIXTURES,
    INSPECT_FAILED,
    MARK,
    PY,
    exported,
    head,
    lb,
    lm_copy,
    one_sentence,
    runs,
)

# the module's ledger is initialised once and copied into each test (tests/prebuilt.py)
initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir

INSPECT_MAIN = FIXTURES / "inspect/run-main"
INSPECT_ERRORS = FIXTURES / "inspect/run-errors"


def inspect_plan(slug: str = "arith", **extra: object) -> str:
    body = plan_body(slug, n_items=200, suite={"name": "arith", "version": "1", "n_items": 200},
                     metric={"name": "match.accuracy", "kind": "proportion"}, **extra)
    r = run_cli("plan", str(write_json(Path(f"{slug}.plan.json"), body)))
    assert r.code == 0, r.err
    return slug


def copy_cmd(dst: Path, src_dir: Path, suffix: str = ".eval") -> list[str]:
    """A command that writes the folder's logs into ``dst`` (fresh times), as Inspect would."""
    files = [f for f in sorted(src_dir.iterdir()) if f.suffix == suffix]
    return [PY, "-c", "import pathlib, shutil, sys\n"
            "dst = pathlib.Path(sys.argv[-1]); dst.mkdir(parents=True, exist_ok=True)\n"
            "for s in sys.argv[1:-1]: shutil.copyfile(s, dst / pathlib.Path(s).name)\n",
            *map(str, files), str(dst)]


def test_run_into_a_folder_holding_an_older_log(ledger_dir: Path) -> None:
    inspect_plan()
    logs = ledger_dir / "logs"
    subprocess.run(copy_cmd(logs, INSPECT_MAIN), check=True)
    r = run_cli("append", "--from", "inspect", str(logs), "--plan", "arith", "--arm", "f16")
    assert r.code == 0, r.err
    # the command writes a second log beside the first: only its own is read
    r = lb("run", "--plan", "arith", "--arm", "q8", "--from", "inspect", logs, "--",
           *copy_cmd(logs, INSPECT_ERRORS), cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    older, mine = runs()
    assert mine["source"]["file"] == next(INSPECT_ERRORS.glob("*.eval")).name
    assert mine["source"]["file"] != older["source"]["file"] and mine["arm"] == "q8"
    # a command that writes the recorded log again: it is that same run, not a new one
    before = head()
    r = lb("run", "--plan", "arith", "--arm", "q8", "--from", "inspect", logs, "--",
           *copy_cmd(logs, INSPECT_MAIN), cwd=ledger_dir)
    assert r.returncode == 2, r.stderr
    line = one_sentence(r.stderr)
    assert "body.source" in line and "already in the ledger as run @2" in line
    assert head() == before


def test_a_pinned_contradiction_is_refused_before_the_command_runs(ledger_dir: Path) -> None:
    body = plan_body("pins")
    body["arms"][1]["apparatus"] = {"kv_cache_precision": "q8"}
    body["pinned"] = {"model": "m-7b"}
    assert run_cli("plan", str(write_json(Path("pins.json"), body))).code == 0
    write_json(ledger_dir / "app.json", {"model": "m-7b", "kv_cache_precision": "f16"})
    before = head()
    r = lb("run", "--plan", "pins", "--arm", "q8", "--apparatus", "app.json", "--outcomes",
           "o.jsonl", "--", PY, "-c", MARK, cwd=ledger_dir)
    assert r.returncode == 2, r.stderr
    line = one_sentence(r.stderr)
    assert "apparatus.kv_cache_precision" in line and "'f16'" in line and "'q8'" in line
    assert not (ledger_dir / "ran").exists()
    assert head() == before
    # what logbook captures is checked too: a pin on the python that runs
    body = plan_body("pinpy", pinned={"captured.python": "2.7.18"})
    assert run_cli("plan", str(write_json(Path("pinpy.json"), body))).code == 0
    before = head()
    r = lb("run", "--plan", "pinpy", "--arm", "f16", "--outcomes", "o.jsonl", "--", PY, "-c",
           MARK, cwd=ledger_dir)
    assert r.returncode == 2 and "apparatus.captured.python" in one_sentence(r.stderr)
    assert "'2.7.18'" in r.stderr and sys.version.split()[0] in r.stderr
    assert not (ledger_dir / "ran").exists() and head() == before


def test_from_with_no_path_is_refused_before_anything_runs(ledger_dir: Path) -> None:
    before = head()
    r = lb("run", "--from", "lm-eval", "--", PY, "-c", MARK, cwd=ledger_dir)
    assert r.returncode == 2, r.stderr
    assert "PATH is '--'" in one_sentence(r.stderr)
    assert not (ledger_dir / "ran").exists() and head() == before


def test_an_inspect_error_log_under_run_exits_1(ledger_dir: Path) -> None:
    inspect_plan()
    failed = next(INSPECT_FAILED.glob("*.eval"))
    from logbook.ingest.inspect_reader import read_log

    error = read_log(failed)[0]["error"]["message"]
    r = lb("run", "--plan", "arith", "--arm", "f16", "--from", "inspect", "logs", "--",
           *copy_cmd(Path("logs"), INSPECT_FAILED), cwd=ledger_dir)
    assert r.returncode == 1, r.stderr  # the command exited 0; the run it left is failed
    (run,) = runs()
    assert run["status"] == "failed" and run["reason"] == error
    assert f"the command exited 0, but run 2 is failed: {error}" in r.stderr


def test_a_failed_command_leaves_the_harness_error_in_the_reason(ledger_dir: Path) -> None:
    said = ("ValueError: Tasks not found: mini_mcq. Try `lm-eval --tasks {list_groups,"
            "list_subtasks,list_tags,list}` to list out all available names")
    code = f"import sys\nprint('loading tasks')\nprint({said!r}, file=sys.stderr)\nsys.exit(1)"
    r = lb("run", "--from", "lm-eval", "out", "--", PY, "-c", code, cwd=ledger_dir)
    assert r.returncode == 1, r.stderr
    (run,) = runs()
    assert run["status"] == "failed"
    assert run["reason"].startswith("the command exited with status 1: ValueError: Tasks not "
                                    "found: mini_mcq.")
    assert "outcomes not read" in run["reason"]


def test_the_ledger_folder_never_dirties_the_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q"], check=True)
    assert run_cli("init", str(repo), "--name", "t").code == 0
    assert (repo / ".logbook/.gitignore").read_text() == "*\n"
    (repo / "eval.py").write_text("print('hi')\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    r = lb("run", "--outcomes", "o.jsonl", "--", "true", cwd=repo)
    assert r.returncode == 1, r.stderr  # `true` writes no o.jsonl: a failed run, said so
    (line,) = [e for e in exported(repo) if e["entry"]["kind"] == "run"]
    captured = line["entry"]["body"]["apparatus"]["captured"]["git"]
    assert captured["dirty"] is False and "diff_hash" not in captured
    (repo / "eval.py").write_text("print('changed')\n")  # a real change still counts
    r = lb("run", "--outcomes", "o.jsonl", "--", "true", cwd=repo)
    last = [e for e in exported(repo) if e["entry"]["kind"] == "run"][-1]
    assert last["entry"]["body"]["apparatus"]["captured"]["git"]["dirty"] is True


def test_lm_eval_two_tasks_under_run(ledger_dir: Path) -> None:
    body = plan_body("gen", suite={"name": "synth_gen", "version": "1", "n_items": 50},
                     metric={"name": "exact_match", "kind": "proportion"})
    assert run_cli("plan", str(write_json(Path("gen.json"), body))).code == 0
    r = lb("run", "--plan", "gen", "--arm", "f16", "--from", "lm-eval", "out", "--",
           *lm_copy(ledger_dir / "out", FIXTURES / "lm_eval/run-2tasks-seed6"), cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    by_task = {b["task"]: b for b in runs()}
    assert by_task["synth_gen"]["arm"] == "f16" and by_task["synth_mc"]["plan"] is None
    assert "(synth_mc) is not plan gen's suite 'synth_gen'" in r.stderr


def test_a_run_of_another_suite_under_run_is_kept_exploratory(ledger_dir: Path) -> None:
    """The command has run: what it made is kept, as an exploratory run saying why, never
    counted in the plan; `logbook run` exits 1."""
    body = plan_body("mc", suite={"name": "synth_mc", "version": "1", "n_items": 200,
                                  "dataset_hash": "sha256:" + "a" * 64})
    assert run_cli("plan", str(write_json(Path("mc.json"), body))).code == 0
    r = lb("run", "--plan", "mc", "--arm", "f16", "--from", "lm-eval", "out", "--",
           *lm_copy(ledger_dir / "out", FIXTURES / "lm_eval/run-seed1"), cwd=ledger_dir)
    assert r.returncode == 1, r.stderr
    assert "not counted in plan mc: " in r.stderr and "apparatus.dataset_hash" in r.stderr
    (run,) = runs()
    assert run["plan"] is None and run["arm"] is None and run["status"] == "completed"
    assert len(run["outcomes"]["id"]) == 200
    assert "not counted in plan mc" in run["note"] and "sha256:" + "a" * 64 in run["note"]
