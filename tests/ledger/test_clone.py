"""`logbook clone` copies what reading commands show besides the entries (issue 18): the
checkpoints and the audit records `brief` reads, so `brief --json` (and every other reading
command) prints the same bytes on SRC and on its clone, whichever stores they are."""

from __future__ import annotations

from pathlib import Path

import pg_cluster as cluster_fixtures
from builders import draft, plan_body, run_body, write_json
from conftest import CliResult, run_cli

# the session's PostgreSQL cluster and a database of each test's own (tests/storage/)
pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url

SLUG = "kv-q8-vs-f16"
# what only reads (`audit` also keeps a record of itself, which the next `brief` shows)
READS = [("brief", "--json"), ("brief",), ("report", SLUG, "--json"), ("verify", "--json"),
         ("log", "--json")]


def ok(r: CliResult) -> CliResult:
    assert r.code == 0, (r.code, r.err)
    return r


def _audited(work: Path) -> None:
    """A plan and runs, audited twice (two audit records) and checkpointed."""
    ok(run_cli("init", str(work), "--name", "team"))
    ok(run_cli("plan", str(write_json(work / "plan.json", plan_body(SLUG, runs_per_arm=2)))))
    for i, arm in enumerate(["f16", "q8", "f16"]):
        ok(run_cli("append", str(write_json(work / f"run{i}.json",
                                            draft("run", run_body(SLUG, arm, seed=i))))))
    ok(run_cli("audit", "--json"))
    ok(run_cli("note", "one more run to go"))
    ok(run_cli("audit", "--json"))
    ok(run_cli("checkpoint"))


def _answers(ledger: str) -> list[tuple[int, str]]:
    return [(r.code, r.out) for r in (run_cli("--ledger", ledger, *args) for args in READS)]


def test_brief_is_byte_identical_on_a_sqlite_clone(tmp_path: Path) -> None:
    work = tmp_path / "work"
    _audited(work)
    before = run_cli("brief", "--json").json
    assert before, "brief printed nothing"
    ok(run_cli("clone", str(work), str(tmp_path / "copy")))
    assert _answers(str(work)) == _answers(str(tmp_path / "copy"))
    audits = [run_cli("--ledger", str(where), "audit", "--json")
              for where in (work, tmp_path / "copy")]
    assert audits[0].out == audits[1].out and audits[0].code == audits[1].code


def test_audit_records_go_to_postgres_and_back(pg_url: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _audited(work)
    ok(run_cli("clone", str(work), pg_url))
    assert _answers(str(work)) == _answers(pg_url)
    # an audit on the server is copied back into the file with the new entries
    ok(run_cli("--ledger", pg_url, "note", "from the team"))
    ok(run_cli("--ledger", pg_url, "audit", "--json"))
    ok(run_cli("clone", pg_url, str(work)))
    assert _answers(pg_url) == _answers(str(work))
    # cloning again copies no record twice
    ok(run_cli("clone", pg_url, str(work)))
    ok(run_cli("clone", str(work), pg_url))
    assert _answers(pg_url) == _answers(str(work))


def test_brief_shows_the_audit_records(tmp_path: Path) -> None:
    # the guard for the tests above: without its audit records a clone's brief would differ
    work = tmp_path / "work"
    ok(run_cli("init", str(work), "--name", "team"))
    ok(run_cli("note", "nothing audited yet"))
    unaudited = run_cli("brief", "--json").out
    ok(run_cli("audit", "--json"))
    assert run_cli("brief", "--json").out != unaudited
