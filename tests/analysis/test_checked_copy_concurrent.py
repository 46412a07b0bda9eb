"""This machine's checked copy of a ledger (docs/auditing.md §7) under concurrency: processes
appending while several `brief` processes check the ledger and carry the copy on at once.
Every brief verifies (none sees a finding that is not there, none crashes on the copy another
one is writing), and the copy ends covering a size some check really checked. Two hundred
briefs against three writers (issue 34, item 10: the false alarm seen under load, held to its
cause by test_checked_copy_race.py, and here by numbers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from builders import APPENDER
from conftest import run_cli

READERS, ROUNDS, COUNT = 4, 50, 120  # 200 briefs; three writers of COUNT appends each

READER = """
import subprocess, sys, json
codes = []
for _ in range({rounds}):
    r = subprocess.run([sys.executable, "-m", "logbook", "brief", "--json"],
                       capture_output=True, text=True)
    codes.append([r.returncode, r.stderr[-300:],
                  json.loads(r.stdout)["integrity"]["verified"]["resumed_from"]
                  if r.returncode == 0 else None])
print(json.dumps(codes))
"""


@pytest.mark.slow
def test_briefs_carry_the_copy_on_while_others_append(ledger_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    tests = str(Path(__file__).parents[1])
    env = {**os.environ, "LOGBOOK_LOCK_TIMEOUT": "120"}
    writers = [subprocess.Popen([sys.executable, "-c", APPENDER.format(
        tests=tests, work=str(ledger_dir), count=COUNT, w=w)], env=env,
        stderr=subprocess.PIPE) for w in range(3)]
    readers = [subprocess.Popen([sys.executable, "-c", READER.format(rounds=ROUNDS)], env=env,
                                cwd=ledger_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for _ in range(READERS)]
    outs = [r.communicate(timeout=600) for r in readers]
    for p in writers:
        p.wait(timeout=600)
    assert all(p.returncode == 0 for p in writers), [p.stderr.read() for p in writers
                                                     if p.stderr]
    results = [row for out, _err in outs for row in orjson.loads(out)]
    assert len(results) == READERS * ROUNDS == 200
    bad = [row for row in results if row[0] != 0]
    assert not bad, f"{len(bad)} of {len(results)} briefs failed: {bad[:2]}"
    assert any(row[2] for row in results)  # some briefs really carried a check on
    size = 1 + 3 * COUNT
    brief = run_cli("brief", "--json").json
    assert brief["ledger"]["size"] == size
    assert brief["integrity"]["verified"]["entries"] == size
    assert run_cli("verify").code == 0
    # and what the copy says is what a check from scratch says
    again = run_cli("brief", "--json").json
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    full = run_cli("brief", "--json").json
    for b in (again, full):
        b["integrity"].pop("verified")
    assert again == full
