"""Confounds that are confounds (issue 14 item 6): A06 compares only what both arms recorded,
lists what one side did not record apart, counts fields that restate the declared variable as
the variable, and gives its finding as a short table."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
from builders import plan_body, write_json
from conftest import run_cli
from test_audit import audit, checks

N = 100


def items(tmp: Path, name: str, seed: int) -> Path:
    rng = random.Random(seed)
    path = tmp / name
    path.write_bytes(b"".join(orjson.dumps({"id": f"q{i}", "score": float(rng.random() < 0.7)})
                              + b"\n" for i in range(N)))
    return path


def model_plan(tmp: Path) -> str:
    body = plan_body(slug="models", runs_per_arm=2, n_items=N, arms=("a", "b"),
                     variable=["model"])
    body["metric"]["name"] = "score"
    r = run_cli("plan", str(write_json(tmp / "plan.json", body)), "--json")
    assert r.code == 0, r.err
    return str(r.json["digest"])


def apparatus(tmp: Path, model: str, **extra: Any) -> str:
    app = {"model": model, "engine_build": "b1",
           "harness_config": {"model_args": {"pretrained": model, "dtype": "float16"}}, **extra}
    return str(write_json(tmp / f"app-{model}.json", app))


def by_run(tmp: Path, arm: str, seed: int, app: str) -> None:
    src = items(tmp, f"src-{arm}-{seed}.jsonl", seed)
    out = tmp / f"out-{arm}-{seed}.jsonl"
    r = run_cli("run", "--plan", "models", "--arm", arm, "--session", "s1", "--outcomes",
                str(out), "--apparatus", app, "--", "cp", str(src), str(out))
    assert r.code == 0, r.err


def by_append(tmp: Path, arm: str, seed: int, app: str) -> None:
    src = items(tmp, f"file-{arm}-{seed}.jsonl", seed)
    r = run_cli("append", "--from", "jsonl", str(src), "--plan", "models", "--arm", arm,
                "--session", "s1", "--apparatus", app)
    assert r.code == 0, r.err


def test_run_and_append_from_mixed_in_one_plan_are_no_confound(ledger_dir: Path,
                                                               tmp_path: Path) -> None:
    """a via `logbook run` (captured.* recorded), b half via `run`, half via `append --from`;
    model_args.pretrained restates the declared variable."""
    model_plan(tmp_path)
    a, b = apparatus(tmp_path, "dummy-a"), apparatus(tmp_path, "dummy-b")
    by_run(tmp_path, "a", 1, a)
    by_run(tmp_path, "b", 2, b)
    by_run(tmp_path, "a", 3, a)
    by_append(tmp_path, "b", 4, b)
    assert "A06" not in checks(audit())


def test_only_one_side_recorded_is_listed_apart(ledger_dir: Path, tmp_path: Path) -> None:
    model_plan(tmp_path)
    a = apparatus(tmp_path, "dummy-a")
    b = apparatus(tmp_path, "dummy-b", engine_build="b2")
    for k in (1, 3):
        by_run(tmp_path, "a", k, a)
        by_append(tmp_path, "b", k + 1, b)
    f = next(f for f in audit()["findings"] if f["check"] == "A06")
    lines = f["message"].splitlines()
    assert lines[0] == ("plan models: a and b runs differ besides the declared variable (model) "
                        "in 1 field(s):")
    assert lines[1].split() == ["field", "|", "a", "|", "b"]
    assert lines[2].split() == ["engine_build", "|", "'b1'", "|", "'b2'"]
    assert lines[3].startswith("  not recorded by b (not compared): captured.cpu.cores")
    assert len(lines) == 4  # model_args.pretrained is the variable, not a confound
    assert "pretrained" not in f["message"]


def test_a_field_that_names_the_variable_but_differs_otherwise_is_a_confound(
        ledger_dir: Path, tmp_path: Path) -> None:
    model_plan(tmp_path)
    a = apparatus(tmp_path, "dummy-a")
    b = str(write_json(tmp_path / "b.json", {
        "model": "dummy-b", "engine_build": "b1",
        "harness_config": {"model_args": {"pretrained": "dummy-b", "dtype": "bfloat16"}}}))
    for k in (1, 3):
        by_append(tmp_path, "a", k, a)
        by_append(tmp_path, "b", k + 1, b)
    f = next(f for f in audit()["findings"] if f["check"] == "A06")
    assert "harness_config.model_args.dtype" in f["message"]
    assert "pretrained" not in f["message"] and "not recorded" not in f["message"]
