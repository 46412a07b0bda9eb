"""The Inspect AI hook: real `inspect eval` runs of a small local task (tests/integrations/data)
with logbook's hook loaded from its entry point, as a user's environment loads it.

The model is `echo/x`, from a provider package registered through its own `inspect_ai` entry
point (data/site, put on PYTHONPATH), so the runs are offline. Each run must append exactly one
run whose figures are the log's own (the run `logbook append --from inspect` makes of the same
log), or, when the ledger cannot take it, land in the spool that the next write appends.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import plan_body, write_json
from conftest import run_cli

DATA = Path(__file__).parent / "data"
# the offline model's provider; the hook is the installed logbook's (an editable install of
# this checkout, as `pip install -e` makes it): put on PYTHONPATH instead, Inspect would not
# know its package and would name it `record`, not `logbook/record`
SITE = str(DATA / "site")
INSPECT = shutil.which("inspect", path=str(Path(sys.executable).parent))

pytestmark = pytest.mark.skipif(INSPECT is None or find_spec("inspect_ai") is None,
                                reason="needs inspect_ai: pip install -e '.[inspect]'")


def inspect_eval(work: Path, *task_args: str, env: dict[str, str] | None = None,
                 log_dir: str = "logs") -> subprocess.CompletedProcess[str]:
    """`inspect eval` of the tiny task in ``work``, the hook required (Inspect refuses to start
    without it), samples one at a time so that a failure ends it mid-way."""
    assert INSPECT is not None
    environ = {**os.environ, "PYTHONPATH": SITE,
               "INSPECT_REQUIRED_HOOKS": "logbook/record", **(env or {})}
    for name in ("LOGBOOK_PLAN", "LOGBOOK_ARM", "LOGBOOK_RECORD"):
        if env is None or name not in env:
            environ.pop(name, None)
    shutil.copy(DATA / "tiny_task.py", work / "tiny_task.py")  # the project's own task file
    args = [INSPECT, "eval", "tiny_task.py", "--model", "echo/x", "--log-dir",
            log_dir, "--max-samples", "1", "--display", "plain"]
    for a in task_args:
        args += ["-T", a]
    done = subprocess.run(args, cwd=work, env=environ, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def exported(ledger: Path) -> list[dict[str, Any]]:
    r = run_cli("--ledger", str(ledger), "export")
    assert r.code == 0, r.err
    return [orjson.loads(line)["entry"] for line in r.out.splitlines()]


def runs(ledger: Path) -> list[dict[str, Any]]:
    return [e["body"] for e in exported(ledger) if e["kind"] == "run"]


def logs(work: Path) -> list[Path]:
    return sorted((work / "logs").glob("*.eval"))


def as_appended(log: Path, tmp_path: Path) -> dict[str, Any]:
    """The run `logbook append --from inspect` makes of the same log, in a ledger of its own."""
    other = tmp_path / f"other-{log.stem}"
    other.mkdir()
    assert run_cli("init", str(other), "--name", "other").code == 0
    r = run_cli("--ledger", str(other), "append", "--from", "inspect", str(log))
    assert r.code == 0, r.err
    (body,) = runs(other)
    return body


def same_run(hooked: dict[str, Any], appended: dict[str, Any]) -> None:
    """The hook's run is append --from's, plus what capture adds."""
    for field in ("status", "reason", "task", "outcomes", "reported", "source", "started",
                  "finished", "plan", "arm"):
        assert hooked.get(field) == appended.get(field), field
    captured = hooked["apparatus"].pop("captured")
    assert hooked["apparatus"] == appended["apparatus"]
    assert "inspect" in captured["command"][0] and "eval" in captured["command"]
    assert captured["python"] and captured["packages"]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    assert run_cli("init", str(folder), "--name", "evals").code == 0
    return folder


def test_a_clean_run_appends_one_run_with_the_logs_own_figures(work: Path,
                                                               tmp_path: Path) -> None:
    done = inspect_eval(work, env={"LOGBOOK_RECORD": "1"})
    assert "logbook/record" in done.stdout  # Inspect lists the hook it loaded
    (log,) = logs(work)
    (run,) = runs(work)
    assert "appended run @1 " in done.stderr and log.name in done.stderr
    assert run["status"] == "completed" and run["plan"] is None
    assert run["outcomes"]["score"] == [0.0, 1.0] * 3
    assert run["reported"]["value"] == 0.5  # Inspect's accuracy, as its log says
    same_run(run, as_appended(log, tmp_path))
    assert run_cli("verify").code == 0


def test_errored_samples_are_missing_with_their_error(work: Path, tmp_path: Path) -> None:
    inspect_eval(work, "bad=s2", "epochs=2", env={"LOGBOOK_RECORD": "1"})
    (log,) = logs(work)
    (run,) = runs(work)
    o = run["outcomes"]
    assert run["status"] == "completed" and o["sample"] == [1, 2] * 6
    missing = [i for i, s in enumerate(o["score"]) if s is None]
    assert [o["id"][i] for i in missing] == ["s2", "s2"]
    assert all("model server returned 503 for s2" in o["error"][i] for i in missing)
    assert run["reported"]["value"] == pytest.approx(3 / 5)  # Inspect drops the errored one
    same_run(run, as_appended(log, tmp_path))


def test_a_run_that_fails_mid_way_is_a_failed_run_with_its_reason(work: Path,
                                                                  tmp_path: Path) -> None:
    inspect_eval(work, "bad=s2", "fail_on_error=true", env={"LOGBOOK_RECORD": "1"})
    (log,) = logs(work)
    (run,) = runs(work)
    assert run["status"] == "failed"
    assert "model server returned 503 for s2" in run["reason"]
    assert None in run["outcomes"]["score"]
    same_run(run, as_appended(log, tmp_path))


def test_a_task_that_fails_outright_is_appended_at_the_runs_end(work: Path,
                                                               tmp_path: Path) -> None:
    inspect_eval(work, "broken_metric=true", env={"LOGBOOK_RECORD": "1"})
    (log,) = logs(work)
    (run,) = runs(work)  # once: on_run_end, not also on_task_end
    assert run["status"] == "failed" and "the metric cannot be computed" in run["reason"]
    same_run(run, as_appended(log, tmp_path))


def test_a_plan_without_its_arm_is_kept_as_an_exploratory_run_saying_why(work: Path) -> None:
    # issue 32: once spooled for good (every later write said "not appended"); now the run
    # the plan cannot take is in the ledger, exploratory, its note saying why
    done = inspect_eval(work, env={"LOGBOOK_PLAN": "nowhere"})
    assert "LOGBOOK_PLAN nowhere needs LOGBOOK_ARM" in done.stderr
    (run,) = runs(work)
    assert run["plan"] is None and "LOGBOOK_PLAN nowhere needs LOGBOOK_ARM" in run["note"]
    assert not (work / ".logbook" / "spool").exists()
    again = inspect_eval(work, env={"LOGBOOK_RECORD": "1"})
    assert "spool" not in again.stderr and len(runs(work)) == 2


def test_off_unless_switched_on(work: Path) -> None:
    done = inspect_eval(work)
    assert len(logs(work)) == 1 and runs(work) == []
    assert "appended run" not in done.stderr


def test_pyproject_table_records_into_the_plan(work: Path, tmp_path: Path) -> None:
    body = plan_body("tiny-echo", arms=("echo", "other"),
                     suite={"name": "tiny", "version": "1", "n_items": 6},
                     metric={"name": "includes.accuracy", "kind": "proportion"})
    assert run_cli("plan", str(write_json(tmp_path / "plan.json", body))).code == 0
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "evals"\n\n[tool.logbook]\nplan = "tiny-echo"\narm = "echo"\n'
        f'ledger = "{os.path.relpath(work, project)}"\n')
    inspect_eval(project)
    (run,) = runs(work)
    plan = exported(work)[1]
    assert run["arm"] == "echo" and run["plan"] is not None and plan["kind"] == "plan"


def test_logbook_toml_switches_it_off_and_on(work: Path) -> None:
    (work / "logbook.toml").write_text("record = false\n")
    inspect_eval(work)
    assert runs(work) == []
    (work / "logbook.toml").write_text('ledger = "."\n')  # a table of its own: on, exploratory
    inspect_eval(work)
    (run,) = runs(work)
    assert run["plan"] is None


def test_a_missing_ledger_spools_the_run_and_the_next_run_appends_it(tmp_path: Path) -> None:
    folder = tmp_path / "not-yet"
    folder.mkdir()
    first = inspect_eval(folder, env={"LOGBOOK_RECORD": "1", "LOGBOOK_DIR": str(folder)})
    (spooled,) = (folder / ".logbook" / "spool").glob("*.json")
    assert f"spooled in {spooled}" in first.stderr and "no ledger at" in first.stderr
    assert run_cli("init", str(folder), "--name", "late").code == 0
    second = inspect_eval(folder, env={"LOGBOOK_RECORD": "1", "LOGBOOK_DIR": str(folder)})
    assert "from the spool" in second.stderr
    assert not spooled.exists()
    first_log, second_log = sorted(logs(folder), key=lambda p: p.stat().st_mtime)
    assert [r["source"]["file"] for r in runs(folder)] == [first_log.name, second_log.name]


def test_a_locked_ledger_spools_the_run_and_the_next_write_appends_it(work: Path,
                                                                     tmp_path: Path) -> None:
    holder = sqlite3.connect(work / ".logbook" / "ledger.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the ledger's lock
    try:
        done = inspect_eval(work, env={"LOGBOOK_RECORD": "1", "LOGBOOK_LOCK_TIMEOUT": "0.2"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    (spooled,) = (work / ".logbook" / "spool").glob("*.json")
    assert "could not be appended" in done.stderr and runs(work) == []
    inspect_eval(work, log_dir="unrecorded")  # recording off: a log for append --from
    (other,) = (work / "unrecorded").glob("*.eval")
    r = run_cli("append", "--from", "inspect", str(other))
    assert r.code == 0, r.err
    assert f"from the spool ({spooled.name})" in r.err and not spooled.exists()
    (log,) = logs(work)
    assert sorted(b["source"]["file"] for b in runs(work)) == sorted([other.name, log.name])
    again = run_cli("append", "--from", "inspect", str(log))  # it is in the ledger now
    assert again.code == 2 and "already" in again.err


def test_append_spool_appends_what_the_spool_holds(work: Path) -> None:
    holder = sqlite3.connect(work / ".logbook" / "ledger.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        inspect_eval(work, env={"LOGBOOK_RECORD": "1", "LOGBOOK_LOCK_TIMEOUT": "0.2"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    (spooled,) = (work / ".logbook" / "spool").glob("*.json")
    r = run_cli("append", "--spool", "--json")
    assert r.code == 0, r.err
    assert f"from the spool ({spooled.name})" in r.err and not spooled.exists()
    assert r.json["entry"]["kind"] == "run" and len(runs(work)) == 1  # one entry: an object
    empty = run_cli("append", "--spool")
    assert empty.code == 2 and "holds no runs" in empty.err
    assert run_cli("append", "x.json", "--spool").code == 2


DOC = Path(__file__).parents[2] / "docs" / "recording.md"


def test_doc_hook_commands_run(work: Path, tmp_path: Path) -> None:
    """docs/recording.md's ```shell blocks (the hook's), verbatim but for the model: the tiny
    task stands in for arith.py and the offline echo model for the doc's openai/my-7b."""
    import re

    blocks = re.findall(r"^```shell\n(.*?)^```", DOC.read_text(), re.M | re.S)
    assert blocks and all("INSPECT_REQUIRED_HOOKS=logbook/record" in b for b in blocks[:1])
    body = plan_body("arith-kv", arms=("f16", "q8"),
                     suite={"name": "tiny", "version": "1", "n_items": 6},
                     metric={"name": "includes.accuracy", "kind": "proportion"})
    assert run_cli("plan", str(write_json(tmp_path / "plan.json", body))).code == 0
    shutil.copy(DATA / "tiny_task.py", work / "arith.py")
    assert INSPECT is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
    env |= {"PYTHONPATH": SITE,
            "PATH": os.pathsep.join([str(Path(INSPECT).parent), env["PATH"]])}
    for block in blocks:
        script = block.replace("openai/my-7b", "echo/x")
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{block}\n{done.stdout}\n{done.stderr}"
        assert "appended run @2 " in done.stderr
    (run,) = runs(work)
    assert run["arm"] == "f16" and run["outcomes"]["sample"] == [1, 2] * 6
