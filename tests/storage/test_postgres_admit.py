"""Refused runs and admissions on a PostgreSQL ledger (issue 32 items 6 and 7): the index
finds a refused run by the plan it was meant for and an admission by its run, as on SQLite."""

from __future__ import annotations

import sys
from pathlib import Path

import pg_cluster as cluster_fixtures
from builders import plan_body, write_json
from conftest import CliResult, run_cli

pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url

WRITER = ("import json\nwith open('items.jsonl', 'w') as f:\n"
          "    for i in range(3): f.write(json.dumps({'id': i, 'score': i % 2}) + '\\n')\n")


def test_refused_then_admitted_on_a_server(pg_url: str) -> None:
    def lb(*args: str) -> CliResult:
        return run_cli("--ledger", pg_url, *args)

    assert lb("init", "--name", "team").code == 0
    r = lb("plan", str(write_json(Path("pl.json"), plan_body("pl", n_items=2))))
    assert r.code == 0, r.err
    for _ in range(2):
        r = lb("run", "--plan", "pl", "--arm", "q8", "--outcomes", "items.jsonl", "--",
               sys.executable, "-c", WRITER)
        assert r.code == 1, r.err
    rep = lb("report", "pl", "--json").json
    assert [x["seq"] for x in rep["refused"]] == [2, 3]
    brief = lb("brief", "--json").json
    assert brief["open_plans"][0]["blocked"] == ["q8"]
    assert lb("amend", "pl", "--set", "suite.n_items=3", "--reason", "3 items").code == 0
    assert lb("admit", "@2", "--plan", "pl", "--arm", "q8").code == 0
    r = lb("admit", "@2", "--plan", "pl", "--arm", "q8")
    assert r.code == 2 and "already admitted" in r.err
    assert lb("admit", "@3", "--plan", "pl", "--arm", "q8").code == 0
    rep = lb("report", "pl", "--json").json
    q8 = next(a for a in rep["arms"] if a["name"] == "q8")
    assert q8["completed"] == 2 and rep["refused"] == []
    brief = lb("brief", "--json").json
    assert {a["arm"]: a["completed"] for a in brief["open_plans"][0]["arms"]}["q8"] == 2
    assert lb("verify", "--strict").code == 0
