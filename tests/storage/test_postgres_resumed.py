"""The analysis check resumed from this machine's checked copy on a PostgreSQL team ledger
(logbook.storage.postgres.rows, logbook.verify.resume): the reads after a check of the
entries appended since, and what they catch, as on a SQLite file."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pg_cluster as cluster_fixtures
import psycopg
import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import CliResult, run_cli

pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url
SLUG = "kv-q8-vs-f16"
BANNER = "this ledger does not verify"


def ok(r: CliResult) -> CliResult:
    assert r.code == 0, (r.code, r.err)
    return r


def reads(url: str) -> dict[str, Any]:
    out = {}
    for command in (("brief", "--json"), ("report", SLUG, "--json")):
        r = ok(run_cli("--ledger", url, *command))
        value = orjson.loads(r.out)
        if command[0] == "brief":
            out["verified"] = value["integrity"].pop("verified")
        out[command[0]] = value
    return out


@pytest.fixture
def team(pg_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    ok(run_cli("--ledger", pg_url, "init", "--name", "team"))
    ok(run_cli("--ledger", pg_url, "plan", str(write_json(
        tmp_path / "plan.json", plan_body(SLUG, runs_per_arm=3, n_items=20)))))
    runs = [draft("run", run_body(SLUG, ("f16", "q8")[i % 2], n_items=20, seed=i))
            for i in range(4)]
    ok(run_cli("--ledger", pg_url, "append", str(write_jsonl(tmp_path / "runs.jsonl", runs)),
               "--jsonl"))
    return pg_url


def test_reads_resume_on_a_server_and_equal_full_ones(team: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    first = reads(team)
    assert first["verified"]["resumed_from"] == 0  # the first check on this machine: in full
    more = [draft("run", run_body(SLUG, ("f16", "q8")[i % 2], n_items=20, seed=10 + i))
            for i in range(2)]
    ok(run_cli("--ledger", team, "append", str(write_jsonl(tmp_path / "more.jsonl", more)),
               "--jsonl"))
    ok(run_cli("--ledger", team, "note", "two more runs"))
    resumed = reads(team)
    assert resumed["verified"]["resumed_from"] == 6
    assert resumed["verified"]["signatures_checked"] == 3  # the entries appended since
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    full = reads(team)
    assert full["verified"]["resumed_from"] == 0
    assert resumed["brief"] == full["brief"] and resumed["report"] == full["report"]


def _attack(url: str, statement: str, *args: Any) -> None:
    with psycopg.connect(url, password=cluster_fixtures.PASSWORD, autocommit=True) as pg:
        pg.execute("SET session_replication_role = replica")  # no trigger fires
        assert pg.execute(statement.encode(), args).rowcount == 1


@pytest.mark.parametrize("where", ["entry bytes", "derived index", "tree node"])
def test_an_attack_on_the_entries_since_is_caught_on_a_server(team: str, where: str) -> None:
    reads(team)  # this machine's checked copy, at 6 entries
    ok(run_cli("--ledger", team, "note", "after the check"))
    ok(run_cli("--ledger", team, "note", "and one more"))
    if where == "entry bytes":
        with psycopg.connect(team, password=cluster_fixtures.PASSWORD) as pg:
            row = pg.execute("SELECT entry FROM entries WHERE seq = 6").fetchone()
        assert row is not None
        raw = bytes(row[0]).replace(b"after the check", b"after the chess")
        _attack(team, "UPDATE entries SET entry = %s, digest = %s WHERE seq = 6", raw,
                hashlib.sha256(raw).hexdigest())
    elif where == "derived index":
        _attack(team, "UPDATE entry_index SET kind = 'claim' WHERE seq = 7")
    else:
        _attack(team, "UPDATE tree SET hash = %s WHERE level = 1 AND idx = 3", bytes(32))
    r = run_cli("--ledger", team, "brief")
    assert r.code == 1 and not r.out, (r.code, r.out)
    assert r.err.startswith(f"logbook: {BANNER}: ")
    assert run_cli("--ledger", team, "verify").code == 1
