"""The search budget (issue 36, item 5): every configuration tried on a plan's suite, in the
plan or not, travels with the plan's report and its claims. Built through the commands: four
exploratory configurations tried on the suite (one twice, one failed, one retracted), then a
plan of two arms; runs on another suite do not count."""

from __future__ import annotations

from pathlib import Path

from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def _explore(tmp_path: Path) -> list[int]:
    def body(build: str, seed: int, suite: str = "suite", **extra: object) -> dict[str, object]:
        b = run_body(None, None, seed=seed, **extra)  # type: ignore[arg-type]
        b["apparatus"] = {**b["apparatus"], "engine_build": build, "suite": suite}
        return draft("run", b)

    drafts = [body("b1", 1), body("b1", 2), body("b2", 3), body("b3", 4, status="failed"),
              body("b4", 5), body("b9", 6, suite="other-suite")]
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "e.jsonl", drafts)), "--json")
    assert r.code == 0, r.err
    return [e["seq"] for e in r.json]


def test_the_search_budget_counts_every_configuration_tried_on_the_suite(
        ledger_dir: Path, tmp_path: Path) -> None:
    seqs = _explore(tmp_path)
    ok("retract", f"@{seqs[4]}", "--reason", "bad build", "--category", "harness_defect")
    ok("plan", str(write_json(tmp_path / "p.json", plan_body("pp", runs_per_arm=1))))
    for arm in ("f16", "q8"):
        ok("append", str(write_json(tmp_path / f"{arm}.json",
                                    draft("run", run_body("pp", arm, seed=len(arm))))))
    budget = run_cli("report", "pp", "--json").json["checks"]["search_budget"]
    # b1 (twice), b2, b3 (failed), b4 (retracted): 4 before the plan; f16 and q8 in it
    assert budget == {"suite": "suite", "configurations": 6, "runs": 7, "before_plan": 4,
                      "first": seqs[0], "last": seqs[-1] + 4}
    assert ("search budget: 6 configuration(s) tried on suite suite in 7 run(s), "
            f"@{seqs[0]}–@{seqs[-1] + 4}; 4 before the plan") in ok("report", "pp")
    r = run_cli("claim", "pp", "--arm", "q8", "--statement", "q8 scores 70%")
    assert r.code == 0, r.err
    assert "one of 6 configurations tried on suite suite" in r.err
    claim = r.out.split()[0]
    r = run_cli("claim", "check", f"@{claim}")
    assert "best of 6 configurations tried on suite suite" in r.out, r.out
    assert run_cli("claim", "check", f"@{claim}", "--json").json["search_budget"][
        "configurations"] == 6


def test_a_plan_alone_on_its_suite_says_so(ledger_dir: Path, tmp_path: Path) -> None:
    ok("plan", str(write_json(tmp_path / "p.json", plan_body("pp", runs_per_arm=1))))
    ok("append", str(write_json(tmp_path / "f.json", draft("run", run_body("pp", "f16")))))
    budget = run_cli("report", "pp", "--json").json["checks"]["search_budget"]
    assert (budget["configurations"], budget["before_plan"]) == (1, 0)
    r = run_cli("claim", "pp", "--arm", "f16", "--statement", "f16 scores 70%")
    assert r.code == 0 and "configurations tried" not in r.err


def _findings(check: str) -> list[dict[str, object]]:
    return [f for f in run_cli("audit", "--json").json["findings"] if f["check"] == check]


def test_a11_counts_the_configurations_tried_across_the_suite(ledger_dir: Path,
                                                              tmp_path: Path) -> None:
    """One plan, one comparison: alone, no family; with the search on its suite before it
    (b1, b2, b3 failed, b4 retracted: a retracted run was still tried), a family of five."""
    ok("plan", str(write_json(tmp_path / "p.json", plan_body("pp", runs_per_arm=1))))
    for arm in ("f16", "q8"):
        ok("append", str(write_json(tmp_path / f"{arm}.json",
                                    draft("run", run_body("pp", arm, seed=len(arm))))))
    assert _findings("A11") == []
    seqs = _explore(tmp_path)
    ok("retract", f"@{seqs[4]}", "--reason", "bad build", "--category", "harness_defect")
    (found,) = _findings("A11")
    assert str(found["message"]).startswith("5 comparisons test suite suite 1 (pp; 4 "
                                            "configuration(s) tried by exploratory runs)")


def test_a39_a_claim_silent_on_its_search(ledger_dir: Path, tmp_path: Path) -> None:
    seqs = _explore(tmp_path)
    ok("plan", str(write_json(tmp_path / "p.json", plan_body("pp", runs_per_arm=1))))
    for arm in ("f16", "q8"):
        ok("append", str(write_json(tmp_path / f"{arm}.json",
                                    draft("run", run_body("pp", arm, seed=len(arm))))))
    silent = ok("claim", "pp", "--arm", "q8", "--statement", "q8 scores 70%").split()[0]
    (found,) = _findings("A39")
    assert found["seq"] == int(silent) and found["severity"] == "warning"
    assert f"chosen among 6 configurations tried on the suite (4 by exploratory runs before " \
           f"the claim, from @{seqs[0]})" in str(found["message"])
    ok("retract", f"@{silent}", "--reason", "said without its search", "--category", "other")
    ok("claim", "pp", "--arm", "q8", "--statement", "q8 scores 70%, the best of 6 "
       "configurations tried on the suite")
    assert _findings("A39") == []
    # runs after the claim are not what it was chosen from
    ok("append", str(write_json(tmp_path / "late.json", draft("run", {
        **run_body(None, None, seed=40),  # type: ignore[arg-type]
        "apparatus": {"engine_build": "b77", "suite": "suite", "model": "m"}}))))
    assert _findings("A39") == []
