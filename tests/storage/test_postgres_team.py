"""A team on one PostgreSQL ledger (issue 18): every agent its own key, a server restart in
the middle of an append, and many writers at once (tests/storage/pg_cluster.py)."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pg_cluster as cluster_fixtures
import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli
from pg_cluster import Cluster

# the session's PostgreSQL cluster and a database of each test's own (pg_cluster.py)
pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url


def _team(pg_url: str) -> None:
    assert run_cli("init", ".", "--name", "team").code == 0
    assert run_cli("clone", ".", pg_url).code == 0


def test_every_agent_signs_with_its_own_key(pg_url: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _team(pg_url)
    agent_key, agent_pub = tmp_path / "agent.key", tmp_path / "agent.pub"
    fingerprint = run_cli("keys", "new", "--out", str(agent_key)).out.strip()
    monkeypatch.setenv("LOGBOOK_KEY", str(agent_key))
    assert run_cli("keys", "export", "--out", str(agent_pub)).code == 0
    refused = run_cli("--ledger", pg_url, "note", "not yet")
    assert refused.code == 3 and "not a valid key" in refused.err
    monkeypatch.delenv("LOGBOOK_KEY")
    added = run_cli("--ledger", pg_url, "keys", "add", str(agent_pub), "--name", "agent 1",
                    "--reason", "joins the sweep")
    assert added.code == 0, added.err
    monkeypatch.setenv("LOGBOOK_KEY", str(agent_key))
    signed = run_cli("--ledger", pg_url, "note", "from agent 1", "--json")
    assert signed.code == 0 and signed.json["entry"]["signer"] == fingerprint
    monkeypatch.delenv("LOGBOOK_KEY")
    assert run_cli("--ledger", pg_url, "keys", "revoke", fingerprint, "--reason",
                   "left the team").code == 0
    monkeypatch.setenv("LOGBOOK_KEY", str(agent_key))
    after = run_cli("--ledger", pg_url, "note", "after revocation")
    assert after.code == 3 and after.err.count("\n") == 1
    monkeypatch.delenv("LOGBOOK_KEY")
    assert run_cli("--ledger", pg_url, "verify", "--strict").code == 0
    assert len(run_cli("--ledger", pg_url, "log", "--json").json) == 4


# the CLI with the store's test seam: the server restarts after the inserts, before COMMIT
RESTARTED_BEFORE_COMMIT = """
import subprocess, sys
from logbook.storage.postgres.store import PostgresStore
from logbook.cli.main import run
restart = sys.argv[1:4]
PostgresStore.before_commit = lambda: subprocess.run(restart, check=True, capture_output=True)
sys.exit(run(sys.argv[4:]))
"""


def test_a_server_restart_mid_append_is_exit_3_and_once_retries_cleanly(
        pg_cluster: Cluster, pg_url: str, tmp_path: Path) -> None:
    _team(pg_url)
    note = write_json(tmp_path / "note.json", draft("note", {"text": "through a restart"}))
    restart = ["sh", "-c", " ".join(cluster_fixtures._as_postgres(
        str(cluster_fixtures.BIN / "pg_ctl"), "-D", str(pg_cluster.folder / "data"), "-w",
        "-l", str(pg_cluster.folder / "log"), "-m", "fast", "restart"))]
    r = subprocess.run([sys.executable, "-c", RESTARTED_BEFORE_COMMIT, *restart, "--ledger",
                        pg_url, "append", str(note), "--once", "restart-1"],
                       capture_output=True, timeout=120)
    err = r.stderr.decode()
    assert r.returncode == 3, err
    assert err.startswith("logbook: the connection to ledger") and err.count("\n") == 1
    assert "--once" in err
    retried = run_cli("--ledger", pg_url, "append", str(note), "--once", "restart-1")
    assert retried.code == 0, retried.err
    again = run_cli("--ledger", pg_url, "append", str(note), "--once", "restart-1")
    assert again.out == retried.out
    texts = [e["entry"]["body"].get("text")
             for e in run_cli("--ledger", pg_url, "log", "--json").json]
    assert texts.count("through a restart") == 1
    assert run_cli("--ledger", pg_url, "verify").code == 0


def _writer(url: str, env: dict[str, str], barrier: Any, worker: int, n: int,
            folder: str, out: Any) -> None:
    """One agent with its own key: notes, a plan of its own and runs of it, mixed."""
    os.environ.clear()
    os.environ.update(env)
    os.environ["LOGBOOK_KEY"] = f"{folder}/w{worker}.key"
    from logbook.cli.main import run

    barrier.wait()
    codes = []
    slug = f"plan-{worker}"
    for i in range(n):
        if i == 0:
            path = Path(folder) / f"plan{worker}.json"
            path.write_bytes(orjson.dumps(draft("plan", plan_body(slug=slug))))
            codes.append(run(["--ledger", url, "append", str(path)]))
        elif i % 3 == 0:
            path = Path(folder) / f"run{worker}-{i}.json"
            arm = "f16" if i % 2 else "q8"
            path.write_bytes(orjson.dumps(draft("run", run_body(slug, arm, seed=i))))
            codes.append(run(["--ledger", url, "append", str(path)]))
        else:
            codes.append(run(["--ledger", url, "note", f"worker {worker} note {i}"]))
    out.put((worker, codes))


@pytest.mark.slow
def test_eight_agents_append_two_hundred_each(pg_url: str, tmp_path: Path) -> None:
    """The issue's Show: 8 processes, each with its own key, 200 mixed entries each."""
    _team(pg_url)
    for w in range(8):
        key = tmp_path / f"w{w}.key"
        assert run_cli("keys", "new", "--out", str(key)).code == 0
        os.environ["LOGBOOK_KEY"] = str(key)
        try:
            assert run_cli("keys", "export", "--out", str(tmp_path / f"w{w}.pub")).code == 0
        finally:
            del os.environ["LOGBOOK_KEY"]
        assert run_cli("--ledger", pg_url, "keys", "add", str(tmp_path / f"w{w}.pub"),
                       "--name", f"agent {w}", "--reason", "load").code == 0
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(pg_url, dict(os.environ), barrier, w, 200,
                                               str(tmp_path), out)) for w in range(8)]
    for p in procs:
        p.start()
    results = [out.get(timeout=1200) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    codes = [c for _, cs in results for c in cs]
    assert 70 not in codes and set(codes) <= {0, 3}
    entries = run_cli("--ledger", pg_url, "log", "--json").json
    assert len(entries) == 9 + codes.count(0)
    for prev, cur in itertools.pairwise(entries):
        assert cur["entry"]["prev"] == prev["digest"]
    assert run_cli("--ledger", pg_url, "verify", "--strict").code == 0


# one agent appending notes in a loop, each digest printed (and flushed) once acknowledged
LOOPING_WRITER = """
import sys
from logbook.cli.main import run
url, worker, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    code = run(["--ledger", url, "note", f"worker {worker} note {i}"])
    sys.stdout.flush()
    print(f"exit {code}", flush=True)
"""


@pytest.mark.slow
def test_kills_and_a_restart_under_load_lose_no_acknowledged_append(
        pg_cluster: Cluster, pg_url: str, tmp_path: Path) -> None:
    """The issue's Show: writers SIGKILLed at random and one `pg_ctl restart` during the load;
    every append that printed its digest is present, nothing partial, the ledger verifies."""
    import random
    import re
    import signal
    import time

    _team(pg_url)
    rng = random.Random(18)
    outs = [tmp_path / f"w{w}.out" for w in range(4)]
    procs = []
    for w, out in enumerate(outs):
        with out.open("wb") as fh, (tmp_path / f"w{w}.err").open("wb") as err:
            procs.append(subprocess.Popen([sys.executable, "-c", LOOPING_WRITER, pg_url,
                                           str(w), "60"], stdout=fh, stderr=err))
    time.sleep(1.5)
    for victim in rng.sample(procs, 2):
        time.sleep(rng.uniform(0.1, 0.8))
        victim.send_signal(signal.SIGKILL)
    restarted = pg_cluster.pg_ctl("-l", str(pg_cluster.folder / "log"), "-m", "fast", "restart")
    assert restarted.returncode == 0, restarted.stderr
    for p in procs:
        p.wait(timeout=600)
    printed, codes = [], []
    for out in outs:
        for line in out.read_text().splitlines():
            if m := re.fullmatch(r"\d+ ([0-9a-f]{64}) note", line):
                printed.append(m.group(1))
            elif line.startswith("exit "):
                codes.append(int(line.split()[1]))
    assert codes and set(codes) <= {0, 3}, codes
    assert codes.count(0) <= len(printed)
    kept = {e["digest"] for e in run_cli("--ledger", pg_url, "log", "--json").json}
    assert set(printed) <= kept
    assert run_cli("--ledger", pg_url, "verify", "--strict").code == 0


# the CLI with the store's test seam: the writer stops itself (SIGSTOP) holding the head's
# lock, its transaction open and idle, as a client frozen or killed mid-append leaves it
STOPPED_BEFORE_COMMIT = """
import os, signal, sys
from logbook.storage.postgres.store import PostgresStore
from logbook.cli.main import run
PostgresStore.before_commit = lambda: os.kill(os.getpid(), signal.SIGSTOP)
sys.exit(run(sys.argv[1:]))
"""


def test_a_writer_frozen_mid_append_holds_the_others_no_longer_than_its_lock_timeout(
        pg_url: str, tmp_path: Path) -> None:
    import signal
    import time

    _team(pg_url)
    frozen = subprocess.Popen([sys.executable, "-c", STOPPED_BEFORE_COMMIT, "--ledger", pg_url,
                               "note", "frozen mid-append"],
                              env={**os.environ, "LOGBOOK_LOCK_TIMEOUT": "2"},
                              stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while Path(f"/proc/{frozen.pid}/stat").read_text().split()[2] != "T":
            assert time.monotonic() < deadline and frozen.poll() is None, "never stopped"
            time.sleep(0.05)
        started = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "logbook", "--ledger", pg_url, "note",
                            "after the frozen one"], env={**os.environ,
                                                          "LOGBOOK_LOCK_TIMEOUT": "30"},
                           capture_output=True, text=True, timeout=120)
        waited = time.monotonic() - started
        assert r.returncode == 0, r.stderr
        assert waited < 2 + 10, waited  # the frozen one's lock timeout, and start-up
    finally:
        frozen.send_signal(signal.SIGCONT)
        frozen.wait(timeout=60)
    assert frozen.returncode == 3  # its transaction was ended by the server: not appended
    texts = [e["entry"]["body"].get("text")
             for e in run_cli("--ledger", pg_url, "log", "--json").json]
    assert "after the frozen one" in texts and "frozen mid-append" not in texts
    assert run_cli("--ledger", pg_url, "verify").code == 0
