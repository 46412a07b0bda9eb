"""The audit on checks (issue 36): A33, a claim whose scorer nobody read by hand, in a ledger
that spot-checks; A34, a scorer the hand spot-checks disagree with beyond the plan's
tolerance; A35, a claim on a suite not checked for contamination for its model, in a ledger
that checks; A36, a claim on a suite found contaminated. The ledgers are built with the public
commands, as a user writes them: the verdicts are given for exactly the items that `logbook
spot-check --dry-run --json` says the draw gives."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli
from test_audit import documented

RULES = ("A33", "A34", "A35", "A36")


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def seq_of(out: str) -> int:
    return int(out.split()[0])


def suite_hash(name: str) -> str:
    return "sha256:" + hashlib.sha256(name.encode()).hexdigest()


def claimed_plan(work: Path, slug: str = "kv", suite: str = "gsm8k",
                 **extra: Any) -> list[int]:
    """Plan ``slug`` on ``suite`` (one run an arm), anchored, run and claimed; returns the
    seqs of its runs."""
    body = plan_body(slug, runs_per_arm=1, n_items=60,
                     suite={"name": suite, "version": "1", "n_items": 60,
                            "dataset_hash": suite_hash(suite)}, **extra)
    ok("plan", str(write_json(work / f"{slug}.json", body)))
    ok("checkpoint")
    runs = []
    for arm, seed in (("f16", 1), ("q8", 2)):
        run = run_body(slug, arm, n_items=60, seed=seed)
        run["apparatus"]["dataset_hash"] = suite_hash(suite)
        runs.append(seq_of(ok("append", str(write_json(work / f"{slug}-{arm}.json",
                                                       draft("run", run))))))
    ok("claim", slug, "--statement", "q8 is within five points of f16")
    return runs


def spot_check(work: Path, run: int, disagree: int, n: int = 20, seed: int = 3,
               unsure: int = 0) -> None:
    """`logbook spot-check @RUN --verdicts FILE`: the first ``disagree`` items drawn judged
    wrongly scored, the next ``unsure`` unsure, the rest right."""
    drawn = [x["id"] for x in orjson.loads(ok("spot-check", f"@{run}", "--n", str(n),
                                              "--seed", str(seed), "--dry-run",
                                              "--json"))["items"]]
    said = ["disagree"] * disagree + ["unsure"] * unsure
    verdicts = [{"id": i, "verdict": said[k] if k < len(said) else "agree"}
                for k, i in enumerate(drawn)]
    path = write_json(work / f"verdicts-{run}-{seed}.json", verdicts)
    ok("spot-check", f"@{run}", "--n", str(n), "--seed", str(seed), "--verdicts", str(path))


def contamination(suite: str, result: str = "clean", model: str = "m-7b",
                  *more: str) -> int:
    return seq_of(ok("check", "contamination", "--model", model, "--suite", suite,
                     "--method", "ngram-overlap", "--result", result, *more))


def findings(rule: str, *more: str) -> list[dict[str, Any]]:
    r = run_cli("audit", "--only", rule, "--json", *more)
    assert r.code in (0, 1), r.err
    return list(r.json["findings"])


def digest_of(seq: int) -> str:
    [entry] = [e for e in orjson.loads(ok("log", "--json")) if e["seq"] == seq]
    return str(entry["digest"])


def quiet(*more: str) -> bool:
    return all(findings(rule, *more) == [] for rule in RULES)


# -- A33 ----------------------------------------------------------------------------------------
def test_a33_a_claim_whose_scorer_nobody_read(ledger_dir: Path) -> None:
    claimed_plan(ledger_dir)  # plan @1, runs @2 and @3, claim @4
    pilot = plan_body("pilot", runs_per_arm=1, n_items=60, arms=("q8",),
                      suite={"name": "pilot", "version": "1", "n_items": 60})
    ok("plan", str(write_json(ledger_dir / "pilot.json", pilot)))
    run = seq_of(ok("append", str(write_json(ledger_dir / "pilot-q8.json",
                                             draft("run", run_body("pilot", "q8",
                                                                   n_items=60, seed=9))))))
    spot_check(ledger_dir, run, disagree=0)
    [f] = findings("A33")
    assert f["severity"] == "info" and f["seq"] == 4
    assert f["message"].startswith("plan kv @1: claim @4 rests on runs none of which")
    assert f["entries"][:2] == [digest_of(4), digest_of(1)]
    documented(f)


def test_a33_is_answered_by_a_spot_check_of_any_counted_run(ledger_dir: Path) -> None:
    runs = claimed_plan(ledger_dir)
    spot_check(ledger_dir, runs[1], disagree=1)
    assert findings("A33") == []


def test_a33_a_spot_check_of_a_retracted_run_does_not_count(ledger_dir: Path) -> None:
    runs = claimed_plan(ledger_dir)
    spot_check(ledger_dir, runs[1], disagree=0)
    ok("retract", f"@{runs[1]}", "--reason", "the prompt template was stale",
       "--category", "harness_defect")
    [f] = findings("A33")
    assert f["message"].startswith("plan kv @1: claim @4")


# -- A34 ----------------------------------------------------------------------------------------
def test_a34_a_scorer_the_hand_checks_disagree_with(ledger_dir: Path) -> None:
    runs = claimed_plan(ledger_dir)
    spot_check(ledger_dir, runs[0], disagree=5, unsure=2)
    [f] = findings("A34")
    assert f["severity"] == "warning" and f["seq"] == 1
    # 5 of 18 decided: 27.8%, Wilson 95% from 12.5% to 50.9%
    assert "disagree with the scorer on 5 of the 18 items judged; 2 unsure left out: 27.8% " \
           "(Wilson 95% interval 12.5% to 50.9%), above the plan's scorer tolerance of 5.0%" \
           in f["message"]
    assert f["entries"] == [digest_of(1), digest_of(5)]
    documented(f)


def test_a34_reads_the_lower_bound_not_the_point(ledger_dir: Path) -> None:
    # 2 of 20 is 10%, above 5%, but its Wilson lower bound (2.8%) is not: quiet
    runs = claimed_plan(ledger_dir)
    spot_check(ledger_dir, runs[0], disagree=2)
    assert findings("A34") == []
    spot_check(ledger_dir, runs[1], disagree=4, seed=4)  # 6 of 40: 15% (7.1% to 29.1%)
    [f] = findings("A34")
    assert "6 of the 40 items judged" in f["message"]


def test_a34_a_plan_that_tolerates_more_is_not_warned(ledger_dir: Path) -> None:
    runs = claimed_plan(ledger_dir, scorer_tolerance=0.2)
    spot_check(ledger_dir, runs[0], disagree=5)  # 25% (11.2% to 46.9%): within 20% at 95%
    assert findings("A34") == []
    spot_check(ledger_dir, runs[1], disagree=10, seed=4)  # 15 of 40: 37.5% (24.2% to 53%)
    [f] = findings("A34")
    assert "scorer tolerance of 20.0%" in f["message"]


# -- A35 ----------------------------------------------------------------------------------------
def test_a35_a_claim_on_a_suite_no_check_covers(ledger_dir: Path) -> None:
    claimed_plan(ledger_dir)
    other = contamination("nightly")  # the ledger checks, but another suite
    [f] = findings("A35")
    assert f["severity"] == "info" and f["seq"] == 4
    assert f["message"].startswith("plan kv @1: claim @4 rests on runs of m-7b, which no "
                                   f"contamination check covers on suite gsm8k, while the "
                                   f"ledger checks others (@{other})")
    documented(f)
    contamination("gsm8k", "clean", "m-13b")  # another model: still not the claim's
    assert len(findings("A35")) == 1
    contamination(suite_hash("gsm8k"), "inconclusive")  # by the suite's dataset hash
    assert findings("A35") == []


# -- A36 ----------------------------------------------------------------------------------------
def test_a36_a_claim_on_a_contaminated_suite(ledger_dir: Path) -> None:
    claimed_plan(ledger_dir)
    contamination("gsm8k", "clean", "m-7b")
    bad = contamination("gsm8k", "contaminated", "m-7b", "--rate", "0.12", "--split", "test")
    [f] = findings("A36")
    assert f["severity"] == "warning" and f["seq"] == 4
    assert f"m-7b by ngram-overlap (@{bad}, rate 12.0%, split test)" in f["message"]
    assert f["entries"] == [digest_of(4), digest_of(1), digest_of(bad)]
    documented(f)
    assert findings("A35") == []  # checked, and found contaminated: A36 says it
    ok("retract", f"@{bad}", "--reason", "the overlap index held the test set twice",
       "--category", "analysis_error")
    assert findings("A36") == []


def test_a36_a_contaminated_check_of_another_model_or_suite_is_not_the_claims(
        ledger_dir: Path) -> None:
    claimed_plan(ledger_dir)
    contamination("gsm8k", "clean")
    contamination("gsm8k", "contaminated", "m-13b")
    contamination("nightly", "contaminated")
    assert findings("A36") == []


# -- honest work, no checks, scoping --------------------------------------------------------
def test_checked_honest_work_is_quiet(ledger_dir: Path) -> None:
    runs = claimed_plan(ledger_dir)
    contamination("gsm8k", "clean", "m-7b", "--rate", "0.004")
    spot_check(ledger_dir, runs[0], disagree=1, n=30, unsure=1)
    assert quiet()


def test_a_ledger_that_never_checks_is_told_nothing_about_checks(ledger_dir: Path) -> None:
    claimed_plan(ledger_dir)
    assert quiet()
    r = run_cli("audit", "--json")
    assert not [f for f in r.json["findings"] if f["check"] in RULES]
    assert set(RULES) <= set(r.json["rules_run"])


def test_audit_plan_keeps_each_plans_own_check_findings(ledger_dir: Path) -> None:
    kv = claimed_plan(ledger_dir)  # plan @1, claim @4
    claimed_plan(ledger_dir, "kv2", suite="math")  # plan @5, claim @8
    contamination("gsm8k", "contaminated")  # kv's suite: A36 on kv, A35 on kv2
    spot_check(ledger_dir, kv[0], disagree=8)  # kv's scorer: A34 on kv, A33 on kv2
    assert [f["seq"] for f in findings("A36", "--plan", "kv")] == [4]
    assert findings("A36", "--plan", "kv2") == []
    assert [f["seq"] for f in findings("A35", "--plan", "kv2")] == [8]
    assert findings("A35", "--plan", "kv") == []
    assert [f["seq"] for f in findings("A34", "--plan", "kv")] == [1]
    assert findings("A34", "--plan", "kv2") == []
    assert [f["seq"] for f in findings("A33", "--plan", "kv2")] == [8]
    assert findings("A33", "--plan", "kv") == []
    whole = {f["check"]: f["seq"] for rule in RULES for f in findings(rule)}
    assert whole == {"A33": 8, "A34": 1, "A35": 8, "A36": 4}
