"""`logbook run` on a PostgreSQL team ledger (issue 18): the run is appended with each log's
reference (name, sha256, size, excerpt) and the log's bytes are kept in the database (the
``blobs`` table), insert-only like the entries; nothing is written into the working folder."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pg_cluster as cluster_fixtures
import psycopg
import pytest
from conftest import run_cli

# the session's PostgreSQL cluster and a database of each test's own (pg_cluster.py)
pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url

WRITER = ("import json\nprint('evaluating 4 items')\nwith open('items.jsonl', 'w') as f:\n"
          "    for i in range(4): f.write(json.dumps({'id': i, 'score': i % 2}) + '\\n')\n")


def _blobs(url: str) -> dict[str, bytes]:
    with psycopg.connect(url, password=cluster_fixtures.PASSWORD) as pg:
        return {d: bytes(b) for d, b in pg.execute("SELECT digest, data FROM blobs")}


def _run(url: str, log: Path) -> dict[str, object]:
    r = run_cli("--ledger", url, "run", "--outcomes", "items.jsonl", "--log", str(log),
                "--", sys.executable, "-c", WRITER)
    assert r.code == 0, r.err
    runs = [e["entry"]["body"] for e in run_cli("--ledger", url, "log", "--json").json
            if e["kind"] == "run"]
    return runs[-1]


def test_a_run_on_a_server_keeps_its_logs_in_the_database(pg_url: str) -> None:
    work = Path.cwd()
    assert run_cli("--ledger", pg_url, "init", "--name", "team").code == 0
    log = work / "load.log"
    log.write_text("loading weights\nready\n")
    before = sorted(p.name for p in work.iterdir())
    run = _run(pg_url, log)
    logs = {ref["name"]: ref for ref in run["logs"]}  # type: ignore[attr-defined]
    assert set(logs) == {"output", "load.log"}
    data = log.read_bytes()
    assert logs["load.log"]["sha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert logs["load.log"]["size"] == len(data)
    assert logs["load.log"]["excerpt"] == "loading weights\nready"
    assert "evaluating 4 items" in logs["output"]["excerpt"]
    assert run["status"] == "completed" and "reason" not in run  # every log was kept
    kept = _blobs(pg_url)
    assert kept[logs["load.log"]["sha256"][7:]] == data
    output = kept[logs["output"]["sha256"][7:]]
    assert b"evaluating 4 items" in output and len(output) == logs["output"]["size"]
    # no folder named after the URL (or any other) was left in the working folder
    assert sorted(p.name for p in work.iterdir()) == sorted([*before, "items.jsonl"])
    assert run_cli("--ledger", pg_url, "verify", "--strict").code == 0
    # the same log kept by a second run is one row, not two
    _run(pg_url, log)
    assert len(_blobs(pg_url)) == 2


def test_kept_logs_refuse_update_delete_and_truncate(pg_url: str) -> None:
    assert run_cli("--ledger", pg_url, "init", "--name", "team").code == 0
    log = Path.cwd() / "load.log"
    log.write_text("ready\n")
    _run(pg_url, log)
    for statement in ("UPDATE blobs SET data = 'x'", "DELETE FROM blobs", "TRUNCATE blobs"):
        with psycopg.connect(pg_url, password=cluster_fixtures.PASSWORD) as pg, \
                pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            pg.execute(statement)
    with psycopg.connect(pg_url, password=cluster_fixtures.PASSWORD) as pg, \
            pytest.raises(psycopg.errors.CheckViolation):
        pg.execute("INSERT INTO blobs (digest, data) VALUES ('not-a-sha256', 'x')")
    assert _blobs(pg_url)[hashlib.sha256(b"ready\n").hexdigest()] == b"ready\n"
    assert run_cli("--ledger", pg_url, "verify").code == 0
