"""`verify` under load and on damaged storage (issue 14, item 2).

* Eight processes append while `verify` (and now and then `brief`) runs in a loop: each reads
  one snapshot, so none of them may report a finding.
* A file altered below logbook (an entry stored as SQLite TEXT, bytes that are not UTF-8, a
  derived table dropped or emptied, a stored checkpoint that does not hold) gives `verify`
  findings and exit 1, and the other commands that read it exit 0, 1 or 3 with one sentence:
  never 70.
* `verify` writes nothing to the ledger it checks.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builders import APPENDER, draft, plan_body, run_body, write_json, write_jsonl
from conftest import CliResult, run_cli

SLUG = "storage-plan"


def ok(*args: str) -> CliResult:
    r = run_cli(*args)
    assert r.code == 0, (args, r.code, r.out, r.err)
    return r


def build(work: Path) -> Path:
    """A small honest ledger (plan, runs, a note, a checkpoint); returns its database."""
    ok("init", str(work), "--name", "storage")
    ok("plan", str(write_json(work / "plan.json", plan_body(SLUG, runs_per_arm=2,
                                                             n_items=20))))
    runs = [draft("run", run_body(SLUG, ("f16", "q8")[i % 2], n_items=20, seed=i,
                                  missing=i % 2)) for i in range(4)]
    ok("append", str(write_jsonl(work / "runs.jsonl", runs)), "--jsonl")
    ok("note", "four runs done")
    ok("checkpoint", "--out", str(work / "published.checkpoint"))
    ok("note", "after the checkpoint")
    return work / ".logbook" / "ledger.db"


def alter(db: Path, *statements: str) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("DROP TRIGGER IF EXISTS entries_no_update")
        for s in statements:
            conn.execute(s)
    finally:
        conn.close()


def one_sentence(r: CliResult) -> None:
    """A user-facing refusal: exit 1 or 3, one line on stderr, no traceback."""
    assert r.code in (1, 3), (r.code, r.out, r.err)
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in r.err, r.err


DAMAGE = {
    # the stored bytes are unchanged but stored as TEXT: not how logbook stores an entry
    "entry stored as text": (["UPDATE entries SET entry = CAST(entry AS TEXT) WHERE seq = 2"],
                             "storage"),
    "entry bytes not utf-8": (["UPDATE entries SET entry = X'7B22FF22' || entry "
                               "WHERE seq = 2"], "digest"),
    "entry text not utf-8": (["UPDATE entries SET entry = CAST(X'7BFF7D' AS TEXT) "
                              "WHERE seq = 2"], "digest"),
    "digest not utf-8": (["UPDATE entries SET digest = CAST(X'FF' AS TEXT) WHERE seq = 2"],
                         "digest"),
    "signature not utf-8": (["UPDATE entries SET signature = CAST(X'FFFE' AS TEXT) "
                             "WHERE seq = 2"], "signature"),
    "index text not utf-8": (["UPDATE entry_index SET arm = CAST(X'FF' AS TEXT) "
                              "WHERE seq = 2"], "derived"),
    "tree table missing": (["DROP TABLE tree"], "schema"),
    "tree table truncated": (["DELETE FROM tree WHERE level > 1"], "derived"),
    "index table missing": (["DROP TABLE entry_index"], "schema"),
    "outcomes table missing": (["DROP TABLE outcomes"], "schema"),
    "checkpoint larger than the ledger": (
        ["DROP TRIGGER IF EXISTS entries_no_delete", "DELETE FROM entries WHERE seq >= 4",
         "DELETE FROM entry_index WHERE seq >= 4", "DELETE FROM outcomes WHERE seq >= 4",
         "DELETE FROM tree WHERE ((idx + 1) << level) > 4"], "checkpoint"),
    "checkpoint note damaged": (["UPDATE checkpoints SET note = CAST(X'FF0A' AS TEXT)"],
                                "checkpoint"),
}


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import isolate

    base = tmp_path_factory.mktemp("honest")
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, base / "home", base / "work")
        build(base / "work")
    return base


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damaged_storage_is_a_finding_never_a_crash(case: str, honest: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    statements, check = DAMAGE[case]
    work = tmp_path / "copy"
    shutil.copytree(honest / "work", work)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(honest / "home" / "config"))  # the owner's key
    monkeypatch.chdir(work)
    db = work / ".logbook" / "ledger.db"
    assert run_cli("verify").code == 0  # the copy verifies before it is damaged
    alter(db, *statements)
    before = hashlib.sha256(db.read_bytes()).hexdigest()

    r = run_cli("verify", "--json")
    assert r.code == 1, (r.code, r.out, r.err)
    assert r.json["ok"] is False
    assert check in {f["check"] for f in r.json["findings"]}, r.json["findings"]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before  # verify wrote nothing
    r = run_cli("verify")
    assert r.code == 1 and "FAIL [" in r.out

    for args in (["report", SLUG], ["brief"], ["audit"], ["checkpoint"]):
        r = run_cli(*args)
        one_sentence(r)
        assert r.code == 1 and "this ledger does not verify: " in r.err, (args, r.err)
    for args in (["export"], ["show", "@2"], ["log"], ["prove", "@1"]):
        r = run_cli(*args)
        assert r.code != 70, (args, r.err)
        if r.code:
            one_sentence(r)
    r = run_cli("reindex")  # rebuilds a lost derived table; refuses a damaged entry
    assert r.code != 70, r.err
    if r.code:
        one_sentence(r)
    elif check == "derived":
        assert run_cli("verify").code == 0  # the derived tables were the only damage


def test_a_stored_checkpoint_is_recomputed_by_plain_verify(honest: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    # a forged row claiming a checkpoint of another root: verify recomputes it, so a `brief`
    # or an audit that counts checkpoints cannot be fooled by one
    work = tmp_path / "copy"
    shutil.copytree(honest / "work", work)
    monkeypatch.chdir(work)
    db = work / ".logbook" / "ledger.db"
    conn = sqlite3.connect(db, isolation_level=None)
    (note,) = conn.execute("SELECT note FROM checkpoints").fetchone()
    lines = note.split("\n")
    lines[2] = "A" * 43 + "="  # another root, the old signature
    conn.execute("INSERT INTO checkpoints (size, root, note, created) VALUES (?,?,?,?)",
                 (int(lines[1]), "00" * 32, "\n".join(lines), "2026-01-01T00:00:00Z"))
    conn.close()
    r = run_cli("verify", "--json")
    assert r.code == 1
    messages = [f["message"] for f in r.json["findings"] if f["check"] == "checkpoint"]
    assert len(messages) == 1 and "stored checkpoint 2" in messages[0], r.json




@pytest.mark.slow
def test_verify_while_eight_processes_append(ledger_dir: Path) -> None:
    tests = str(Path(__file__).parents[1])
    writers = [subprocess.Popen(
        [sys.executable, "-c", APPENDER.format(tests=tests, work=str(ledger_dir), count=60,
                                               w=w)],
        env={**os.environ, "LOGBOOK_LOCK_TIMEOUT": "120"}, stderr=subprocess.PIPE)
        for w in range(8)]
    results: list[CliResult] = []
    briefs: list[CliResult] = []  # the analysis check reads one snapshot too
    try:
        while any(p.poll() is None for p in writers) or len(results) < 5:
            results.append(run_cli("verify", "--json"))
            if len(results) % 3 == 0:
                briefs.append(run_cli("brief", "--json"))
            time.sleep(0.01)
    finally:
        for p in writers:
            p.wait(timeout=300)
    assert all(p.returncode == 0 for p in writers), [p.stderr.read() for p in writers
                                                     if p.stderr]
    bad = [(r.code, r.out[:500]) for r in results if r.code != 0]
    assert not bad, f"{len(bad)} of {len(results)} verifies failed: {bad[:2]}"
    bad = [(r.code, r.err[:500]) for r in briefs if r.code != 0]
    assert briefs and not bad, f"{len(bad)} of {len(briefs)} briefs failed: {bad[:2]}"
    sizes = {r.json["entries"] for r in results}
    assert len(sizes) > 2  # verify really ran while the ledger grew
    assert run_cli("verify", "--json").json["entries"] == 1 + 8 * 60
