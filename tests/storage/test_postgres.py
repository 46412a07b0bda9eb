"""The team ledger on PostgreSQL (issue 18): the same entries and answers as a SQLite file,
copied both ways with `logbook clone`, against a real server (tests/storage/pg_cluster.py)."""

from __future__ import annotations

from pathlib import Path

import pg_cluster as cluster_fixtures
import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli

# the session's PostgreSQL cluster and a database of each test's own (pg_cluster.py)
pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url


def _team_work(work: Path) -> None:
    """A plan, runs of both arms, a note and a checkpoint, as a user records them."""
    assert run_cli("init", str(work), "--name", "team").code == 0
    plan = write_json(work / "plan.json", draft("plan", plan_body(runs_per_arm=2)))
    assert run_cli("append", str(plan)).code == 0
    for i, arm in enumerate(["f16", "q8", "f16", "q8"]):
        run = write_json(work / f"run{i}.json", draft("run", run_body("kv-q8-vs-f16", arm,
                                                                      seed=i)))
        assert run_cli("append", str(run)).code == 0, i
    assert run_cli("note", "the kv cache is fine").code == 0
    assert run_cli("checkpoint").code == 0


READS = [("log", "--json"), ("show", "@2", "--json"), ("report", "kv-q8-vs-f16", "--json"),
         ("audit", "--json"), ("verify", "--json"), ("verify", "--strict"),
         ("prove", "@3", "--json"), ("log",), ("export",),
         ("compare", "kv-q8-vs-f16:f16", "kv-q8-vs-f16:q8", "--json"),
         ("keys", "list", "--json"), ("report", "kv-q8-vs-f16")]


def test_clone_to_postgres_answers_every_read_alike(pg_url: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # each ledger checked in full: when this machine checked a ledger before, which brief
    # says, is this machine's, not the ledger's (tests/storage/test_postgres_resumed.py
    # reads a server's ledger through the checked copy)
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    work = tmp_path / "work"
    _team_work(work)
    r = run_cli("clone", str(work), pg_url)
    assert r.code == 0, r.err
    assert "copied 7 entries (0 were there already)" in r.out
    # brief first: `audit` keeps a record of when it ran in each store, which brief shows
    # (the records SRC kept are cloned: tests/ledger/test_clone.py)
    for args in [("brief", "--json"), *READS]:
        here, there = run_cli(*args), run_cli("--ledger", pg_url, *args)
        assert (here.code, here.out) == (there.code, there.out), args
        assert here.code == 0, (args, here.err)


def test_appends_on_postgres_clone_back_as_a_prefix(pg_url: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _team_work(work)
    assert run_cli("clone", str(work), pg_url).code == 0
    for i in range(3):
        r = run_cli("--ledger", pg_url, "note", f"team note {i}")
        assert r.code == 0, r.err
    r = run_cli("clone", pg_url, str(work), "--json")
    assert r.code == 0, r.err
    assert (r.json["copied"], r.json["entries"]) == (3, 10)
    assert run_cli("verify").code == 0
    assert run_cli("log", "--json").out == run_cli("--ledger", pg_url, "log", "--json").out
    again = run_cli("clone", pg_url, str(work), "--json")
    assert again.code == 0 and again.json["copied"] == 0


def test_clone_refuses_a_different_chain(pg_url: str, tmp_path: Path) -> None:
    _team_work(tmp_path / "work")
    other = tmp_path / "other"
    other.mkdir()
    assert run_cli("init", str(other), "--name", "another team").code == 0
    assert run_cli("clone", str(other), pg_url).code == 0
    r = run_cli("clone", str(tmp_path / "work"), pg_url)
    assert r.code == 2
    assert "holds a different chain (entry 0 differs" in r.err
    assert run_cli("--ledger", pg_url, "log", "--json").out == \
        run_cli("--ledger", str(other), "log", "--json").out


def test_init_on_a_url_and_append(pg_url: str, tmp_path: Path) -> None:
    from logbook.crypto.signing import load_or_create_key
    from logbook.ledger.service import Ledger

    key, _ = load_or_create_key()
    with Ledger.init(pg_url, "team", key) as ledger:
        assert ledger.location == pg_url
        assert ledger.size() == 1
    r = run_cli("--ledger", pg_url, "note", "first")
    assert r.code == 0, r.err
    assert r.out.startswith("1 ")
    note = write_json(tmp_path / "note.json", draft("note", {"text": "once"}))
    again = run_cli("--ledger", pg_url, "append", str(note), "--once", "k1")
    assert again.code == 0, again.err
    twice = run_cli("--ledger", pg_url, "append", str(note), "--once", "k1")
    assert twice.out == again.out  # the same entry, not a second one
    assert run_cli("--ledger", pg_url, "verify").code == 0
    assert len(run_cli("--ledger", pg_url, "log", "--json").json) == 3
    with pytest.raises(Exception, match="already exists"):
        Ledger.init(pg_url, "team", key)
