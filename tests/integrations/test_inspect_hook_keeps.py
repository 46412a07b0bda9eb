"""The hook keeps every run (issue 32): real `inspect eval` runs with logbook's hook, as
test_inspect_hook.py runs them. A run the plan refuses (a pinned value contradicted, a misspelt
LOGBOOK_PLAN, an arm the plan lacks) ends as an exploratory run whose note says why, as under
`logbook run`; only a ledger that cannot be written at all (here: its lock held by another
writer) sends a run to the spool, which `brief` and `logbook spool list` show and `logbook
append --spool` empties. After each scenario every log Inspect wrote is a run in the ledger and
the spool is empty.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from builders import plan_body, write_json
from conftest import run_cli
from test_inspect_hook import INSPECT, SITE, inspect_eval, logs, runs

pytestmark = pytest.mark.skipif(INSPECT is None, reason="needs inspect_ai")

SLUG = "tiny-echo"
HOOKED = {"LOGBOOK_PLAN": SLUG, "LOGBOOK_ARM": "echo"}
DOC = Path(__file__).parents[2] / "docs" / "recording.md"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    assert run_cli("init", str(folder), "--name", "evals").code == 0
    return folder


def make_plan(tmp_path: Path, **extra: Any) -> str:
    """Plan tiny-echo over the tiny task (its suite and Inspect's metric name), less what
    ``extra`` changes; its digest."""
    body = plan_body(SLUG, arms=("echo", "other"),
                     suite={"name": "tiny", "version": "1", "n_items": 6},
                     metric={"name": "includes.accuracy", "kind": "proportion"})
    r = run_cli("plan", str(write_json(tmp_path / "plan.json", {**body, **extra})), "--json")
    assert r.code == 0, r.err
    digest: str = r.json["digest"]
    return digest


def environment(**extra: str) -> dict[str, str]:
    """A shell's environment for logbook commands: this checkout's logbook and the offline
    model's provider, the venv's commands first, no LOGBOOK_ variable of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
    path = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return {**env, "PYTHONPATH": SITE, "PATH": path, **extra}


@contextmanager
def locked(work: Path) -> Iterator[None]:
    """Another writer holds the ledger's lock (as test_inspect_hook.py holds it)."""
    holder = sqlite3.connect(work / ".logbook" / "ledger.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def spooled(work: Path) -> list[Path]:
    return sorted((work / ".logbook" / "spool").glob("*.json"))


def nothing_outside(work: Path, *folders: str) -> list[dict[str, Any]]:
    """Every log Inspect wrote (in ``folders``) is one run in the ledger, and the spool is
    empty: the runs, in ledger order."""
    found = runs(work)
    written = sorted(p.name for f in folders or ("logs",) for p in (work / f).glob("*.eval"))
    assert sorted(r["source"]["file"] for r in found) == written
    assert spooled(work) == []
    return found


def test_a_pin_contradiction_ends_as_an_exploratory_run_as_under_logbook_run(
        work: Path, tmp_path: Path) -> None:
    make_plan(tmp_path, pinned={"engine": "vllm"})  # the echo model's engine is "echo"
    done = inspect_eval(work, env=HOOKED)
    (run,) = nothing_outside(work)
    assert run["plan"] is None and run["arm"] is None and run["status"] == "completed"
    assert run["note"].startswith(f"not counted in plan {SLUG}: ")
    assert "engine" in run["note"] and "vllm" in run["note"]
    assert run["note"] in done.stderr and "(completed) from" in done.stderr
    # `logbook run` keeps the same run the same way, with the same note
    assert INSPECT is not None
    wrapped = subprocess.run(
        [sys.executable, "-m", "logbook", "run", "--plan", SLUG, "--arm", "echo", "--from",
         "inspect", "wrapped", "--", INSPECT, "eval", "tiny_task.py", "--model", "echo/x",
         "--log-dir", "wrapped", "--max-samples", "1", "--display", "plain"],
        cwd=work, env=environment(LOGBOOK_DIR=str(work)), capture_output=True, text=True,
        timeout=300, check=False)
    assert wrapped.returncode == 1, wrapped.stderr  # kept out of the plan: exit 1
    hooked, under_run = nothing_outside(work, "logs", "wrapped")
    assert under_run["plan"] is None and under_run["note"] == hooked["note"]


def test_a_misspelt_plan_or_arm_ends_as_an_exploratory_run_naming_it(work: Path,
                                                                     tmp_path: Path) -> None:
    make_plan(tmp_path)
    typo = inspect_eval(work, env={"LOGBOOK_PLAN": "tiny-ecoh", "LOGBOOK_ARM": "echo"})
    wrong_arm = inspect_eval(work, env={"LOGBOOK_PLAN": SLUG, "LOGBOOK_ARM": "ecko"})
    first, second = nothing_outside(work)
    assert first["plan"] is None and first["note"] == (
        "not counted in plan tiny-ecoh: LOGBOOK_PLAN: 'tiny-ecoh' is not a digest, @SEQ or "
        "the slug of a plan")
    assert first["note"] in typo.stderr
    assert second["plan"] is None and second["note"] == (
        f"not counted in plan {SLUG}: LOGBOOK_ARM 'ecko' is not an arm of plan {SLUG} (its "
        "arms are echo, other)")
    assert second["note"] in wrong_arm.stderr
    assert "spool" not in typo.stderr + wrong_arm.stderr


def test_a_locked_ledger_spools_the_run_brief_and_spool_list_show_it_and_append_spool_appends_it(
        work: Path, tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    with locked(work):
        done = inspect_eval(work, env={**HOOKED, "LOGBOOK_LOCK_TIMEOUT": "0.2"})
        # the spool is listed while the ledger is still locked, and before it exists at all
        listed = run_cli("--ledger", str(work), "spool", "list", "--json")
    (file,) = spooled(work)
    (log,) = logs(work)
    assert f"it is spooled in {file}" in done.stderr and runs(work) == []
    assert listed.code == 0, listed.err
    (row,) = listed.json
    assert row["file"] == file.name and row["output"] == str(log) and row["source"] == "inspect"
    assert (row["plan"], row["arm"], row["runs"]) == (SLUG, "echo", 1)
    assert "locked" in row["why"] and row["spooled_at"].endswith("Z")

    text = run_cli("--ledger", str(work), "spool", "list")
    assert text.code == 0 and file.name in text.out and str(log) in text.out
    assert f"for plan {SLUG} arm echo: " in text.out and "locked" in text.out
    brief = run_cli("--ledger", str(work), "brief")
    assert brief.code == 0, brief.err
    assert "spooled runs, not in the ledger (1):" in brief.out and file.name in brief.out
    assert "1 run(s) wait in the spool" in brief.out  # among the next steps
    as_json = run_cli("--ledger", str(work), "brief", "--json").json
    assert as_json["spooled"] == listed.json
    assert any("wait in the spool" in step for step in as_json["next"])

    appended = run_cli("--ledger", str(work), "append", "--spool")
    assert appended.code == 0, appended.err
    assert f"from the spool ({file.name})" in appended.err
    (run,) = nothing_outside(work)
    assert run["plan"] == plan and run["arm"] == "echo"
    assert run_cli("--ledger", str(work), "brief", "--json").json["spooled"] == []
    again = run_cli("--ledger", str(work), "append", "--spool")
    assert again.code == 2 and "holds no runs" in again.err
    assert run_cli("--ledger", str(work), "verify").code == 0


def spool_a_run_its_plan_refuses(work: Path, tmp_path: Path) -> Path:
    """A hooked run for a plan that measures another metric, spooled because the ledger was
    locked: its spool file."""
    make_plan(tmp_path, metric={"name": "accuracy", "kind": "proportion"})
    with locked(work):
        inspect_eval(work, env={**HOOKED, "LOGBOOK_LOCK_TIMEOUT": "0.2"})
    (file,) = spooled(work)
    return file


def test_doc_spool_example_a_spooled_run_the_plan_refuses(work: Path, tmp_path: Path) -> None:
    """docs/recording.md's ```console block, verbatim: `append --spool` leaves a spooled run
    its plan refuses in the spool (exit 1, saying why), `--exploratory` appends it."""
    file = spool_a_run_its_plan_refuses(work, tmp_path)
    (block,) = re.findall(r"^```console\n(.*?)^```", DOC.read_text(), re.M | re.S)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=work,
                          env=environment(),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    why = "body.outcomes.metric: the run's metric is"  # intake's sentence, naming both
    assert done.stdout.count(file.name) == 2  # spool list, then brief
    assert "logbook append --spool exited 1: the run stays in the spool" in done.stdout
    assert f"spooled run {file} stays in the spool: " in done.stderr and why in done.stderr
    assert "1 spooled run(s) stay in" in done.stderr
    assert f"(completed) from the spool ({file.name})" in done.stderr
    assert done.stderr.rstrip().endswith("holds no runs")  # the last spool list: empty
    (run,) = nothing_outside(work)
    assert run["plan"] is None and why in run["note"] and "includes.accuracy" in run["note"]
    assert run["note"].startswith(f"not counted in plan {SLUG}: ")


def test_the_next_hooked_run_keeps_a_spooled_run_its_plan_refuses(work: Path,
                                                                 tmp_path: Path) -> None:
    file = spool_a_run_its_plan_refuses(work, tmp_path)
    done = inspect_eval(work, env={"LOGBOOK_RECORD": "1"})
    assert f"(completed) from the spool ({file.name})" in done.stderr
    assert "not counted in plan tiny-echo: " in done.stderr
    refused, later = nothing_outside(work)
    assert refused["plan"] is None and "body.outcomes.metric" in refused["note"]
    assert later["plan"] is None and "note" not in later


def test_a_spooled_run_whose_log_is_gone_stays_named_then_is_kept_as_failed(
        work: Path, tmp_path: Path) -> None:
    """A spooled record that holds no runs (an older logbook's, or one saved by hand from the
    hook's stderr) is read from its log when appended; when that log is gone, `append --spool`
    leaves it, saying why, and `--exploratory` keeps it as a failed run saying why."""
    import orjson

    plan = make_plan(tmp_path)
    with locked(work):
        inspect_eval(work, env={**HOOKED, "LOGBOOK_LOCK_TIMEOUT": "0.2"})
    (file,) = spooled(work)
    (log,) = logs(work)
    record = orjson.loads(file.read_bytes())
    file.write_bytes(orjson.dumps({**record, "bodies": None}))
    log.rename(tmp_path / log.name)
    (row,) = run_cli("--ledger", str(work), "spool", "list", "--json").json
    assert row["runs"] is None and row["output"] == str(log)
    kept = run_cli("--ledger", str(work), "append", "--spool")
    assert kept.code == 1 and f"spooled run {file} stays in the spool: " in kept.err
    assert log.name in kept.err and file.exists() and runs(work) == []
    done = run_cli("--ledger", str(work), "append", "--spool", "--exploratory")
    assert done.code == 0, done.err
    (run,) = runs(work)
    assert run["status"] == "failed" and run["plan"] == plan and run["arm"] == "echo"
    assert run["reason"].startswith(f"{log.name} could not be read: ")
    assert spooled(work) == []
