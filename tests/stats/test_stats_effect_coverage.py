"""The paired effect's interval covers on ledgers unlike the project's simulator (issue 33):
logbook.stats.effect_coverage at its fixed seeds, the table benchmarks/coverage.py prints and
docs/statistics.md shows."""

from __future__ import annotations

import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from logbook.stats import effect_coverage as ec


@pytest.mark.slow
def test_the_effect_covers_with_runs_and_clusters() -> None:
    with ProcessPoolExecutor(max_workers=2) as pool:
        rows = list(ec.table(ec.REPS, cells_map=pool.map))
    assert [r.scenario for r in rows] == [s.name for s in ec.SCENARIOS]
    out = [(r.scenario, r.coverage, r.wrong, r.warned) for r in rows if not ec.bounds_hold(r)]
    assert not out, out
    by = {r.scenario: r for r in rows}
    # the interval over items alone is what run noise and unnamed clusters break
    assert by["run shift, heavy"].items_only < 0.85
    assert by["clusters unnamed"].items_only < 0.85 and by["clusters unnamed"].coverage < 0.9
    # docs/statistics.md shows this very table
    doc = (Path(__file__).resolve().parents[2] / "docs" / "statistics.md").read_text()
    for r in rows:
        line = re.search(rf"^\| {re.escape(r.scenario)} \|(.*)\|$", doc, flags=re.M)
        assert line, r.scenario
        cells = [c.strip() for c in line.group(1).split("|")]
        assert cells == [f"{r.truth * 100:+.2f}", f"{r.coverage:.3f}", f"{r.wrong:.3f}",
                         f"{r.items_only:.3f}", f"{r.items_only_wrong:.3f}",
                         f"{r.warned:.3f}"], (r.scenario, cells)
