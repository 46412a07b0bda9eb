"""Inspect's epochs reducers and the suite's identity, with real `inspect eval` runs of a small
local task whose answers change from epoch to epoch (data/epochs_task.py) on the offline
`echo` model (data/site).

Each log is recorded at Inspect's own figure under its reducer, every epoch kept; a log whose
figure logbook's reduced items do not give, or whose reducer logbook cannot apply, is refused;
and the suite's identity (apparatus.dataset_hash) is the data, the same whatever the epochs,
reducer, model or temperature, and what docs/recording.md's recipe computes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import plan_body, write_eval, write_json
from conftest import run_cli

DATA = Path(__file__).parent / "data"
DOC = Path(__file__).parents[2] / "docs" / "recording.md"
INSPECT = shutil.which("inspect", path=str(Path(sys.executable).parent))

pytestmark = [pytest.mark.long,
              pytest.mark.skipif(INSPECT is None or find_spec("inspect_ai") is None,
                                 reason="needs inspect_ai: pip install -e '.[inspect]'")]

# each item's epochs (data/epochs_task.py's PATTERN): 1 right, 0 wrong
PATTERN = {"s0": "000", "s1": "100", "s2": "100", "s3": "110", "s4": "111", "s5": "010"}
# --epochs-reducer -> (outcomes.reducer, the accuracy worked out here from PATTERN)
REDUCERS: dict[str, tuple[str | None, Fraction]] = {
    "": (None, Fraction(4, 9)),  # none given: Inspect's mean, and no reducer recorded
    "mean": ("mean", Fraction(4, 9)),
    "median": ("median", Fraction(1, 3)),
    "mode": ("mode", Fraction(1, 3)),
    "max": ("max", Fraction(5, 6)),
    "at_least_2": ("at_least_2", Fraction(1, 3)),
    "pass_at_2": ("pass_at_2", Fraction(2, 3)),  # 1 - C(n-c,2)/C(3,2): 0, 2/3 x3, 1, 1
}


def python_path() -> str:
    """The test provider's folder, then whatever PYTHONPATH already says (a checkout first)."""
    return os.pathsep.join(p for p in [str(DATA / "site"), os.environ.get("PYTHONPATH")] if p)


def inspect_eval(where: Path, *args: str, env: dict[str, str] | None = None
                 ) -> subprocess.CompletedProcess[str]:
    """`inspect eval` of the epochs task in ``where``, its log in ``where/logs``; the hook
    loaded but switched off unless ``env`` switches it on."""
    assert INSPECT is not None
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / "epochs_task.py", where / "epochs_task.py")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
    environ |= {"PYTHONPATH": python_path(), **(env or {})}
    done = subprocess.run([INSPECT, "eval", "epochs_task.py", "--log-dir", "logs",
                           "--display", "none", *args], cwd=where, env=environ,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def log_of(where: Path) -> Path:
    (log,) = (where / "logs").glob("*.eval")
    return log


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real logs: 3 epochs of echo/x under each reducer, the graded scorer under median, one
    epoch of echo/y at temperature 0.7, other targets, and a reducer logbook cannot apply."""
    root = tmp_path_factory.mktemp("inspect-reducers")
    runs: dict[str, list[str]] = {
        name: ["--model", "echo/x", "--epochs", "3",
               *(["--epochs-reducer", name] if name else [])] for name in REDUCERS}
    runs |= {
        "mean,max": ["--model", "echo/x", "--epochs", "3", "--epochs-reducer", "mean,max"],
        "graded-median": ["--model", "echo/x", "--epochs", "3", "--epochs-reducer", "median",
                          "-T", "graded=true"],
        "y-one-epoch": ["--model", "echo/y", "--temperature", "0.7"],
        "other-target": ["--model", "echo/x", "-T", "target=NOPE"],
        "majority": ["--model", "echo/x", "--epochs", "3", "--epochs-reducer", "majority"],
    }
    out = {}
    for name, args in runs.items():
        where = root / (name or "default")
        inspect_eval(where, *args)
        out[name] = log_of(where)
    return out


def header(log: Path) -> dict[str, Any]:
    from logbook.ingest._eval_zip import EvalArchive

    with EvalArchive(log) as archive:
        doc: dict[str, Any] = orjson.loads(archive.read("header.json"))
    return doc


def exported_runs(ledger: Path) -> list[dict[str, Any]]:
    r = run_cli("--ledger", str(ledger), "export")
    assert r.code == 0, r.err
    return [e["body"] for e in (orjson.loads(line)["entry"] for line in r.out.splitlines())
            if e["kind"] == "run"]


def new_ledger(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    assert run_cli("init", str(folder), "--name", name).code == 0
    return folder


def test_each_reducer_is_recorded_at_inspects_figure(made: dict[str, Path],
                                                     tmp_path: Path) -> None:
    """One plan, an arm per reducer: every log goes in (one suite: the identity ignores the
    reducer), each run's score in the report is Inspect's own figure for its reducer, every
    epoch is in the outcomes, and the effects pair the reduced items."""
    ledger = new_ledger(tmp_path, "ledger")
    arms = [name or "default" for name in REDUCERS]
    body = plan_body("reducers", runs_per_arm=1, arms=tuple(arms),
                     suite={"name": "epochs", "version": "1", "n_items": 6},
                     metric={"name": "includes.accuracy", "kind": "proportion"})
    assert run_cli("--ledger", str(ledger), "plan",
                   str(write_json(tmp_path / "plan.json", body))).code == 0
    for name, arm in zip(REDUCERS, arms, strict=True):
        r = run_cli("--ledger", str(ledger), "append", "--from", "inspect", str(made[name]),
                    "--plan", "reducers", "--arm", arm)
        assert r.code == 0, r.err
    by_arm = {run["arm"]: run for run in exported_runs(ledger)}
    r = run_cli("--ledger", str(ledger), "report", "reducers", "--json")
    assert r.code == 0, r.err
    report = orjson.loads(r.out)
    scores = {a["name"]: a["runs"][0]["score"] for a in report["arms"]}
    for name, arm in zip(REDUCERS, arms, strict=True):
        reducer, expected = REDUCERS[name]
        run = by_arm[arm]
        (entry,) = header(made[name])["results"]["scores"]
        inspects = entry["metrics"]["accuracy"]["value"]
        assert entry.get("reducer") == reducer
        assert inspects == pytest.approx(float(expected), abs=1e-12)  # the task works
        assert scores[arm] == pytest.approx(inspects, abs=1e-12), arm
        assert run["outcomes"].get("reducer") == reducer
        assert run["reported"]["value"] == inspects
        assert run["outcomes"]["sample"] == [1, 2, 3] * 6  # every epoch kept
        assert run["outcomes"]["score"] == [float(c) for i in sorted(PATTERN)
                                            for c in PATTERN[i]]
    assert len({run["apparatus"]["dataset_hash"] for run in by_arm.values()}) == 1
    effects = {(e["control"], e["treatment"]): e for e in report["effects"]}
    effect = effects[("default", "max")]
    assert effect["point"] == pytest.approx(float(Fraction(5, 6) - Fraction(4, 9)), abs=1e-12)


def test_graded_median_and_several_reducers(made: dict[str, Path], tmp_path: Path) -> None:
    """Scores between 0 and 1 under median (not the mean: 0.5 against 0.4167); a log of two
    reducers is read at its headline's, the other's figure kept in `reported.scores`."""
    ledger = new_ledger(tmp_path, "ledger")
    for name in ("graded-median", "mean,max"):
        r = run_cli("--ledger", str(ledger), "append", "--from", "inspect", str(made[name]))
        assert r.code == 0, r.err
    graded, both = exported_runs(ledger)
    assert graded["outcomes"]["reducer"] == "median"
    assert graded["outcomes"]["metric"] == "graded_by_epoch.mean"
    assert graded["reported"]["value"] == 0.5
    assert both["outcomes"]["reducer"] == "mean" and both["reported"]["reducer"] == "mean"
    assert [s["reducer"] for s in both["reported"]["scores"]] == ["mean", "max"]


def test_a_reducer_logbook_cannot_apply_is_refused_naming_it(made: dict[str, Path],
                                                             tmp_path: Path) -> None:
    ledger = new_ledger(tmp_path, "ledger")
    r = run_cli("--ledger", str(ledger), "append", "--from", "inspect", str(made["majority"]))
    assert r.code == 2
    assert "'majority'" in r.err and "reducer" in r.err and "results.scores" in r.err
    assert exported_runs(ledger) == []


def _with_header(log: Path, dest: Path, change: Any) -> Path:
    """The real log ``log`` with its header.json changed by ``change``, as ``dest``."""
    from logbook.ingest._eval_zip import EvalArchive

    with EvalArchive(log) as archive:
        members = {name: archive.read(name) for name in archive.infos}
    doc = orjson.loads(members["header.json"])
    change(doc)
    members["header.json"] = orjson.dumps(doc)
    return write_eval(dest, members)


def test_a_figure_the_reduced_items_do_not_give_is_refused_with_both(made: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    """The max log, its reducer turned to mean (its figure still max's 0.833): logbook's own
    figure is the mean's 0.444, so it is refused, both named; so is the mean log claiming
    max's figure."""
    ledger = new_ledger(tmp_path, "ledger")

    def to_mean(doc: dict[str, Any]) -> None:
        doc["results"]["scores"][0]["reducer"] = "mean"

    def claims_max(doc: dict[str, Any]) -> None:
        doc["results"]["scores"][0]["metrics"]["accuracy"]["value"] = 5 / 6

    for source, change in (("max", to_mean), ("", claims_max)):
        log = _with_header(made[source], tmp_path / f"edited-{source or 'default'}.eval",
                           change)
        r = run_cli("--ledger", str(ledger), "append", "--from", "inspect", str(log))
        assert r.code == 2, r.err
        assert "0.8333333333333334" in r.err and "0.4444444444444444" in r.err, r.err
        assert "results.scores.includes.metrics.accuracy" in r.err
    assert exported_runs(ledger) == []


def test_the_identity_is_the_data(made: dict[str, Path]) -> None:
    """The same over epochs (3 or 1), reducers, models and temperatures; another target is
    another suite; and docs/recording.md's recipe, run on the log, computes the same."""
    from logbook.ingest.inspect import read_runs

    hashes = {name: read_runs(log)[0]["apparatus"]["dataset_hash"]
              for name, log in made.items() if name not in ("majority", "graded-median")}
    same = {h for name, h in hashes.items() if name != "other-target"}
    assert len(same) == 1 and re.fullmatch(r"sha256:[0-9a-f]{64}", same.pop())
    assert hashes["other-target"] != hashes["max"]
    assert read_runs(made["graded-median"])[0]["apparatus"]["dataset_hash"] == hashes["max"]
    (recipe,) = [b for b in re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.M | re.S)
                 if "read_eval_log" in b and "sha256:" in b]
    for name in ("max", "y-one-epoch", "other-target"):
        done = subprocess.run([sys.executable, "-c", recipe, str(made[name])],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == hashes[name]


def test_the_model_as_named_by_append_run_and_hook(made: dict[str, Path],
                                                   tmp_path: Path) -> None:
    """`logbook run -- inspect eval ...` and the hook record Inspect's model as the user named
    it (`echo/y`), as `append --from inspect` does, with the same outcomes and identity."""
    ledger = new_ledger(tmp_path, "ledger")
    args = ["--model", "echo/y", "--epochs", "3", "--epochs-reducer", "max"]
    hooked = tmp_path / "hooked"
    inspect_eval(hooked, *args, env={"LOGBOOK_RECORD": "1", "LOGBOOK_DIR": str(ledger)})
    wrapped = tmp_path / "wrapped"
    wrapped.mkdir()
    shutil.copy(DATA / "epochs_task.py", wrapped / "epochs_task.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGBOOK_")}
    env |= {"PYTHONPATH": python_path(),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])}
    done = subprocess.run([sys.executable, "-m", "logbook", "--ledger", str(ledger), "run",
                           "--from", "inspect", "logs", "--", "inspect", "eval",
                           "epochs_task.py", "--log-dir", "logs", "--display", "none", *args],
                          cwd=wrapped, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    r = run_cli("--ledger", str(ledger), "append", "--from", "inspect", str(made["max"]))
    assert r.code == 0, r.err
    by_hook, by_run, by_append = exported_runs(ledger)
    assert by_hook["apparatus"]["model"] == by_run["apparatus"]["model"] == "echo/y"
    assert by_append["apparatus"]["model"] == "echo/x"
    for run in (by_hook, by_run):
        assert run["outcomes"] == by_append["outcomes"]
        assert run["apparatus"]["dataset_hash"] == by_append["apparatus"]["dataset_hash"]
