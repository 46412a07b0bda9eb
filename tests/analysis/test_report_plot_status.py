"""The report's forest plot (the HTML report's, and the web plan page's) draws a run that did
not complete as what it is, never as a point among the scores, even when it scored part of
its items before it failed (issue 37 item 5: such a run was drawn as an ordinary dot at the
mean of its partial items, above every completed run of its arm)."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli


def test_a_failed_run_with_partial_items_is_no_point(ledger_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the HTML report needs the html extra")
    assert run_cli("plan", str(write_json(tmp_path / "p.json",
                                          plan_body("pp", runs_per_arm=2)))).code == 0
    drafts = [draft("run", run_body("pp", arm, seed=k, p=0.6))
              for k, arm in enumerate(["f16", "q8", "f16", "q8"])]
    failed = run_body("pp", "q8", seed=9, p=0.95, status="failed")
    ids = [f"item-{i:04d}" for i in range(50)]
    failed["outcomes"] = {"metric": "acc", "id": ids,  # 30 items scored, then it crashed
                          "score": [1.0] * 30 + [None] * 20,
                          "error": [None] * 30 + ["engine crashed"] * 20}
    drafts.append(draft("run", failed))
    for i, d in enumerate(drafts):
        r = run_cli("append", str(write_json(tmp_path / f"r{i}.json", d)))
        assert r.code == 0, r.err
    seq = 6  # genesis, plan, four runs, then the failed one
    rep = run_cli("report", "pp", "--json").json
    row = next(r for a in rep["arms"] for r in a["runs"] if r["seq"] == seq)
    assert row["status"] == "failed" and row["score"] == 1.0  # its partial items' mean
    assert run_cli("report", "pp", "--html", str(tmp_path / "r.html")).code == 0
    page = (tmp_path / "r.html").read_text()
    assert f'id="lb-nonscore-{seq}"' in page
    assert f'id="lb-run-{seq}"' not in page and f'id="lb-ci-{seq}"' not in page
    assert sum(f'id="lb-run-{s}"' in page for s in range(2, 6)) == 4
