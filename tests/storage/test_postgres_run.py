"""`logbook run` on a PostgreSQL team ledger (issue 18): the run is appended with each log's
reference (name, sha256, size, excerpt) and says that the file itself was not kept, since a
server ledger has no folder beside it; nothing is written into the working folder."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pg_cluster as cluster_fixtures
from conftest import run_cli

# the session's PostgreSQL cluster and a database of each test's own (pg_cluster.py)
pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url

WRITER = ("import json\nprint('evaluating 4 items')\nwith open('items.jsonl', 'w') as f:\n"
          "    for i in range(4): f.write(json.dumps({'id': i, 'score': i % 2}) + '\\n')\n")


def test_a_run_on_a_server_keeps_its_log_references(pg_url: str, tmp_path: Path) -> None:
    work = Path.cwd()
    assert run_cli("--ledger", pg_url, "init", "--name", "team").code == 0
    log = work / "load.log"
    log.write_text("loading weights\nready\n")
    before = sorted(p.name for p in work.iterdir())
    r = run_cli("--ledger", pg_url, "run", "--outcomes", "items.jsonl", "--log", str(log),
                "--", sys.executable, "-c", WRITER)
    assert r.code == 0, r.err
    (run,) = [e["entry"]["body"] for e in run_cli("--ledger", pg_url, "log", "--json").json
              if e["kind"] == "run"]
    logs = {ref["name"]: ref for ref in run["logs"]}
    assert set(logs) == {"output", "load.log"}
    data = log.read_bytes()
    assert logs["load.log"]["sha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert logs["load.log"]["size"] == len(data)
    assert logs["load.log"]["excerpt"] == "loading weights\nready"
    assert "evaluating 4 items" in logs["output"]["excerpt"]
    assert run["status"] == "completed"
    assert "'load.log'" in run["reason"] and "was not kept" in run["reason"]
    # no folder named after the URL (or any other) was left in the working folder
    assert sorted(p.name for p in work.iterdir()) == sorted([*before, "items.jsonl"])
    assert run_cli("--ledger", pg_url, "verify", "--strict").code == 0
