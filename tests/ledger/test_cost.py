"""Recording what runs used (issue 36, item 7): tokens and wall time read from the real harness
outputs under tests/fixtures (held to Inspect's own reader and lm-eval's file), the command's
wall time and the options --cost, --tokens-in and --tokens-out through `append --from` and
`logbook run`, and every bad input refused with exit 2, one sentence naming the field or
option, the ledger unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli
from test_record import (
    FIXTURES,
    INSPECT_ERRORS,
    INSPECT_FAILED,
    MARK,
    PY,
    head,
    lb,
    make_plan,
    one_sentence,
    outcomes_writer,
    runs,
)

INSPECT_MAIN = FIXTURES / "inspect/run-main"
LM_ONE = FIXTURES / "lm_eval/run-seed1"
LM_TWO_TASKS = FIXTURES / "lm_eval/run-2tasks-seed6"


def arith_plan(**extra: Any) -> str:
    return make_plan("arith", arms=("a", "b"),
                     suite={"name": "arith", "version": "1", "n_items": 200},
                     metric={"name": "match.accuracy", "kind": "proportion"}, **extra)


def inspect_usage(folder: Path) -> dict[str, Any]:
    """What Inspect's own reader says the log used: tokens summed over its models, and the
    seconds from started_at to completed_at."""
    from datetime import datetime

    log_mod = pytest.importorskip("inspect_ai.log")
    log = log_mod.read_eval_log(str(next(folder.glob("*.eval"))), header_only=True)
    usage = log.stats.model_usage.values()
    took = (datetime.fromisoformat(log.stats.completed_at)
            - datetime.fromisoformat(log.stats.started_at)).total_seconds()
    return {"tokens_in": sum(u.input_tokens for u in usage),
            "tokens_out": sum(u.output_tokens for u in usage), "wall_seconds": took}


def test_inspect_logs_give_their_tokens_and_wall_time(ledger_dir: Path) -> None:
    arith_plan()
    for folder, arm in ((INSPECT_MAIN, "a"), (INSPECT_FAILED, "b"), (INSPECT_ERRORS, "b")):
        r = run_cli("append", "--from", "inspect", str(folder), "--plan", "arith", "--arm", arm)
        assert r.code == 0, r.err
    main, failed, errors = runs()
    assert failed["status"] == "failed"  # a failed evaluation spent its tokens all the same
    for run, folder in ((main, INSPECT_MAIN), (failed, INSPECT_FAILED),
                        (errors, INSPECT_ERRORS)):
        assert run["usage"] == inspect_usage(folder), folder
    assert main["usage"]["tokens_in"] > 0 and main["usage"]["wall_seconds"] > 0


def test_lm_eval_gives_its_evaluation_time_to_its_one_run(ledger_dir: Path) -> None:
    doc = json.loads(next(LM_ONE.glob("results_*.json")).read_text())
    r = run_cli("append", "--from", "lm-eval", str(LM_ONE))
    assert r.code == 0, r.err
    (run,) = runs()
    assert run["usage"] == {"wall_seconds": float(doc["total_evaluation_time_seconds"])}
    # two tasks in one evaluation: its time belongs to neither run alone, so neither has it
    r = run_cli("append", "--from", "lm-eval", str(LM_TWO_TASKS))
    assert r.code == 0, r.err
    assert [b.get("usage") for b in runs()[1:]] == [None, None]


def test_cost_and_tokens_options_of_append_from(ledger_dir: Path) -> None:
    arith_plan()
    r = run_cli("append", "--from", "inspect", str(INSPECT_MAIN), "--plan", "arith", "--arm",
                "a", "--cost", "0.42 USD", "--tokens-out", "410")
    assert r.code == 0, r.err
    (run,) = runs()
    read = inspect_usage(INSPECT_MAIN)
    # the option's count replaces the log's; the others stay as the log says
    assert run["usage"] == {**read, "tokens_out": 410,
                            "cost": {"amount": 0.42, "currency": "USD"}}


def test_logbook_run_records_the_command_wall_time_and_its_cost(ledger_dir: Path) -> None:
    sleep = "import time; time.sleep(0.4)\n"
    r = lb("run", "--outcomes", "items.jsonl", "--cost", "0.05 EUR", "--tokens-in", "120",
           "--", *outcomes_writer("items.jsonl", 3, sleep), cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    (run,) = runs()
    usage = run["usage"]
    assert usage["cost"] == {"amount": 0.05, "currency": "EUR"} and usage["tokens_in"] == 120
    assert 0.4 <= usage["wall_seconds"] < 30
    # a command that fails still spent: its failed run keeps the time and the cost
    r = lb("run", "--outcomes", "none.jsonl", "--cost", "0.01 EUR", "--",
           PY, "-c", "import sys; sys.exit(3)", cwd=ledger_dir)
    assert r.returncode == 3, r.stderr
    failed = runs()[-1]
    assert failed["status"] == "failed"
    assert failed["usage"]["cost"] == {"amount": 0.01, "currency": "EUR"}
    assert failed["usage"]["wall_seconds"] >= 0


def test_inspect_through_logbook_run_keeps_the_tokens_and_times_the_command(
        ledger_dir: Path) -> None:
    arith_plan()
    logs = ledger_dir / "logs"
    copy = ("import pathlib, shutil, sys, time\n"
            "dst = pathlib.Path(sys.argv[-1]); dst.mkdir(parents=True, exist_ok=True)\n"
            "for s in sys.argv[1:-1]: shutil.copyfile(s, dst / pathlib.Path(s).name)\n"
            "time.sleep(0.2)\n")
    r = lb("run", "--plan", "arith", "--arm", "a", "--from", "inspect", logs, "--", PY, "-c",
           copy, *map(str, INSPECT_MAIN.glob("*.eval")), logs, cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    (run,) = runs()
    read = inspect_usage(INSPECT_MAIN)
    assert run["usage"]["tokens_in"] == read["tokens_in"]
    assert run["usage"]["tokens_out"] == read["tokens_out"]
    # the wall time is the command's, as logbook timed it, not the log's own
    assert 0.2 <= run["usage"]["wall_seconds"] < 30


# ---------------------------------------------------------------- refusals


def _usage_draft(usage: Any) -> list[str]:
    write_json(Path("bad.json"), draft("run", run_body(None, None, usage=usage)))
    return ["append", "bad.json"]


def _budget_plan(budget: Any) -> list[str]:
    write_json(Path("bad.plan.json"), plan_body("budgeted", budget=budget))
    return ["plan", "bad.plan.json"]


BAD: list[tuple[str, Any, str]] = [
    ("cost without currency", ["--cost", "0.42"], "--cost"),
    ("negative cost", ["--cost", "-1 USD"], "--cost"),
    ("lower-case currency", ["--cost", "0.42 usd"], "--cost"),
    ("amount not a number", ["--cost", "abc USD"], "--cost"),
    ("negative tokens", ["--tokens-in", "-5"], "--tokens-in"),
    ("tokens not a number", ["--tokens-out", "many"], "--tokens-out"),
]


@pytest.mark.parametrize(("what", "args", "named"), BAD, ids=[b[0] for b in BAD])
def test_bad_options_of_append_from_change_nothing(ledger_dir: Path, what: str,
                                                   args: list[str], named: str) -> None:
    arith_plan()
    before = head()
    r = run_cli("append", "--from", "inspect", str(INSPECT_MAIN), "--plan", "arith", "--arm",
                "a", *args)
    assert r.code == 2, (what, r.err)
    assert named in r.err, (what, r.err)
    assert head() == before


@pytest.mark.parametrize(("what", "args", "named"), BAD[:5], ids=[b[0] for b in BAD[:5]])
def test_bad_options_of_run_refused_before_the_command_runs(ledger_dir: Path, what: str,
                                                            args: list[str],
                                                            named: str) -> None:
    before = head()
    r = lb("run", "--outcomes", "x.jsonl", *args, "--", PY, "-c", MARK, cwd=ledger_dir)
    assert r.returncode == 2, (what, r.stderr)
    assert named in one_sentence(r.stderr)
    assert not (ledger_dir / "ran").exists()  # refused before the command started
    assert head() == before


BAD_BODIES: list[tuple[str, Any, str]] = [
    ("empty usage", lambda: _usage_draft({}), "usage"),
    ("currency of two letters", lambda: _usage_draft(
        {"cost": {"amount": 1.0, "currency": "US"}}), "usage.cost.currency"),
    ("negative tokens in a body", lambda: _usage_draft({"tokens_in": -1}), "usage.tokens_in"),
    ("negative wall time", lambda: _usage_draft({"wall_seconds": -0.5}), "usage.wall_seconds"),
    ("tokens as a string", lambda: _usage_draft({"tokens_out": "9"}), "usage.tokens_out"),
    ("unknown usage field", lambda: _usage_draft({"dollars": 3}), "usage.dollars"),
    ("budget amount without currency", lambda: _budget_plan({"amount": 5}), "budget"),
    ("empty budget", lambda: _budget_plan({}), "budget"),
    ("negative token budget", lambda: _budget_plan({"tokens": -1}), "budget.tokens"),
    ("cost with a draft file", lambda: ["append", "--cost", "1 USD", "bad.json"], "--cost"),
    ("cost over several runs", lambda: ["append", "--from", "lm-eval", str(LM_TWO_TASKS),
                                        "--cost", "1 USD"], "--cost"),
]


@pytest.mark.parametrize(("what", "make", "named"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_bad_usage_and_budget_change_nothing(ledger_dir: Path, what: str, make: Any,
                                             named: str) -> None:
    write_json(Path("bad.json"), draft("run", run_body(None, None)))
    args = make()
    before = head()
    r = run_cli(*args)
    assert r.code == 2, (what, r.err)
    line = one_sentence(r.err)
    assert named in line, (what, line)
    assert head() == before


def test_a_several_run_command_records_its_runs_and_says_where_the_cost_went(
        ledger_dir: Path) -> None:
    """`logbook run` cannot refuse after the command ran: a --cost it cannot give to one run
    is said, and the runs are kept without it."""
    out = ledger_dir / "out"
    files = [*map(str, LM_TWO_TASKS.glob("*.json*"))]
    copy = ("import pathlib, shutil, sys\n"
            "dst = pathlib.Path(sys.argv[-1]); dst.mkdir(parents=True, exist_ok=True)\n"
            "for s in sys.argv[1:-1]: shutil.copyfile(s, dst / pathlib.Path(s).name)\n")
    r = lb("run", "--from", "lm-eval", out, "--cost", "2 USD", "--", PY, "-c", copy, *files,
           out, cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    assert "belongs to no one of them and is not recorded" in r.stderr
    assert [b.get("usage") for b in runs()] == [None, None]
