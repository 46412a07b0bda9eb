"""Repeats of one apparatus (issue 14 item 3): A12 judged by a prediction interval, A20 (two
runs that disagree and no third; same-item runs by their paired spread, issue 33 item 5), A21
(repeats that share one fixed seed while sampling), A29 (execution variance)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_audit import append, audit, checks, documented, make_plan, no_errors, scored

from logbook.stats.repeats import disagreement, predict_run


def test_a20_two_runs_disagree(ledger_dir: Path, tmp_path: Path) -> None:
    runs = append(tmp_path, [scored(None, "q8", 0.70, 1, n=1000),
                             scored(None, "q8", 0.80, 2, n=1000)])
    f = no_errors(audit(code=0), "A20")
    assert f["entries"] == [runs[1], runs[0]] and "run it a third time" in f["message"]
    assert "A12" not in checks(audit())  # which of the two is the surprise cannot be told
    documented(f)
    from conftest import run_cli

    assert run_cli("audit").code == 0  # stored for the brief: a run to re-measure
    assert [x["check"] for x in run_cli("brief", "--json").json["remeasure"]] == ["A20"]
    append(tmp_path, [scored(None, "q8", 0.71, 3, n=1000)], "third.jsonl")
    # a third run settles it; A12 then judges it against the first two, whose disagreement
    # is itself evidence of spread between runs, so 0.71 is no surprise
    assert checks(audit()) == []


def test_a20_is_quiet_when_two_runs_agree_within_sampling_error(ledger_dir: Path,
                                                                 tmp_path: Path) -> None:
    append(tmp_path, [scored(None, "q8", 0.70, 1), scored(None, "q8", 0.76, 2)])
    assert checks(audit()) == []  # 6 points at n = 100: 0.9 of the difference's sd (6.4)


def test_a20_in_a_plan(ledger_dir: Path, tmp_path: Path) -> None:
    plan = make_plan(tmp_path, runs=2, n_items=1000)  # a plan takes runs of its own suite
    drafts = [scored(plan, "f16", 0.70, 1, n=1000), scored(plan, "q8", 0.70, 2, n=1000),
              scored(plan, "f16", 0.71, 3, n=1000), scored(plan, "q8", 0.82, 4, n=1000)]
    runs = append(tmp_path, drafts)
    f = no_errors(audit("--plan", "kv", code=0), "A20")
    assert f["entries"] == [runs[3], runs[1], plan]


def sampled(seed: int, score: float, t: float = 0.7) -> dict:
    d = scored(None, "q8", score, seed, n=200)
    d["body"]["apparatus"]["decoding"] = {"temperature": t, "top_p": 0.95, "seed": 1234}
    return d


def test_a21_fixed_seed_while_sampling(ledger_dir: Path, tmp_path: Path) -> None:
    runs = append(tmp_path, [sampled(1, 0.70), sampled(2, 0.71), sampled(3, 0.70)])
    f = no_errors(audit(code=0), "A21")
    assert f["entries"] == runs and "decoding.seed=1234" in f["message"]
    documented(f)


def test_a21_quiet_at_temperature_zero_or_with_varied_seeds(ledger_dir: Path,
                                                            tmp_path: Path) -> None:
    greedy = [sampled(k, 0.70, t=0.0) for k in (1, 2)]
    varied = [sampled(k, 0.70) for k in (3, 4)]
    for k, d in enumerate(varied):
        d["body"]["apparatus"]["decoding"]["seed"] = k
    append(tmp_path, greedy + varied)
    assert "A21" not in checks(audit())


def test_predict_run_from_one_earlier_run() -> None:
    # one earlier run: sampling errors only, sd = sqrt(se_x² + se²)
    p = predict_run(0.80, 0.03, [0.70], [0.04])
    assert p.sd == pytest.approx(0.05) and p.z == pytest.approx(2.0) and p.between == 0.0
    assert disagreement(0.80, 0.03, 0.70, 0.04) == pytest.approx(2.0)
    # earlier runs that spread more than their sampling error: the excess is between runs
    q = predict_run(0.70, 0.01, [0.60, 0.70, 0.80], [0.01, 0.01, 0.01])
    assert q.between == pytest.approx((0.01 - 0.0001) ** 0.5)
    assert q.sd == pytest.approx((0.0001 + 0.0099 + 0.01 / 3) ** 0.5)
    # runs that agree closely by chance do not shrink the prediction below sampling error
    r = predict_run(0.75, 0.045, [0.70, 0.70, 0.71], [0.045] * 3)
    assert r.between == 0.0 and abs(r.z) < 1.0
    with pytest.raises(ValueError):
        predict_run(0.7, 0.01, [], [])
    with pytest.raises(ValueError):
        predict_run(0.7, -0.01, [0.6], [0.01])


def test_a_calibration_plan_is_not_a_comparison(ledger_dir: Path, tmp_path: Path) -> None:
    """Issue 15 item 9: a one-arm plan whose runs a band was measured from calibrates the
    pipeline; it is no second comparison on the suite (A11)."""
    from test_audit import calibrated_band, honest_runs

    calibrated_band(tmp_path)  # plan "cal", one arm, five q8 runs, and their band
    plan = make_plan(tmp_path, runs=3)
    append(tmp_path, honest_runs(plan), "kv.jsonl")
    assert "A11" not in checks(audit())


@pytest.mark.parametrize("banded", [True, False])
def test_exploratory_band_runs_are_calibration_not_exploration(ledger_dir: Path, tmp_path: Path,
                                                               banded: bool) -> None:
    """Exploratory runs a band was measured from, before a plan, are not A03's."""
    from conftest import run_cli
    from test_audit import honest_runs

    append(tmp_path, [scored(None, "q8", s, 200 + k) for k, s in
                      enumerate((0.70, 0.72, 0.70, 0.72, 0.71))], "explore.jsonl")
    if banded:
        assert run_cli("band", "kv_cache_precision=q8").code == 0
    plan = make_plan(tmp_path, runs=3)
    append(tmp_path, honest_runs(plan), "kv.jsonl")
    assert ("A03" in checks(audit())) is not banded


def _greedy(scores: list[float], seed: int = 7, temperature: float = 0.0) -> dict[str, Any]:
    d = scored(None, "q8", 0.5, 1, n=len(scores))
    d["body"]["outcomes"]["score"] = scores
    d["body"]["apparatus"]["decoding"] = {"temperature": temperature, "seed": seed}
    return d


def test_a29_greedy_reruns_that_disagree(ledger_dir: Path, tmp_path: Path) -> None:
    """The book's flagship case: greedy, one seed, 15 items, 80.0 then 66.7: four items flip.
    Execution variance (info), and A20 judges the pair by its paired spread: not a warning."""
    first = [1.0] * 12 + [0.0] * 3
    second = [0.0, 0.0, 0.0] + [1.0] * 9 + [1.0, 0.0, 0.0]  # 3 lost, 1 gained: 10 right
    runs = append(tmp_path, [_greedy(first), _greedy(second)])
    result = audit(code=0)
    f = next(x for x in result["findings"] if x["check"] == "A29")
    assert f["severity"] == "info" and f["entries"][:2] == runs
    assert "on 4 item(s)" in f["message"] and "execution variance" in f["message"]
    documented(f)
    assert "A20" not in checks(result)  # 2 of 15 net: well within the paired spread


def test_a29_is_quiet_on_decoding_variance_and_identical_reruns(ledger_dir: Path,
                                                                tmp_path: Path) -> None:
    a = [1.0] * 12 + [0.0] * 3
    b = [0.0] * 3 + [1.0] * 12
    append(tmp_path, [_greedy(a, seed=1, temperature=0.7), _greedy(b, seed=2, temperature=0.7),
                      _greedy(a, seed=5), _greedy(a, seed=5)])
    assert "A29" not in checks(audit(code=0))  # different seeds sampling; identical reruns


def test_a20_judges_same_item_runs_by_their_paired_spread(ledger_dir: Path,
                                                          tmp_path: Path) -> None:
    """12% of the same 400 items flip one way between two greedy runs: 5 points, which two
    independent samples of 400 items would not tell apart (sd 3.2), but the paired spread
    does."""
    n = 400
    first = [1.0 if i < 280 else 0.0 for i in range(n)]
    second = [1.0 if i < 260 else 0.0 for i in range(n)]  # the same items, 20 of them lost
    runs = append(tmp_path, [_greedy(first, seed=3), _greedy(second, seed=4)])
    f = next(x for x in audit(code=0)["findings"] if x["check"] == "A20")
    assert f["entries"][:2] == [runs[1], runs[0]]
    assert "the spread of their per-item differences" in f["message"]
    x, y = 0.70, 0.65
    assert abs(disagreement(y, (y * (1 - y) / n) ** 0.5, x, (x * (1 - x) / n) ** 0.5)) < 3.5
