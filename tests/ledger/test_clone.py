"""`logbook clone` copies what reading commands show besides the entries (issue 18): the
checkpoints and the audit records `brief` reads, so `brief --json` (and every other reading
command) prints the same bytes on SRC and on its clone, whichever stores they are; and the logs
runs keep, byte-identical from a file to a server and back, verified on each."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pg_cluster as cluster_fixtures
import psycopg
import pytest
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


def test_brief_is_byte_identical_on_a_sqlite_clone(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # each ledger checked in full: how this machine checked a ledger before (its brief says
    # when) is this machine's, not the ledger's
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    work = tmp_path / "work"
    _audited(work)
    before = run_cli("brief", "--json").json
    assert before, "brief printed nothing"
    ok(run_cli("clone", str(work), str(tmp_path / "copy")))
    assert _answers(str(work)) == _answers(str(tmp_path / "copy"))
    audits = [run_cli("--ledger", str(where), "audit", "--json")
              for where in (work, tmp_path / "copy")]
    assert audits[0].out == audits[1].out and audits[0].code == audits[1].code


def test_audit_records_go_to_postgres_and_back(pg_url: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")  # as above
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


def _logged_run(work: Path, text: bytes) -> str:
    """`logbook run` with a --log in the ledger at ``work``; the log's sha256 hex."""
    log = work / f"eval-{len(text)}.log"
    log.write_bytes(text)
    writer = ("import json\nprint('scoring')\nwith open('items.jsonl', 'w') as f:\n"
              "    f.write(json.dumps({'id': 1, 'score': 1}) + '\\n')\n")
    ok(run_cli("--ledger", str(work), "run", "--outcomes", "items.jsonl", "--log", str(log),
               "--", sys.executable, "-c", writer))
    return hashlib.sha256(text).hexdigest()


def _kept(ledger: str, digest: str) -> bytes | None:
    """The bytes of a log kept in ``ledger``: a file beside it, or a row of the server's."""
    if ledger.startswith("postgresql://"):
        with psycopg.connect(ledger, password=cluster_fixtures.PASSWORD) as pg:
            row = pg.execute("SELECT data FROM blobs WHERE digest = %s", (digest,)).fetchone()
        return bytes(row[0]) if row else None
    path = Path(ledger) / ".logbook" / "blobs" / digest
    return path.read_bytes() if path.is_file() else None


def test_logs_go_to_postgres_and_back_byte_identical(pg_url: str, tmp_path: Path) -> None:
    work, back = tmp_path / "work", tmp_path / "back"
    ok(run_cli("init", str(work), "--name", "team"))
    first = _logged_run(work, b"loading weights\n\xff not utf-8\nready\n")
    ok(run_cli("clone", str(work), pg_url))
    assert _kept(pg_url, first) == _kept(str(work), first) is not None
    # a run on the server, its log in the database, comes back into a new file with the rest
    ok(run_cli("--ledger", pg_url, "note", "from the team"))
    log = tmp_path / "server.log"
    log.write_bytes(b"a run on the server\n" * 50)
    writer = ("import json\nwith open('items.jsonl', 'w') as f:\n"
              "    f.write(json.dumps({'id': 1, 'score': 0}) + '\\n')\n")
    ok(run_cli("--ledger", pg_url, "run", "--outcomes", "items.jsonl", "--log", str(log), "--",
               sys.executable, "-c", writer))
    second = hashlib.sha256(log.read_bytes()).hexdigest()
    ok(run_cli("clone", pg_url, str(back)))
    for digest in (first, second):
        assert _kept(str(back), digest) == _kept(pg_url, digest) is not None
    assert _kept(str(back), second) == log.read_bytes()
    for where in (str(work), pg_url, str(back)):
        r = run_cli("--ledger", where, "verify", "--json")
        assert r.code == 0 and r.json["ok"], (where, r.out)
    # cloning again into the first file brings the server's log too
    ok(run_cli("clone", pg_url, str(work)))
    assert _kept(str(work), second) == log.read_bytes()
    assert run_cli("--ledger", str(work), "verify").code == 0


def test_a_clone_refuses_a_source_whose_log_was_altered(tmp_path: Path) -> None:
    work = tmp_path / "work"
    ok(run_cli("init", str(work), "--name", "team"))
    digest = _logged_run(work, b"ready\n")
    (work / ".logbook" / "blobs" / digest).write_bytes(b"READY\n")
    r = run_cli("clone", str(work), str(tmp_path / "copy"))
    assert r.code == 1 and "does not verify" in r.err, (r.code, r.err)
    assert not (tmp_path / "copy").exists()
