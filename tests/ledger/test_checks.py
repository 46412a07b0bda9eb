"""Checks (issue 36, items 2 and 4): contamination checks and hand spot-checks as `check`
entries, through the public commands; the report's lines; the spot-check draw against format.md
§5's words, implemented here apart; every refusal leaving the ledger as it was."""

from __future__ import annotations

import hashlib
import os
import pty
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli
from statsmodels.stats.proportion import proportion_confint


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def spec_draw(run: str, ids: list[str], n: int, seed: int) -> list[str]:
    """format.md §5, "Checks", read and written out on its own."""
    pool = list(dict.fromkeys(ids))
    for k in range(min(n, len(pool))):
        digest = hashlib.sha256(b"logbook.spot-check.v1\n" + run.encode() + b"\n"
                                + str(seed).encode() + b"\n" + str(k).encode()).digest()
        j = k + int.from_bytes(digest[:8], "big") % (len(pool) - k)
        pool[k], pool[j] = pool[j], pool[k]
    return pool[:min(n, len(pool))]


@pytest.fixture
def planned(ledger_dir: Path) -> dict[str, Any]:
    ok("plan", str(write_json(Path("plan.json"), plan_body("pp", runs_per_arm=1))))
    seqs = {}
    for arm in ("f16", "q8"):
        body = run_body("pp", arm, seed=len(arm))
        out = ok("append", str(write_json(Path(f"{arm}.json"), draft("run", body))), "--json")
        seqs[arm] = orjson.loads(out)["seq"]
    digest = run_cli("show", f"@{seqs['q8']}", "--json").json["digest"]
    return {"seqs": seqs, "q8": digest, "ids": run_body("pp", "q8")["outcomes"]["id"]}


def _verdicts(items: list[str], wrong: int) -> Path:
    rows = [{"id": i, "verdict": "disagree" if k < wrong else "agree"}
            for k, i in enumerate(items)]
    rows[-1] = {**rows[-1], "verdict": "unsure", "note": "cannot tell"}
    return write_json(Path("verdicts.json"), rows)


def test_the_draw_is_the_one_format_md_specifies(planned: dict[str, Any]) -> None:
    got = run_cli("spot-check", f"@{planned['seqs']['q8']}", "--n", "12", "--seed", "7",
                  "--dry-run", "--json").json
    assert [i["id"] for i in got["items"]] == spec_draw(planned["q8"], planned["ids"], 12, 7)
    other = run_cli("spot-check", f"@{planned['seqs']['q8']}", "--n", "12", "--seed", "8",
                    "--dry-run", "--json").json
    assert [i["id"] for i in other["items"]] != [i["id"] for i in got["items"]]
    every = run_cli("spot-check", f"@{planned['seqs']['q8']}", "--n", "500", "--dry-run",
                    "--json").json
    assert sorted(i["id"] for i in every["items"]) == sorted(planned["ids"])


def test_a_spot_check_gives_the_report_its_agreement_line(planned: dict[str, Any]) -> None:
    q8 = f"@{planned['seqs']['q8']}"
    drawn = spec_draw(planned["q8"], planned["ids"], 20, 3)
    assert "scorer not spot-checked by hand" in ok("report", "pp")
    ok("spot-check", q8, "--n", "20", "--seed", "3", "--verdicts", str(_verdicts(drawn, 2)),
       "--reviewer", "ada")
    low, high = proportion_confint(17, 19, alpha=0.05, method="wilson")
    line = (f"scorer agrees with hand checks on 17 of 19, {100 * low:.0f}–{100 * high:.0f}% "
            "(Wilson 95%); 1 unsure")
    assert line in ok("report", "pp")
    spot = run_cli("report", "pp", "--json").json["checks"]["spot_checks"]
    assert (spot["agree"], spot["disagree"], spot["unsure"]) == (17, 2, 1)
    assert spot["interval"] == pytest.approx([low, high], abs=1e-12)
    ok("verify")


def test_a_contamination_check_is_reported_and_its_evidence_kept(
        planned: dict[str, Any], ledger_dir: Path) -> None:
    assert "contamination: m-7b: not checked" in ok("report", "pp")
    Path("probe.txt").write_text("13-gram overlap: 1 of 50 items\n")
    ok("check", "contamination", "--model", "m-7b", "--suite", "suite", "--split", "test",
       "--method", "ngram-overlap", "--result", "clean", "--rate", "0.02",
       "--evidence", "probe.txt", "--description", "13-grams against the pretraining index")
    ok("check", "contamination", "--model", "other-model", "--suite", "suite",
       "--method", "completion-probe", "--result", "contaminated")
    report = ok("report", "pp")
    assert "contamination: m-7b: checked (ngram-overlap: clean, rate 2%, split test, @" in report
    assert "other-model" not in report  # no run of the plan ran it
    ok("verify")
    (blob,) = [p for p in (ledger_dir / ".logbook" / "blobs").rglob("*") if p.is_file()]
    blob.write_bytes(b"13-gram overlap: 0 of 50 items\n")
    r = run_cli("verify")
    assert r.code == 1 and "check" in r.out + r.err and "altered" in r.out + r.err


@pytest.mark.parametrize(("args", "said"), [
    (["--result", "maybe"], "--result 'maybe'"),
    (["--result", "clean", "--rate", "1.5"], "--rate 1.5"),
    (["--result", "clean", "--evidence", "nowhere.txt"], "nowhere.txt"),
])
def test_bad_contamination_options_change_nothing(planned: dict[str, Any], args: list[str],
                                                  said: str) -> None:
    head = ok("log")
    r = run_cli("check", "contamination", "--model", "m-7b", "--suite", "suite", "--method",
                "ngram-overlap", *args)
    assert r.code == 2 and said in r.err, r.err
    assert ok("log") == head


def test_a_spot_check_judges_the_items_drawn_and_no_other(planned: dict[str, Any]) -> None:
    q8 = f"@{planned['seqs']['q8']}"
    drawn = spec_draw(planned["q8"], planned["ids"], 5, 1)
    head = ok("log")
    chosen = [i for i in planned["ids"] if i not in drawn][:5]
    r = run_cli("spot-check", q8, "--n", "5", "--seed", "1", "--verdicts",
                str(_verdicts(chosen, 0)))
    assert r.code == 2 and "not one the draw" in r.err and "items drawn, not items chosen" \
        in r.err, r.err
    r = run_cli("spot-check", q8, "--n", "5", "--seed", "1", "--verdicts",
                str(_verdicts(drawn[:4], 0)))
    assert r.code == 2 and f"item {drawn[4]!r} was drawn" in r.err, r.err
    r = run_cli("spot-check", q8, "--n", "5", "--seed", "1")  # no terminal here
    assert r.code == 2 and "--verdicts FILE" in r.err
    r = run_cli("spot-check", "@1", "--n", "5", "--verdicts", str(_verdicts(drawn, 0)))
    assert r.code == 2 and "not a run" in r.err
    bad = write_json(Path("bad.json"), [{"id": drawn[0], "verdict": "maybe"}])
    r = run_cli("spot-check", q8, "--n", "5", "--seed", "1", "--verdicts", str(bad))
    assert r.code == 2 and "verdicts[0]" in r.err
    assert ok("log") == head
    ok("retract", q8, "--reason", "wrong build", "--category", "harness_defect")
    r = run_cli("spot-check", q8, "--n", "5", "--seed", "1", "--verdicts",
                str(_verdicts(drawn, 0)))
    assert r.code == 2 and "retracted" in r.err


def test_on_a_terminal_each_trace_is_shown_and_the_verdict_asked(ledger_dir: Path) -> None:
    traces = [{"id": i, "prompt": f"Question {i}?", "output": f"answer {i}", "target": "x"}
              for i in ("a", "b", "c")]
    body = {"plan": None, "status": "completed", "apparatus": {"model": "m", "suite": "s"},
            "outcomes": {"metric": "acc", "id": ["a", "b", "c"], "score": [1.0, 0.0, 1.0]},
            "traces": traces}
    ok("append", str(write_json(Path("run.json"), draft("run", body))))
    main, sub = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-m", "logbook", "spot-check", "@1", "--n", "2"],
                            stdin=sub, stdout=sub, stderr=sub, env=env, close_fds=True)
    os.close(sub)
    seen = b""
    answers = [b"d\n", b"says 'answer' twice\n", b"a\n", b"\n"]
    try:
        while proc.poll() is None or select.select([main], [], [], 0)[0]:
            ready, _, _ = select.select([main], [], [], 30)
            if not ready:
                break
            try:
                chunk = os.read(main, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            while answers and seen.count(b"? [a]gree") + seen.count(b"note (Enter") \
                    > 4 - len(answers):
                os.write(main, answers.pop(0))
    finally:
        os.close(main)
        proc.wait(timeout=30)
    assert proc.returncode == 0, seen.decode(errors="replace")
    text = seen.decode(errors="replace")
    assert "prompt: Question" in text and "output: answer" in text
    body = run_cli("show", "@2", "--json").json["entry"]["body"]
    assert [v["verdict"] for v in body["verdicts"]] == ["disagree", "agree"]
    assert body["verdicts"][0]["note"] == "says 'answer' twice"
    assert [v["id"] for v in body["verdicts"]] == spec_draw(
        run_cli("show", "@1", "--json").json["digest"], ["a", "b", "c"], 2, 0)
