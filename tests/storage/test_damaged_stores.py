"""Damaged stores are findings (issue 34, item 6): a table of either store dropped, or a
column's type changed, makes `verify` exit 1 with findings (or one sentence), never 70 and
never 0."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pg_cluster as cluster_fixtures
import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import CliResult, run_cli

pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url


def _fill() -> None:
    assert run_cli("plan", "p.json").code == 0
    r = run_cli("append", "--jsonl", "r.jsonl")
    assert r.code == 0, r.err
    assert run_cli("checkpoint").code == 0
    assert run_cli("audit").code in (0, 1)


def _prepare(work: Path) -> None:
    write_json(work / "p.json", plan_body(runs_per_arm=2))
    write_jsonl(work / "r.jsonl", [draft("run", run_body("kv-q8-vs-f16", a, seed=s))
                                   for s, a in enumerate(("f16", "q8", "f16"))])


def _found(r: CliResult, words: str) -> None:
    """Exit 1 with a schema finding naming the damage (or, where even opening the store
    cannot go on, one sentence naming it, exit 1 or 3): never 70, never 0."""
    assert r.code in (1, 3), (r.code, r.err[-600:])
    assert "Traceback" not in r.err
    if r.code == 1 and r.out:
        found = [f for f in r.json["findings"] if f["check"] == "schema"]
        assert any(words in f["message"] for f in found), r.json["findings"]
    else:
        assert r.err.count("\n") == 1 and words.split()[0] in r.err, r.err


SQLITE_TABLES = ("entry_index", "outcomes", "signing_keys", "once_keys", "meta", "tree",
                 "checkpoints", "verifications", "audits", "run_sources")


@pytest.mark.parametrize("table", SQLITE_TABLES)
def test_a_dropped_sqlite_table_is_found(table: str, ledger_dir: Path) -> None:
    _prepare(ledger_dir)
    _fill()
    conn = sqlite3.connect(ledger_dir / ".logbook" / "ledger.db")
    conn.execute(f"DROP TABLE {table}")
    conn.commit()
    conn.close()
    _found(run_cli("verify", "--json"), table)


PG_TABLES = ("outcomes", "tree", "signing_keys", "checkpoints", "blobs", "run_sources",
             "entry_index", "head", "once_keys", "audits")


@pytest.mark.parametrize("table", PG_TABLES)
def test_a_dropped_postgres_table_is_found(table: str, pg_url: str, ledger_dir: Path) -> None:
    import psycopg

    _prepare(ledger_dir)
    assert run_cli("clone", ".", pg_url).code == 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOGBOOK_DIR", pg_url)
        _fill()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {table} CASCADE")
    _found(run_cli("--ledger", pg_url, "verify", "--json"), table)


def test_a_changed_postgres_column_type_is_found(pg_url: str, ledger_dir: Path) -> None:
    import psycopg

    _prepare(ledger_dir)
    assert run_cli("clone", ".", pg_url).code == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE tree ALTER COLUMN hash TYPE text USING encode(hash, 'hex')")
    _found(run_cli("--ledger", pg_url, "verify", "--json"), "tree.hash is text, not bytea")
