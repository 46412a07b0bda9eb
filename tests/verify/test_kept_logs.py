"""`verify` checks the logs runs keep, on both stores (issue 18): each run's ``logs[]``
reference must name a kept blob whose bytes hash to it. An altered blob (a file edited beside
a SQLite ledger; a row rewritten by a superuser with the triggers off on PostgreSQL) and a
deleted one are error findings naming the run and the log; a log the run itself says was not
kept is no finding."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import orjson
import pg_cluster as cluster_fixtures
import psycopg
import pytest
from conftest import CliResult, run_cli

pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url

STORES = ["sqlite", "postgresql"]
WRITER = ("import json\nprint('evaluating 2 items')\nwith open('items.jsonl', 'w') as f:\n"
          "    for i in range(2): f.write(json.dumps({'id': i, 'score': i}) + '\\n')\n")
LOG = b"loading weights\nready\n"


class Ledger:
    """A ledger of one store with one run that kept two logs, and the hands to tamper with
    what it kept (the file beside it; the row, as a superuser with the triggers off)."""

    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self.url = request.getfixturevalue("pg_url") if kind == "postgresql" else None
        self.args = ("--ledger", self.url) if self.url else ()
        assert self.cli("init", *(() if self.url else (str(Path.cwd()),)),
                        "--name", "t").code == 0
        (Path.cwd() / "load.log").write_bytes(LOG)
        r = self.cli("run", "--outcomes", "items.jsonl", "--log", "load.log", "--",
                     sys.executable, "-c", WRITER)
        assert r.code == 0, r.err
        (self.seq,) = [e["seq"] for e in self.cli("log", "--json").json if e["kind"] == "run"]
        self.digest = hashlib.sha256(LOG).hexdigest()

    def cli(self, *args: str) -> CliResult:
        return run_cli(*self.args, *args)

    def _sql(self, *statements: str) -> None:
        with psycopg.connect(self.url, password=cluster_fixtures.PASSWORD,
                             autocommit=True) as pg:
            pg.execute("SET session_replication_role = replica")  # no user triggers fire
            # the owner (or a superuser) can drop the check a log's bytes hash to its name
            pg.execute("ALTER TABLE blobs DROP CONSTRAINT IF EXISTS blobs_hash_is_name")
            for s in statements:
                pg.execute(s.encode(), (self.digest,))

    def _file(self) -> Path:
        return Path.cwd() / ".logbook" / "blobs" / self.digest

    def alter(self, data: bytes) -> None:
        if self.url:
            self._sql(f"UPDATE blobs SET data = '\\x{data.hex()}'::bytea WHERE digest = %s")
        else:
            self._file().write_bytes(data)

    def delete(self) -> None:
        if self.url:
            self._sql("DELETE FROM blobs WHERE digest = %s")
        else:
            self._file().unlink()

    def findings(self) -> list[dict[str, Any]]:
        r = self.cli("verify", "--json")
        assert r.code == 1, (r.code, r.out, r.err)
        found: list[dict[str, Any]] = r.json["findings"]
        return found


@pytest.fixture(params=STORES)
def ledger(request: pytest.FixtureRequest) -> Ledger:
    return Ledger(request.param, request)


def test_kept_logs_verify(ledger: Ledger) -> None:
    r = ledger.cli("verify", "--json")
    assert r.code == 0 and r.json["ok"] is True, r.out


@pytest.mark.parametrize("altered", [b"loading weights\nREADY\n",  # same size, other bytes
                                     LOG + b"one more line\n",  # longer: read with a bound
                                     LOG[:5]])
def test_an_altered_blob_is_an_error_naming_the_run_and_the_log(ledger: Ledger,
                                                               altered: bytes) -> None:
    ledger.alter(altered)
    (f,) = ledger.findings()
    assert (f["check"], f["severity"], f["seq"]) == ("log", "error", ledger.seq)
    assert f"run {ledger.seq}" in f["message"] and "'load.log'" in f["message"]
    assert "altered" in f["message"]
    printed = ledger.cli("verify")
    assert printed.code == 1 and "FAIL [log]" in printed.out, printed.out


def test_a_deleted_blob_is_an_error_naming_the_run_and_the_log(ledger: Ledger) -> None:
    ledger.delete()
    (f,) = ledger.findings()
    assert (f["check"], f["severity"], f["seq"]) == ("log", "error", ledger.seq)
    assert "'load.log'" in f["message"] and "deleted" in f["message"]
    assert ledger.digest[:16] in f["message"]


def test_analysis_reads_no_logs_so_a_deleted_log_stops_only_verify(ledger: Ledger) -> None:
    """The analysis check leaves logs to `verify` (docs/auditing.md §7): figures come from the
    signed entries alone, so `audit` and `brief` still print, and `verify` still fails."""
    ledger.delete()
    assert ledger.cli("verify").code == 1
    audit = ledger.cli("audit", "--json")
    assert audit.code in (0, 1) and "does not verify" not in audit.err, audit.err
    assert audit.json["entries"] == len(ledger.cli("log", "--json").json)
    brief = ledger.cli("brief", "--json")
    assert brief.code == 0 and brief.json["integrity"]["verified"]["verified"] is True


def test_a_log_the_run_says_was_not_kept_is_no_finding(tmp_path: Path) -> None:
    assert run_cli("init", str(Path.cwd()), "--name", "t").code == 0
    (Path.cwd() / ".logbook" / "blobs").write_text("a file where the folder of blobs goes\n")
    (Path.cwd() / "load.log").write_bytes(LOG)
    r = run_cli("run", "--outcomes", "items.jsonl", "--log", "load.log", "--",
                sys.executable, "-c", WRITER)
    assert r.code == 0, r.err
    (run,) = [e["entry"]["body"] for e in run_cli("log", "--json").json if e["kind"] == "run"]
    assert "'load.log'" in run["reason"] and "could not be kept" in run["reason"]
    assert run_cli("verify").code == 0
    # the sentence is about that log: another log missing is still found
    (Path.cwd() / ".logbook" / "blobs").unlink()
    other = tmp_path / "other.log"
    other.write_bytes(b"other\n")
    assert run_cli("run", "--outcomes", "items.jsonl", "--log", str(other), "--",
                   sys.executable, "-c", WRITER).code == 0
    (Path.cwd() / ".logbook" / "blobs" / hashlib.sha256(b"other\n").hexdigest()).unlink()
    r = run_cli("verify", "--json")
    assert r.code == 1
    assert [f["check"] for f in r.json["findings"]] == ["log"]
    assert "'other.log'" in r.json["findings"][0]["message"]


def test_runs_of_a_server_ledger_that_kept_no_logs_still_verify(tmp_path: Path) -> None:
    # before PostgreSQL ledgers kept logs, their runs said so in these words
    assert run_cli("init", str(Path.cwd()), "--name", "t").code == 0
    digest = hashlib.sha256(LOG).hexdigest()
    ref = {"name": "load.log", "sha256": f"sha256:{digest}", "size": len(LOG)}
    said = (f"log 'load.log' ({len(LOG)} bytes, sha256:{digest[:16]}…) was not kept: a ledger "
            "on a PostgreSQL server keeps no log files yet; keep the file yourself (its hash "
            "is recorded)")
    run = {"kind": "run", "body": {"plan": None, "arm": "probe", "status": "completed",
                                   "reason": said, "logs": [ref],
                                   "apparatus": {"model": "m"},
                                   "outcomes": {"metric": "acc", "id": ["a"], "score": [1.0]}}}
    (tmp_path / "run.json").write_bytes(orjson.dumps(run))
    assert run_cli("append", str(tmp_path / "run.json")).code == 0
    assert run_cli("verify").code == 0
    # the same reference without the sentence: its blob is missing, and that is found
    del run["body"]["reason"]  # type: ignore[attr-defined]
    (tmp_path / "run.json").write_bytes(orjson.dumps(run))
    assert run_cli("append", str(tmp_path / "run.json")).code == 0
    r = run_cli("verify", "--json")
    assert r.code == 1 and [f["check"] for f in r.json["findings"]] == ["log"], r.out


def test_a_planted_file_under_a_logs_name_is_replaced(ledger_dir: Path) -> None:
    """Someone wrote other bytes of the same size under the name of a log a run is about to
    keep: the run keeps its own bytes (the file is checked, not taken for the log by its
    size), and the ledger verifies."""
    planted = b"loading weights\nREADY\n"
    assert len(planted) == len(LOG)
    folder = ledger_dir / ".logbook" / "blobs"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha256(LOG).hexdigest()).write_bytes(planted)
    (Path.cwd() / "load.log").write_bytes(LOG)
    r = run_cli("--ledger", str(ledger_dir), "run", "--outcomes", "items.jsonl", "--log",
                "load.log", "--", sys.executable, "-c", WRITER)
    assert r.code == 0, r.err
    assert (folder / hashlib.sha256(LOG).hexdigest()).read_bytes() == LOG
    assert run_cli("--ledger", str(ledger_dir), "verify").code == 0
