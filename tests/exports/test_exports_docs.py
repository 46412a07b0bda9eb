"""docs/exports.md: its shell example runs verbatim on the demo's ledger, its Python example
runs, and its column table names exactly the columns the CSV has."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import DOCS, run_blocks, sh_blocks

from logbook.exports.long_rows import NAMES


def test_the_example_runs(tmp_path: Path) -> None:
    run_blocks(sh_blocks("exports.md"), tmp_path)
    study = tmp_path / "study"
    with open(study / "q8.csv", newline="") as fh:
        assert {row["arm"] for row in csv.DictReader(fh)} == {"q8"}
    assert len((study / "claims.intoto.jsonl").read_bytes().splitlines()) == 2
    assert sorted(p.name for p in (study / "model-repo" / ".eval_results").iterdir()) == [
        "kv-q8-vs-f16.f16.yaml", "kv-q8-vs-f16.q8.yaml"]
    pytest.importorskip("pandas")
    (code,) = re.findall(r"```python\n(.*?)```", (DOCS / "exports.md").read_text(), re.S)
    code += "assert len(items) == 1200 and len(runs) == 7 and items.score.isna().any()\n"
    env = {k: v for k, v in os.environ.items() if k != "LOGBOOK_DIR"}
    r = subprocess.run([sys.executable, "-c", code], cwd=study, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_the_column_table_is_the_csvs() -> None:
    text = (DOCS / "exports.md").read_text()
    table = text.split("## CSV and Parquet")[1].split("`outcomes.extra`")[0]
    named = [name for row in re.findall(r"^\| (.+?) \| ", table, re.M)
             for name in re.findall(r"`(\w+)`", row)]
    assert sorted(named) == sorted(NAMES)
