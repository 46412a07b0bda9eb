"""Recording runs: `logbook run -- CMD`, `logbook append --from`, the Python API, and the doc.

`logbook run` spawns the command and handles signals, so it is always run as a subprocess
(``python -m logbook``); everything else goes through the in-process ``run_cli``. A run that
happened is never lost: every way a command can end leaves a verified run entry, and every
refusal happens before the command starts (each command here would leave a marker file).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import prebuilt
import pytest
from builders import plan_body, write_json, write_jsonl
from conftest import run_cli

from logbook import Ledger
from logbook.ingest import inspect as inspect_log

# the module's ledger is initialised once and copied into each test (tests/prebuilt.py)
initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir

FIXTURES = Path(__file__).parents[1] / "fixtures"
MANIFEST: dict[str, Any] = orjson.loads((FIXTURES / "MANIFEST.json").read_bytes())["files"]
LM_SEED1 = FIXTURES / "lm_eval/run-seed1"
LM_SEED2 = FIXTURES / "lm_eval/run-seed2"
LM_GEN = FIXTURES / "lm_eval/run-gen-seed1"
INSPECT_FAILED = FIXTURES / "inspect/run-failed"
INSPECT_ERRORS = FIXTURES / "inspect/run-errors"
DOC = Path(__file__).parents[2] / "docs/recording.md"
EXAMPLE_PLAN = Path(__file__).parents[2] / "logbook/examples/plan.toml"
PY = sys.executable

# Copies files with fresh modification times (shutil.copyfile, not copy2): a harness writes its
# output while it runs, and `logbook run` reads only what is newer than the run's start.
COPY = ("import pathlib, shutil, sys\n"
        "dst = pathlib.Path(sys.argv[-1]); dst.mkdir(parents=True, exist_ok=True)\n"
        "for src in sys.argv[1:-1]: shutil.copyfile(src, dst / pathlib.Path(src).name)\n")
MARK = "open('ran', 'w').close()"  # a command whose running would leave the file 'ran'


# ---------------------------------------------------------------- helpers


def lb(*args: object, cwd: Path, env: dict[str, str] | None = None,
       timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`logbook ARGS` as a separate process, as a shell would run it."""
    return subprocess.run([PY, "-m", "logbook", *map(str, args)], cwd=cwd, timeout=timeout,
                          env=dict(os.environ) if env is None else env, capture_output=True,
                          text=True, check=False)


def exported(cwd: Path | None = None) -> list[dict[str, Any]]:
    """Every entry line of `logbook export`."""
    r = run_cli("export") if cwd is None else run_cli("--ledger", cwd, "export")
    assert r.code == 0, r.err
    return [orjson.loads(line) for line in r.out.splitlines()]


def runs() -> list[dict[str, Any]]:
    """Bodies of every run entry, in ledger order."""
    return [e["entry"]["body"] for e in exported() if e["entry"]["kind"] == "run"]


def head() -> tuple[int, str]:
    """(entry count, head digest): equal before and after means nothing was written."""
    lines = exported()
    return len(lines), lines[-1]["digest"]


def assert_verified() -> None:
    r = run_cli("verify")
    assert r.code == 0, r.out + r.err


def make_plan(slug: str = "kv", arms: tuple[str, ...] = ("f16", "q8"), **extra: Any) -> str:
    body = plan_body(slug, arms=arms, **extra)
    r = run_cli("plan", str(write_json(Path(f"{slug}.plan.json"), body)))
    assert r.code == 0, r.err
    return slug


def one_sentence(err: str) -> str:
    """The single line logbook prints for a refused input (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("logbook: "), err
    return lines[0]


def outcomes_writer(path: str, n: int, then: str = "") -> list[str]:
    """A command that writes ``n`` JSONL items to ``path``, then runs ``then``."""
    code = (f"import json\nwith open({path!r}, 'w') as f:\n"
            f"    for i in range({n}): f.write(json.dumps({{'id': i, 'score': i % 2}}) + '\\n')\n"
            f"{then}\n")
    return [PY, "-c", code]


def lm_copy(dst: Path, *runs_dirs: Path) -> list[str]:
    """A command that writes lm-eval output into ``dst``, as lm_eval --output_path would."""
    files = [str(f) for d in runs_dirs for f in sorted(d.iterdir())]
    return [PY, "-c", COPY, *files, str(dst)]


# ---------------------------------------------------------------- how a command ends


@pytest.mark.parametrize(("then", "status", "code", "reason"), [
    ("import sys; sys.exit(3)", "failed", 3, "the command exited with status 3"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "aborted", 128 + 9,
     "the command was killed by SIGKILL"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", "aborted", 128 + 15,
     "the command was killed by SIGTERM"),
], ids=["exit-3", "SIGKILL", "SIGTERM"])
def test_a_command_that_fails_still_leaves_a_run(ledger_dir: Path, then: str, status: str,
                                                 code: int, reason: str) -> None:
    r = lb("run", "--outcomes", "items.jsonl", "--", *outcomes_writer("items.jsonl", 4, then),
           cwd=ledger_dir)
    assert r.returncode == code, r.stderr
    (run,) = runs()
    assert run["status"] == status
    assert run["reason"].startswith(reason)
    assert run["outcomes"]["id"] == ["0", "1", "2", "3"]  # what it wrote before it ended
    assert run["started"] <= run["finished"]
    assert f"({status})" in r.stderr
    assert_verified()


@pytest.mark.parametrize("ends", ["killed", "exit-3"])
def test_a_line_cut_off_mid_write_keeps_the_whole_lines(ledger_dir: Path, ends: str) -> None:
    # A crash mid-write leaves a partial last line: the run keeps the items before it and
    # says what was cut off. A completed run with a broken last line is refused instead.
    then = ("f = open('items.jsonl', 'a'); f.write('{\"id\": 9, \"sco'); f.close()\n"
            + ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)" if ends == "killed"
               else "import sys; sys.exit(3)"))
    make_plan()
    r = lb("run", "--plan", "kv", "--arm", "q8", "--outcomes", "items.jsonl", "--",
           *outcomes_writer("items.jsonl", 3, then), cwd=ledger_dir)
    assert r.returncode == (128 + 9 if ends == "killed" else 3), r.stderr
    (run,) = runs()
    assert run["status"] == ("aborted" if ends == "killed" else "failed")
    assert run["outcomes"]["id"] == ["0", "1", "2"]
    assert run["outcomes"]["metric"] == "acc"  # the plan's metric, which the items score
    assert "the last line of items.jsonl was cut off mid-write (14 bytes)" in run["reason"]
    assert_verified()


def test_a_completed_run_with_a_cut_off_line_is_a_failed_run(ledger_dir: Path) -> None:
    then = "f = open('items.jsonl', 'a'); f.write('{\"id\": 9, \"sco'); f.close()"
    r = lb("run", "--outcomes", "items.jsonl", "--", *outcomes_writer("items.jsonl", 3, then),
           cwd=ledger_dir)
    (run,) = runs()
    # the command exited 0 but its run is failed: logbook run says so with exit 1 (issue 13;
    # it used to pass the command's 0 on)
    assert r.returncode == 1  # docs/recording.md's table
    assert run["status"] == "failed" and "outcomes" not in run
    assert "line 4: not valid JSON" in run["reason"], run["reason"]


def _signal_group_while_running(work: Path, sig: signal.Signals) -> tuple[int, str]:
    """Start `logbook run` in its own session, send ``sig`` to its process group once the
    command runs (what a terminal does on Ctrl-C, and a batch scheduler on a time limit)."""
    sleeper = [PY, "-c", "import time; open('started', 'w').close(); time.sleep(60)"]
    proc = subprocess.Popen([PY, "-m", "logbook", "run", "--outcomes", "items.jsonl", "--",
                             *sleeper], cwd=work, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not (work / "started").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the command never ran"
            time.sleep(0.02)
        os.killpg(proc.pid, sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # never leave the sleeper behind
    return proc.returncode, err


def test_ctrl_c_leaves_an_aborted_run_and_exits_130(ledger_dir: Path) -> None:
    code, err = _signal_group_while_running(ledger_dir, signal.SIGINT)
    assert code == 130, err
    (run,) = runs()
    assert run["status"] == "aborted"
    assert "interrupted by Ctrl-C (SIGINT)" in run["reason"]
    assert "(aborted)" in err
    assert_verified()


def test_sigterm_to_the_group_leaves_an_aborted_run(ledger_dir: Path) -> None:
    """A batch scheduler's time limit (Slurm), `timeout`, `docker stop` or systemd send SIGTERM
    to `logbook run` and its command alike: the run is still appended, as aborted (regression
    test: SIGTERM used to kill logbook before it could record the run)."""
    code, err = _signal_group_while_running(ledger_dir, signal.SIGTERM)
    assert runs(), f"no run was recorded (logbook exited {code})"
    (run,) = runs()
    assert run["status"] == "aborted" and "SIGTERM" in run["reason"]
    assert code == 128 + signal.SIGTERM, err


# ---------------------------------------------------------------- refusing before running


def _other_key(work: Path) -> dict[str, str]:
    r = run_cli("keys", "new", "--out", str(work / "other.key"))
    assert r.code == 0, r.err
    return {"LOGBOOK_KEY": str(work / "other.key")}


PRECHECKS: list[tuple[str, list[str], int, str]] = [
    # (case, arguments before --, exit code, what the one sentence says)
    ("no-ledger", ["--outcomes", "o.jsonl"], 3, "no ledger found"),
    ("missing-key", ["--outcomes", "o.jsonl"], 3, "does not exist"),
    ("key-not-of-this-ledger", ["--outcomes", "o.jsonl"], 3, "not a valid key of this ledger"),
    ("unknown-plan", ["--plan", "nope", "--arm", "q8", "--outcomes", "o.jsonl"], 2, "nope"),
    ("arm-not-in-plan", ["--plan", "kv", "--arm", "q4", "--outcomes", "o.jsonl"], 2,
     "'q4' is not an arm of plan kv"),
    ("arm-without-plan", ["--arm", "q8", "--outcomes", "o.jsonl"], 2, "--arm needs --plan"),
    ("unknown-source", ["--from", "helm", "out"], 2, "--from 'helm' is not one of"),
    ("no-outcome-source", [], 2, "--outcomes FILE or --from SOURCE PATH"),
    ("both-outcome-sources", ["--outcomes", "o.jsonl", "--from", "lm-eval", "out"], 2,
     "either --outcomes or --from"),
    ("apparatus-missing", ["--outcomes", "o.jsonl", "--apparatus", "nope.json"], 2,
     "nope.json does not exist"),
    ("apparatus-not-json", ["--outcomes", "o.jsonl", "--apparatus", "bad.json"], 2,
     "not valid JSON"),
    ("apparatus-reserved-key", ["--outcomes", "o.jsonl", "--apparatus", "captured.json"], 2,
     "'captured' is reserved"),
]


@pytest.mark.parametrize(("case", "args", "code", "says"), PRECHECKS,
                         ids=[c[0] for c in PRECHECKS])
def test_refused_at_once_before_the_command_runs(ledger_dir: Path, tmp_path: Path, case: str,
                                                 args: list[str], code: int, says: str) -> None:
    make_plan("kv")
    (ledger_dir / "bad.json").write_text("{not json")
    write_json(ledger_dir / "captured.json", {"captured": {"python": "2.7"}})
    env = dict(os.environ)
    cwd = ledger_dir
    if case == "no-ledger":
        cwd = tmp_path / "elsewhere"  # a sibling of the ledger's folder, not inside it
        cwd.mkdir()
    elif case == "missing-key":
        env["LOGBOOK_KEY"] = str(tmp_path / "nowhere" / "default.key")
    elif case == "key-not-of-this-ledger":
        env.update(_other_key(ledger_dir))
    before = head()
    r = lb("run", *args, "--", PY, "-c", MARK, cwd=cwd, env=env)
    assert r.returncode == code, r.stderr
    assert says in one_sentence(r.stderr)
    assert not (cwd / "ran").exists(), "the command ran although the run was refused"
    assert head() == before


# ---------------------------------------------------------------- runs that complete


def test_outcomes_logs_and_apparatus(ledger_dir: Path) -> None:
    make_plan("kv")
    declared = {"engine": "llama.cpp", "engine_build": "b4242 (cuda 12.4)",
                "flags": {"n_gpu_layers": 99, "flash_attn": True, "ctx_size": 8192},
                "kv_cache_precision": "q8_0", "placement": {"gpus": [0], "tensor_split": None}}
    write_json(ledger_dir / "apparatus.json", declared)
    then = ("import sys\nprint('evaluating 6 items')\nprint('warning: slow tokenizer', "
            "file=sys.stderr)\nopen('load.log', 'w').write('loaded 7B weights in 3.2 s\\n' * 40)")
    cmd = outcomes_writer("items.jsonl", 6, then)
    r = lb("run", "--plan", "kv", "--arm", "q8", "--session", "s-1", "--outcomes",
           "items.jsonl", "--apparatus", "apparatus.json", "--log", "load.log", "--note",
           "first try", "--", *cmd, cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    assert "evaluating 6 items" in r.stdout  # streamed through as it came
    assert "warning: slow tokenizer" in r.stderr
    (run,) = runs()
    assert run["status"] == "completed" and "reason" not in run
    assert run["arm"] == "q8" and run["session"] == "s-1" and run["note"] == "first try"
    # JSON Lines items score the plan's metric, under its name
    assert run["outcomes"] == {"metric": "acc", "id": [str(i) for i in range(6)],
                               "score": [0, 1, 0, 1, 0, 1]}
    # declared fields at the top of apparatus; what logbook captured under `captured`, apart
    app = run["apparatus"]
    assert set(app) == {*declared, "captured"}
    assert {k: app[k] for k in declared} == declared
    captured = app["captured"]
    assert not set(captured) & set(declared)
    assert captured["command"] == cmd and captured["python"] == sys.version.split()[0]
    assert {"os", "cpu", "packages"} <= set(captured)
    # the command's output (both streams) and each --log file: hashed, excerpted, kept
    logs = {ref["name"]: ref for ref in run["logs"]}
    assert set(logs) == {"output", "load.log"}
    blobs = ledger_dir / ".logbook" / "blobs"
    for ref in logs.values():
        data = (blobs / ref["sha256"].removeprefix("sha256:")).read_bytes()
        assert ref["sha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
        assert ref["size"] == len(data)
        assert ref["excerpt"] and data.decode().rstrip("\n").endswith(ref["excerpt"])
    load = (blobs / logs["load.log"]["sha256"][7:]).read_bytes()
    assert load == (ledger_dir / "load.log").read_bytes()
    assert logs["load.log"]["excerpt"].count("\n") < 20  # an excerpt, not the whole file
    output = (blobs / logs["output"]["sha256"][7:]).read_text()
    assert "evaluating 6 items" in output and "warning: slow tokenizer" in output
    assert_verified()


def test_an_unreadable_log_file_is_noted_not_fatal(ledger_dir: Path) -> None:
    r = lb("run", "--outcomes", "items.jsonl", "--log", "never-written.log", "--",
           *outcomes_writer("items.jsonl", 2), cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    (run,) = runs()
    assert run["status"] == "completed"
    assert "never-written.log could not be read" in run["note"]


def test_from_lm_eval_one_run_per_task_only_what_this_run_wrote(ledger_dir: Path) -> None:
    make_plan("kv", suite={"name": "synth_mc", "version": "1", "n_items": 200})
    out = ledger_dir / "out"
    # an earlier run's output in the same folder: older than this run, so not read again
    old = out / "earlier"
    subprocess.run(lm_copy(old, LM_SEED2), check=True)
    for f in old.iterdir():
        os.utime(f, (time.time() - 3600, time.time() - 3600))
    r = lb("run", "--plan", "kv", "--arm", "f16", "--from", "lm-eval", out, "--",
           *lm_copy(out / "dummy-model", LM_SEED1, LM_GEN), cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    by_task = {run["task"]: run for run in runs()}
    assert set(by_task) == {"synth_mc", "synth_gen"}
    # the plan's suite is synth_mc: that task goes to the arm, the other is kept exploratory
    assert "run @3 (synth_gen) is not plan kv's suite 'synth_mc'" in r.stderr
    assert by_task["synth_gen"]["plan"] is None and by_task["synth_gen"]["arm"] is None
    for task, src in (("synth_mc", LM_SEED1), ("synth_gen", LM_GEN)):
        results = next(src.glob("results_*.json"))
        expected = MANIFEST[str(results.relative_to(FIXTURES))]["tasks"][task]
        run = by_task[task]
        assert run["status"] == "completed" and run["arm"] == ("f16" if task == "synth_mc"
                                                              else None)
        assert len(run["outcomes"]["id"]) == expected["n_records_logged"] == expected["n_items"]
        assert sum(s is None for s in run["outcomes"]["score"]) == expected["n_items_unscored"]
        metric = expected["metric"]
        assert run["outcomes"]["metric"] == metric  # lm-eval's `acc,none` is `acc`
        assert run["reported"]["value"] == expected["reported"][f"{metric},none"]
        assert run["apparatus"]["harness"]["name"] == "lm-evaluation-harness"
        assert "captured" in run["apparatus"]
    assert_verified()


def test_an_outcomes_file_older_than_the_run_gives_a_failed_run(ledger_dir: Path) -> None:
    stale = write_jsonl(ledger_dir / "items.jsonl", [{"id": 1, "score": 1}])
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    r = lb("run", "--outcomes", "items.jsonl", "--", PY, "-c", "pass", cwd=ledger_dir)
    assert r.returncode == 1, r.stderr  # the command exited 0, its run is failed (issue 13)
    (run,) = runs()
    assert run["status"] == "failed"
    assert "items.jsonl was not written by this run (it was there, unchanged, before" \
        in run["reason"]
    assert "outcomes" not in run


def test_an_outcomes_file_written_just_before_the_run_is_not_its_result(
        ledger_dir: Path) -> None:
    """A file left by the previous step of a script a moment earlier is not this run's result:
    the command here writes nothing, so the run is failed (regression test: a one-second mtime
    slack used to accept it)."""
    stale = write_jsonl(ledger_dir / "items.jsonl", [{"id": 1, "score": 1}])
    os.utime(stale, (time.time() - 0.2, time.time() - 0.2))  # clearly before the run starts
    r = lb("run", "--outcomes", "items.jsonl", "--", PY, "-c", "pass", cwd=ledger_dir)
    assert r.returncode == 1, r.stderr  # the command exited 0, its run is failed (issue 13)
    (run,) = runs()
    assert "outcomes" not in run, "a file the command never wrote was recorded as its items"
    assert run["status"] == "failed"
    assert "was not written by this run" in run["reason"]


# ---------------------------------------------------------------- damaged harness outputs


def _damage(folder: Path, case: str) -> str:
    """Copy the seed-1 lm-eval output into ``folder`` and damage it; return the why."""
    subprocess.run(lm_copy(folder, LM_SEED1), check=True)
    results = next(folder.glob("results_*.json"))
    samples = next(folder.glob("samples_*.jsonl"))
    if case == "truncated-results":
        results.write_bytes(results.read_bytes()[:1000])
        return f"{results.name}: not valid JSON"
    if case == "samples-count":
        lines = samples.read_bytes().splitlines(keepends=True)
        samples.write_bytes(b"".join(lines[:57] + lines[58:]))
        return f"{samples.name}: has 199 documents for filter 'none' but the results file " \
               "says n-samples effective = 200"
    doc = orjson.loads(results.read_bytes())
    doc["lm_eval_version"] = "0.3.0"
    results.write_bytes(orjson.dumps(doc))
    return f"{results.name}: field lm_eval_version is '0.3.0'; only lm-evaluation-harness 0.4.x"


DAMAGE = ["truncated-results", "samples-count", "unknown-version"]


@pytest.mark.parametrize("case", DAMAGE)
def test_append_from_damaged_output_writes_nothing(ledger_dir: Path, tmp_path: Path,
                                                   case: str) -> None:
    why = _damage(tmp_path / "out", case)
    before = head()
    r = run_cli("append", "--from", "lm-eval", str(tmp_path / "out"))
    assert r.code == 2
    assert why in one_sentence(r.err)
    assert head() == before


@pytest.mark.parametrize("case", DAMAGE)
def test_run_from_damaged_output_is_a_failed_run_saying_why(ledger_dir: Path, tmp_path: Path,
                                                            case: str) -> None:
    why = _damage(tmp_path / "damaged", case)
    out = ledger_dir / "out"
    r = lb("run", "--from", "lm-eval", out, "--", *lm_copy(out, tmp_path / "damaged"),
           cwd=ledger_dir)
    assert r.returncode == 1, r.stderr  # the command succeeded, its run failed (issue 13)
    assert "the command exited 0, but run 1 is failed" in r.stderr
    (run,) = runs()
    assert run["status"] == "failed"
    assert run["reason"].startswith("outcomes not read: ") and why in run["reason"]
    assert_verified()


# ---------------------------------------------------------------- Inspect AI


def test_append_from_inspect_failed_and_errored_runs(ledger_dir: Path) -> None:
    failed = MANIFEST[str(next(INSPECT_FAILED.glob("*.eval")).relative_to(FIXTURES))]
    errors = MANIFEST[str(next(INSPECT_ERRORS.glob("*.eval")).relative_to(FIXTURES))]
    make_plan("arith", arms=("a", "b"), suite={"name": "arith", "version": "1", "n_items": 200},
              metric={"name": "match.accuracy", "kind": "proportion"})
    for folder, arm in ((INSPECT_FAILED, "a"), (INSPECT_ERRORS, "b")):
        r = run_cli("append", "--from", "inspect", str(folder), "--plan", "arith", "--arm", arm)
        assert r.code == 0, r.err
    crashed, errored = runs()  # the folder holds the .eval and its .json conversion: one run
    assert crashed["status"] == "failed"
    assert crashed["reason"] == failed["reported"]["error"]
    o = crashed["outcomes"]
    assert len(o["id"]) == failed["n_records_expected"]
    assert sum(s is not None for s in o["score"]) == failed["n_records_scored"]
    assert o["error"].count(inspect_log.NOT_RUN) == failed["n_records_missing"]
    # errored samples are missing with their error, never zero: Inspect's own accuracy drops
    # them from its denominator, the ledger keeps them and so has a missing rate
    assert errored["status"] == "completed"
    o = errored["outcomes"]
    missing = [i for i, s in enumerate(o["score"]) if s is None]
    assert len(o["id"]) == errors["n_records_expected"]
    assert len(missing) == errors["n_records_errored"] > 0
    assert all("RuntimeError" in o["error"][i] for i in missing)
    assert len(missing) / len(o["id"]) == pytest.approx(10 / 400)
    assert_verified()


# ---------------------------------------------------------------- Python API


def test_python_append_run(ledger_dir: Path) -> None:
    make_plan("kv")
    with Ledger.open(ledger_dir) as ledger:
        plan = ledger.resolve("kv")
        entry = ledger.append_run(plan, "q8", "completed", {"engine": "vllm"},
                                  {"metric": "acc", "id": ["a", "b"], "score": [1, None],
                                   "error": [None, "timeout"]}, note="from Python")
    (run,) = runs()
    assert entry.body == run
    assert run["plan"] == plan and run["note"] == "from Python"
    assert run["outcomes"]["score"] == [1, None]
    assert_verified()


def test_python_recording_completed(ledger_dir: Path) -> None:
    make_plan("kv")
    with Ledger.open(ledger_dir) as ledger, \
            ledger.recording(plan="kv", arm="f16", metric="acc",
                             apparatus={"engine": "vllm"}) as run:
        run.item("q1", 1.0)
        run.item(2, 0.0, cluster="c1")
        run.item("q3", None, error="HTTP 503")
    assert run.entry is not None
    (body,) = runs()
    assert body["status"] == "completed" and body["arm"] == "f16"
    assert body["outcomes"]["id"] == ["q1", "2", "q3"]
    assert body["outcomes"]["score"] == [1, 0, None]
    assert body["outcomes"]["error"] == [None, None, "HTTP 503"]
    assert body["started"] <= body["finished"]
    assert_verified()


@pytest.mark.parametrize(("exc", "status"), [(ValueError("the grader crashed on item 3"),
                                              "failed"),
                                             (KeyboardInterrupt(), "aborted")])
def test_python_recording_block_that_raises(ledger_dir: Path, exc: BaseException,
                                            status: str) -> None:
    # the recording sees the exception first, then it propagates to pytest.raises
    with Ledger.open(ledger_dir) as ledger, pytest.raises(type(exc)), \
            ledger.recording(metric="acc") as run:
        run.item("q1", 1.0)
        run.item("q2", 0.0)
        raise exc
    (body,) = runs()
    assert body["status"] == status
    assert body["reason"].startswith(type(exc).__name__)
    assert str(exc) in body["reason"] and "after 2 items" in body["reason"]
    assert body["outcomes"]["id"] == ["q1", "q2"]  # the items recorded before it raised
    assert_verified()


# ---------------------------------------------------------------- docs/recording.md
# (its Inspect hook's commands: tests/integrations/test_inspect_hook.py)

# Stand-ins for the harnesses the doc runs; they write the fixtures' real outputs where the real
# tool would: lm_eval into OUTPUT_PATH/<model>/ (0.4.x), inspect into its --log-dir.
FAKE_LM_EVAL = f"""#!{PY}
import pathlib, sys, time
from datetime import datetime
args = sys.argv[1:]
out = pathlib.Path(args[args.index("--output_path") + 1]) / "dummy-model"
out.mkdir(parents=True, exist_ok=True)
model_args = args[args.index("--model_args") + 1]
task = args[args.index("--tasks") + 1]
# a run of its own, as the real tool writes it: its task, model arguments and time
stamp = datetime.now().strftime("%Y-%m-%dT%H-%M-%S.%f")
for src in pathlib.Path({str(LM_SEED1)!r}).iterdir():
    text = src.read_text().replace("synth_mc", task)
    if src.name.startswith("results_"):
        import json
        doc = json.loads(text)
        doc["config"]["model_args"] = model_args
        doc["model_name"] = dict(kv.split("=") for kv in model_args.split(","))["pretrained"]
        doc["date"] = time.time()
        text = json.dumps(doc)
    name = src.name.replace("synth_mc", task).split("_2026")[0]
    (out / f"{{name}}_{{stamp}}{{src.suffix}}").write_text(text)
print(task + ": acc 0.315")
"""
FAKE_INSPECT = f"""#!{PY}
import pathlib, shutil, sys
args = sys.argv[1:]
out = pathlib.Path(args[args.index("--log-dir") + 1])
out.mkdir(parents=True, exist_ok=True)
for src in pathlib.Path({str(INSPECT_ERRORS)!r}).iterdir():
    shutil.copyfile(src, out / src.name)
print("arith: accuracy 0.687")
"""
# The files the doc's examples name: a plan, a user's eval script, a run draft, inspect logs.
MY_EVAL = """import json, sys
out = sys.argv[sys.argv.index("--out") + 1]
with open(out, "w") as f:
    for i in range(20):
        f.write(json.dumps({"id": f"q{i}", "score": float(i % 3 != 0)}) + "\\n")
"""


def doc_blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text(), re.MULTILINE | re.DOTALL)


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_doc_commands_run(tmp_path: Path) -> None:
    """Every ```sh block of docs/recording.md, verbatim and in order, in one prepared folder."""
    blocks = doc_blocks("sh")
    assert len(blocks) >= 5
    work = tmp_path / "work"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _executable(bin_dir / "lm_eval", FAKE_LM_EVAL)
    _executable(bin_dir / "inspect", FAKE_INSPECT)
    shutil.copyfile(EXAMPLE_PLAN, work / "plan.toml")
    (work / "my_eval.py").write_text(MY_EVAL)
    write_json(work / "run.json", {"kind": "run", "body": {
        "plan": None, "status": "completed", "apparatus": {"model": "m-7b"},
        "outcomes": {"metric": "acc", "id": ["a", "b"], "score": [1, 0]}}})
    shutil.copytree(INSPECT_FAILED, work / "logs-failed")
    # `logbook` is the installed console script, beside this interpreter
    path = os.pathsep.join([str(bin_dir), str(Path(PY).parent), os.environ["PATH"]])
    env = {**os.environ, "PATH": path}
    for i, block in enumerate(blocks):
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=work, env=env,
                           capture_output=True, text=True, timeout=120, check=False)
        assert r.returncode == 0, f"block {i} failed:\n{block}\n{r.stdout}\n{r.stderr}"
    kinds = [e["entry"]["kind"] for e in exported(work)]
    # three plans, "tiny" whose refused run is admitted once it is amended, and one on a
    # held-out split
    assert kinds.count("plan") == 5 and kinds.count("run") >= 9 and kinds.count("suite") == 1
    assert kinds.count("admission") == 1
    plans = {e["digest"]: e["entry"]["body"]["slug"] for e in exported(work)
             if e["entry"]["kind"] == "plan"}
    arms = sorted((plans.get(e["entry"]["body"]["plan"]), e["entry"]["body"]["arm"])
                  for e in exported(work) if e["entry"]["kind"] == "run"
                  and e["entry"]["body"]["plan"] in plans and plans[e["entry"]["body"]["plan"]]
                  != "kv-q8-vs-f16")
    # one run each way in; the same lm-eval output appended twice is one run
    assert arms == [("arith-kv", "f16"), ("arith-kv", "f16"), ("capitals-final", "tuned"),
                    ("hellaswag-kv", "f16"), ("hellaswag-kv", "q8"), ("hellaswag-kv", "q8")]
    statuses = {e["entry"]["body"]["status"] for e in exported(work)
                if e["entry"]["kind"] == "run"}
    assert statuses == {"completed", "failed"}
    assert run_cli("--ledger", str(work), "verify").code == 0


def test_doc_python_example_runs(ledger_dir: Path) -> None:
    block = doc_blocks("python")[0]
    shutil.copyfile(EXAMPLE_PLAN, ledger_dir / "plan.toml")
    assert run_cli("plan", "plan.toml").code == 0
    exec(compile(block, str(DOC), "exec"), {"__name__": "doc_example"})
    (run,) = runs()
    assert run["arm"] == "q8" and run["status"] == "completed"
    assert None in run["outcomes"]["score"]  # the failed request: missing, not zero
    assert_verified()
