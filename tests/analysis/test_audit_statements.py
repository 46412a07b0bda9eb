"""A claim says what its value says (issue 14 item 5): the figures of its statement are checked
against its value and interval on the metric's display scale, for `logbook claim` claims too."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli
from test_audit import append, audit, checks, claim, honest_runs, make_plan, scored

from logbook.analysis.audit.rules.statements import figures


def four_q8_runs(tmp: Path, q8: tuple[float, ...]) -> str:
    plan = make_plan(tmp, runs=4)
    append(tmp, honest_runs(plan, control=(0.66, 0.67, 0.66, 0.67), treatment=q8))
    return plan


def test_a_logbook_claim_that_quotes_the_best_run(ledger_dir: Path, tmp_path: Path) -> None:
    four_q8_runs(tmp_path, (0.70, 0.65, 0.66, 0.66))  # mean 66.75; the best run 70
    c = claim("kv", "q8 scores 70%", "--arm", "q8")
    body = run_cli("show", c["digest"], "--json").json["entry"]["body"]
    assert abs(body["value"] - 0.6675) < 1e-9  # the claim's value is the mean
    result = audit(code=1)
    f = next(x for x in result["findings"] if x["check"] == "A02")
    assert f["message"].startswith(f"claim @{f['seq']} says '70', which is what the best of 4 "
                                   "runs of q8")
    assert "(66.75)" in f["message"]  # on the display scale, points


def test_a_logbook_claim_that_quotes_another_figure(ledger_dir: Path, tmp_path: Path) -> None:
    four_q8_runs(tmp_path, (0.68, 0.65, 0.66, 0.68))  # mean 66.75; no run at 70
    claim("kv", "q8 scores 70%", "--arm", "q8")
    result = audit(code=0)
    assert "A02" not in checks(result)
    f = next(x for x in result["findings"] if x["check"] == "A13")
    assert "says '70', which is neither its value (66.75) nor a bound" in f["message"]


def test_an_honest_statement_is_quiet(ledger_dir: Path, tmp_path: Path) -> None:
    four_q8_runs(tmp_path, (0.68, 0.65, 0.66, 0.68))
    rep = next(a for a in run_cli("report", "kv", "--json").json["arms"] if a["name"] == "q8")
    from logbook.stats import format_estimate

    g = format_estimate(rep["mean"], rep["interval"]["low"], rep["interval"]["high"])
    claim("kv", f"q8 scores {g.point}% ({g.low}-{g.high}) over 4 runs of 100 items", "--arm",
          "q8")
    claim("kv", "q8 is within 5 points of f16 (the plan's min_effect), f16 at 66.5%")
    assert checks(audit(code=0)) == []


def test_digits_beyond_the_interval_are_still_false_precision(ledger_dir: Path,
                                                              tmp_path: Path) -> None:
    four_q8_runs(tmp_path, (0.68, 0.65, 0.66, 0.68))
    claim("kv", "q8 scores 66.75%", "--arm", "q8")
    f = next(x for x in audit(code=0)["findings"] if x["check"] == "A13")
    assert "'66.75' with 2 decimal(s)" in f["message"]


def test_an_unplanned_claim_on_another_figure(ledger_dir: Path, tmp_path: Path) -> None:
    from test_audit import hand_claim

    runs = append(tmp_path, [scored(None, "q8", 0.70, 1)])
    hand_claim(tmp_path, None, "q8", 0.70, [0.61, 0.79], runs, "m-7b scores 75%")
    assert "A13" in checks(audit(code=0))


def test_figures_are_numbers_with_a_unit_or_in_a_range() -> None:
    got = figures("q8 on m-7b (f16, b1234) scores 70.5% (67.5-72.5) over 3 runs, n=200; "
                  "-1.25 points (-4 to +1.5) against f16; 2 pp better; 12 items")
    assert [(f.text, f.decimals, f.unit) for f in got] == [
        ("70.5", 1, True), ("67.5", 1, False), ("72.5", 1, False), ("-1.25", 2, True),
        ("-4", 0, False), ("+1.5", 1, False), ("2", 0, True)]
