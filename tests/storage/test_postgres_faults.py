"""The team ledger under many writers, killed writers, database-side tampering, lock waits and
passwords (issue 18), against a real PostgreSQL server (tests/storage/pg_cluster.py)."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import signal
import subprocess
import sys
from typing import Any

import pg_cluster as cluster_fixtures
import pytest
from conftest import run_cli
from pg_cluster import PASSWORD, Cluster

# the session's PostgreSQL cluster and a database of each test's own (pg_cluster.py)
pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url


def _team(pg_url: str, notes: int = 2) -> None:
    """A ledger made on PostgreSQL with `clone` from a fresh SQLite one, and a few notes."""
    assert run_cli("init", ".", "--name", "team").code == 0
    assert run_cli("clone", ".", pg_url).code == 0
    for i in range(notes):
        assert run_cli("--ledger", pg_url, "note", f"note {i}").code == 0


def _db(pg_cluster: Cluster, pg_url: str) -> Any:
    return pg_cluster.admin(pg_url.rsplit("/", 1)[1])


def _appender(url: str, env: dict[str, str], barrier: Any, worker: int, n: int,
              out: Any) -> None:
    os.environ.clear()
    os.environ.update(env)
    from logbook.cli.main import run

    barrier.wait()
    codes = [run(["--ledger", url, "note", f"worker {worker} note {i}"]) for i in range(n)]
    out.put((worker, codes))


def test_four_writers_keep_one_chain(pg_cluster: Cluster, pg_url: str) -> None:
    _team(pg_url, notes=0)
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_appender, args=(pg_url, dict(os.environ), barrier, w, 25, out))
             for w in range(4)]
    for p in procs:
        p.start()
    results = [out.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(code == 0 for _, codes in results for code in codes)
    entries = run_cli("--ledger", pg_url, "log", "--json").json
    assert [e["seq"] for e in entries] == list(range(101))
    for prev, cur in itertools.pairwise(entries):
        assert cur["entry"]["prev"] == prev["digest"]
    assert len({e["entry"]["body"]["text"] for e in entries[1:]}) == 100
    assert run_cli("--ledger", pg_url, "verify", "--strict").code == 0


KILLED_BEFORE_COMMIT = """
import os, signal, sys
from logbook.storage.postgres.store import PostgresStore
from logbook.cli.main import run
PostgresStore.before_commit = lambda: os.kill(os.getpid(), signal.SIGKILL)
sys.exit(run(sys.argv[1:]))
"""


def test_a_writer_killed_before_commit_leaves_nothing(pg_url: str) -> None:
    _team(pg_url)
    for i in range(3):
        r = subprocess.run([sys.executable, "-c", KILLED_BEFORE_COMMIT, "--ledger", pg_url,
                            "note", f"doomed {i}"], capture_output=True, timeout=60)
        assert r.returncode == -signal.SIGKILL, r.stderr
        assert run_cli("--ledger", pg_url, "note", f"kept {i}").code == 0
    texts = [e["entry"]["body"].get("text")
             for e in run_cli("--ledger", pg_url, "log", "--json").json[1:]]
    assert texts == ["note 0", "note 1", "kept 0", "kept 1", "kept 2"]
    assert run_cli("--ledger", pg_url, "verify").code == 0


@pytest.mark.parametrize("statement", [
    "UPDATE entries SET signature = 'x' WHERE seq = 1",
    "DELETE FROM entries WHERE seq = 2",
    "TRUNCATE entries",
    "UPDATE entry_index SET kind = 'plan' WHERE seq = 1",
    "DELETE FROM tree",
    "UPDATE signing_keys SET public = 'x'",
    "DELETE FROM signing_keys",
])
def test_triggers_refuse_rewriting(pg_cluster: Cluster, pg_url: str, statement: str) -> None:
    import psycopg

    _team(pg_url)
    refused = r"append-only|only ever revoked"
    with _db(pg_cluster, pg_url) as conn, pytest.raises(psycopg.Error, match=refused):
        conn.execute(statement.encode())
    assert run_cli("--ledger", pg_url, "verify").code == 0


@pytest.mark.parametrize(("tamper", "finding"), [
    ("UPDATE entries SET entry = overlay(entry PLACING 'X'::bytea FROM 40) WHERE seq = 1",
     "entry 1"),
    ("DELETE FROM entries WHERE seq = 1", "entry 1"),
    ("UPDATE entries SET signature = (SELECT signature FROM entries WHERE seq = 1) "
     "WHERE seq = 2", "entry 2"),
    ("UPDATE entry_index SET kind = 'plan' WHERE seq = 2", "entry_index"),
    ("DELETE FROM tree", "tree"),
])
def test_a_superuser_who_disables_triggers_is_caught(pg_cluster: Cluster, pg_url: str,
                                                     tamper: str, finding: str) -> None:
    _team(pg_url, notes=3)
    with _db(pg_cluster, pg_url) as conn:
        for table in ("entries", "entry_index", "tree"):
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER".encode())
        conn.execute(tamper.encode())
    r = run_cli("--ledger", pg_url, "verify", "--json")
    assert r.code == 1, r.err
    found = " ".join(str(f) for f in r.json["findings"])
    assert finding in found


def test_lock_wait_is_bounded(pg_cluster: Cluster, pg_url: str,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    _team(pg_url)
    monkeypatch.setenv("LOGBOOK_LOCK_TIMEOUT", "0.5")
    with _db(pg_cluster, pg_url) as conn, conn.transaction():
        conn.execute("SELECT size FROM head WHERE id = 1 FOR UPDATE")
        r = run_cli("--ledger", pg_url, "note", "waits")
    assert r.code == 3
    assert "locked by another writer past the timeout (LOGBOOK_LOCK_TIMEOUT)" in r.err
    assert len(run_cli("--ledger", pg_url, "log", "--json").json) == 3


def test_no_password_reaches_any_output(pg_cluster: Cluster, pg_url: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "agent-" + PASSWORD[3:]
    db = pg_url.rsplit("/", 1)[1]
    with pg_cluster.admin() as conn:
        conn.execute(f"CREATE ROLE agent LOGIN PASSWORD '{secret}'".encode())
    with pg_cluster.admin(db) as conn:
        conn.execute(b"GRANT CREATE ON SCHEMA public TO agent")
    agent = pg_cluster.url(db, user="agent")
    monkeypatch.setenv("PGPASSWORD", secret)
    assert run_cli("init", ".", "--name", "team").code == 0
    outputs = [run_cli("--ledger", ".", "clone", ".", agent),
               run_cli("--ledger", agent, "note", "by the agent"),
               run_cli("--ledger", agent, "verify"), run_cli("--ledger", agent, "log")]
    assert [r.code for r in outputs] == [0, 0, 0, 0], [r.err for r in outputs]
    monkeypatch.setenv("PGPASSWORD", "wrong-" + secret)
    wrong = run_cli("--ledger", agent, "note", "refused")
    assert wrong.code == 3 and "cannot be reached" in wrong.err
    monkeypatch.delenv("PGPASSWORD")
    in_url = agent.replace("agent@", f"agent:{secret}@")
    down = run_cli("--ledger", in_url.replace(str(pg_cluster.port), "1"), "note", "nowhere")
    assert down.code == 3 and "cannot be reached" in down.err
    for r in [*outputs, wrong, down]:
        assert secret not in r.out + r.err


def test_the_documented_grants_let_an_agent_append_and_nothing_else(
        pg_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import re
    from pathlib import Path

    import psycopg

    _team(pg_url)
    text = (Path(__file__).resolve().parents[2] / "docs" / "team.md").read_text()
    grants = re.search(r"```sql\n(.*?)```", text, re.S)
    assert grants is not None
    secret = "agent-" + PASSWORD[3:]
    db = pg_url.rsplit("/", 1)[1]
    with _db(pg_cluster, pg_url) as conn:
        conn.execute(grants.group(1).replace("'...'", f"'{secret}'").encode())
    agent = pg_cluster.url(db, user="agent_7")
    monkeypatch.setenv("PGPASSWORD", secret)
    r = run_cli("--ledger", agent, "note", "by agent 7")
    assert r.code == 0, r.err
    assert run_cli("--ledger", agent, "checkpoint").code == 0
    # a run's logs are kept with the agent's grants (the blobs table), and verify reads them
    (Path.cwd() / "agent.log").write_text("agent 7 evaluating\n")
    writer = ("import json\nwith open('items.jsonl', 'w') as f:\n"
              "    f.write(json.dumps({'id': 1, 'score': 1}) + '\\n')\n")
    ran = run_cli("--ledger", agent, "run", "--outcomes", "items.jsonl", "--log", "agent.log",
                  "--", sys.executable, "-c", writer)
    assert ran.code == 0, ran.err
    assert "not be kept" not in ran.err + ran.out
    assert run_cli("--ledger", agent, "verify").code == 0
    with psycopg.connect(agent, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM blobs").fetchone() == (1,)  # no output
    for statement in ("DELETE FROM entries WHERE seq = 1", "DELETE FROM blobs"):
        with psycopg.connect(agent, autocommit=True) as conn, \
                pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(statement)
    # a co-agent may insert logs, but only bytes that hash to their name: a forged row under
    # the name of a log another run will keep is refused by the server itself
    import hashlib

    real = b"the run's own output\n"
    name = hashlib.sha256(real).hexdigest()
    with psycopg.connect(agent, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO blobs (digest, data) VALUES (%s, %s)",
                         (name, b"something else\n"))
        conn.execute("INSERT INTO blobs (digest, data) VALUES (%s, %s)", (name, real))
    assert secret not in r.out + r.err
