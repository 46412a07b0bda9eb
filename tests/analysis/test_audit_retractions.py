"""Retractions judged (issue 14 item 4): the report shows the verdict with and without a plan's
retracted runs, and A22 flags a retraction that launders a result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import plan_body, write_json
from conftest import run_cli
from test_audit import SUITE_HASH, append, audit, checks, documented, only_error, scored

N = 400


def laundering_plan(tmp: Path) -> str:
    """One run per arm; success when q8 beats f16 (the effect's interval above zero)."""
    body = plan_body(slug="kv", runs_per_arm=1, n_items=N,
                     success=[{"stat": "effect_low", "op": ">", "value": 0.0}],
                     failure=[{"stat": "effect_high", "op": "<", "value": 0.0}])
    body["suite"]["dataset_hash"] = SUITE_HASH
    r = run_cli("plan", str(write_json(tmp / "kv.json", body)), "--json")
    assert r.code == 0, r.err
    assert run_cli("checkpoint").code == 0
    return str(r.json["digest"])


def report(*args: str) -> Any:
    r = run_cli("report", "kv", *args)
    assert r.code == 0, r.err
    return r


def test_laundering_through_a_retraction(ledger_dir: Path, tmp_path: Path) -> None:
    plan = laundering_plan(tmp_path)
    runs = append(tmp_path, [scored(plan, "f16", 0.40, 1, n=N), scored(plan, "q8", 0.40, 2, n=N),
                             scored(plan, "q8", 0.50, 3, n=N)])
    assert checks(audit(code=1), "error") == ["A04"]  # q8 ran twice: optional stopping
    r = run_cli("retract", runs[1], "--reason", "scorer crashed midway",
                "--category", "harness_defect", "--correction", "re-run with the fixed scorer",
                "--json")
    assert r.code == 0, r.err
    f = only_error(audit(code=1), "A22")  # A04 cleared, but the retraction is judged
    assert f["entries"][:4] == [r.json["digest"], plan, runs[1], runs[2]]
    assert "worst run of arm q8" in f["message"] and "harness_defect" in f["message"]
    documented(f)
    rep = report("--json").json
    review = rep["retractions"]
    assert review["without"]["status"] == "success"
    assert review["with"]["status"] != "success" and review["changes_verdict"] is True
    assert review["runs"][0]["retraction"]["correction"] == "re-run with the fixed scorer"
    text = report().out
    assert "Verdict: success" in text
    seq = review["runs"][0]["seq"]
    assert f"without the 1 retracted run(s): success | with them (@{seq}): " in text
    assert "the retraction(s) change the verdict" in text
    assert f"with them (@{seq}): inconclusive" in text  # as docs/audit.md shows it
    assert "scorer crashed midway (harness_defect); correction: re-run with the fixed scorer" \
        in text
    assert "AUDIT A22 [error]" in text


def test_a_rerun_with_the_fix_answers_the_retraction(ledger_dir: Path, tmp_path: Path) -> None:
    plan = laundering_plan(tmp_path)
    runs = append(tmp_path, [scored(plan, "f16", 0.40, 1, n=N), scored(plan, "q8", 0.40, 2, n=N),
                             scored(plan, "q8", 0.50, 3, n=N)])
    for digest in runs[1:]:  # both q8 runs withdrawn, and q8 run again with the fix recorded
        assert run_cli("retract", digest, "--reason", "stale prompt template",
                       "--category", "harness_defect").code == 0
    append(tmp_path, [scored(plan, "q8", 0.45, 4, n=N, prompt_template="v2")], "again.jsonl")
    assert "A22" not in checks(audit())


def test_the_same_apparatus_run_again_does_not(ledger_dir: Path, tmp_path: Path) -> None:
    """Every run of q8 withdrawn and q8 run again unchanged: a redraw, whatever the reason."""
    plan = laundering_plan(tmp_path)
    runs = append(tmp_path, [scored(plan, "f16", 0.40, 1, n=N), scored(plan, "q8", 0.40, 2, n=N),
                             scored(plan, "q8", 0.50, 3, n=N)])
    for digest in runs[1:]:
        assert run_cli("retract", digest, "--reason", "stale prompt template",
                       "--category", "harness_defect").code == 0
    again = append(tmp_path, [scored(plan, "q8", 0.45, 4, n=N)], "again.jsonl")
    found = [f for f in audit(code=1)["findings"] if f["check"] == "A22"]
    assert len(found) == 2 and all(again[0] in f["entries"] for f in found)


def test_a_retraction_whose_fix_is_recorded_is_not_judged(ledger_dir: Path,
                                                         tmp_path: Path) -> None:
    """The wrong prompt template withdrawn, and q8 run again with the right one, recorded."""
    plan = laundering_plan(tmp_path)
    first = append(tmp_path, [scored(plan, "f16", 0.40, 1, n=N), scored(plan, "q8", 0.40, 2, n=N)])
    assert run_cli("retract", first[1], "--reason", "wrong prompt template",
                   "--category", "harness_defect").code == 0
    append(tmp_path, [scored(plan, "q8", 0.50, 3, n=N, prompt_template="v2")], "again.jsonl")
    result = audit(code=0)
    assert "A22" not in checks(result) and "A04" not in checks(result)


def test_a_late_retraction_that_flips_the_verdict(ledger_dir: Path, tmp_path: Path) -> None:
    """Not the arm's worst run, but the verdict differs with it: still laundering."""
    plan = laundering_plan(tmp_path)
    runs = append(tmp_path, [scored(plan, "f16", 0.50, 1, n=N), scored(plan, "f16", 0.40, 5, n=N),
                             scored(plan, "q8", 0.50, 3, n=N)])
    assert run_cli("retract", runs[0], "--reason", "ran on the wrong GPU",
                   "--category", "other").code == 0
    result = audit(code=1)
    f = next(x for x in result["findings"] if x["check"] == "A22")
    assert "the verdict is success without it and" in f["message"]


def test_the_html_report_shows_both_verdicts_and_the_correction(ledger_dir: Path,
                                                                tmp_path: Path) -> None:
    plan = laundering_plan(tmp_path)
    runs = append(tmp_path, [scored(plan, "f16", 0.40, 1, n=N), scored(plan, "q8", 0.40, 2, n=N),
                             scored(plan, "q8", 0.50, 3, n=N)])
    assert run_cli("retract", runs[1], "--reason", "scorer crashed", "--category",
                   "harness_defect", "--correction", "re-run with the fixed scorer").code == 0
    report("--html", str(tmp_path / "kv.html"))
    page = (tmp_path / "kv.html").read_text()
    assert "re-run with the fixed scorer" in page
    assert "without the 1 retracted run(s): success | with them" in page


def test_claim_check_fails_while_the_audit_has_an_error(ledger_dir: Path,
                                                        tmp_path: Path) -> None:
    """A claim whose figure still computes, on a plan one of whose runs was withdrawn while
    its twin counts (A22): FAILS, exit 1. The same claim on the honest plan STANDS."""
    plan = laundering_plan(tmp_path)
    runs = append(tmp_path, [scored(plan, "f16", 0.40, 1, n=N), scored(plan, "q8", 0.40, 2, n=N),
                             scored(plan, "q8", 0.50, 3, n=N)])
    assert run_cli("retract", runs[1], "--reason", "scorer crashed midway",
                   "--category", "harness_defect").code == 0
    made = run_cli("claim", "kv", "--statement", "q8 beats f16", "--json")
    assert made.code == 0, made.err
    r = run_cli("claim", "check", made.json["digest"])
    assert r.code == 1, r.out
    assert "FAILS: the audit finds 1 error(s) about it or its plan" in r.out
    assert "AUDIT A22 [error]" in r.out
    js = run_cli("claim", "check", made.json["digest"], "--json")
    assert js.code == 1 and js.json["stands"] is False
    assert any(p.startswith("the audit finds an error: A22") for p in js.json["problems"])


def test_claim_check_stands_on_the_honest_twin(ledger_dir: Path, tmp_path: Path) -> None:
    plan = laundering_plan(tmp_path)
    append(tmp_path, [scored(plan, "f16", 0.40, 1, n=N), scored(plan, "q8", 0.50, 3, n=N)])
    made = run_cli("claim", "kv", "--statement", "q8 beats f16", "--json")
    assert made.code == 0, made.err
    r = run_cli("claim", "check", made.json["digest"])
    assert r.code == 0 and "STANDS" in r.out, r.out
