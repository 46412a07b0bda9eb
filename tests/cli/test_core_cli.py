"""The core append path through the public commands: init, append, plan, amend, note, retract,
log, show, export, reindex, and the exit codes (DESIGN §6)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from builders import draft, plan_body, run_body, write_json, write_jsonl


def head(cli) -> tuple[int, str]:
    r = cli("log", "-n", "1", "--json")
    assert r.code == 0, r.err
    return r.json[0]["seq"] + 1, r.json[0]["digest"]


def test_init_creates_key_0600_and_reuses_it(tmp_path: Path, cli) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    r1 = cli("init", str(a), "--name", "first", "--json")
    r2 = cli("init", str(b), "--name", "second", "--json")
    assert r1.code == 0 and r2.code == 0
    assert r1.json["key_created"] is True and r2.json["key_created"] is False
    assert r1.json["fingerprint"] == r2.json["fingerprint"]
    mode = stat.S_IMODE(os.stat(r1.json["key"]).st_mode)
    assert mode == 0o600
    assert (a / ".logbook" / "ledger.db").is_file()
    # a ledger never contains the private key
    seed_line = Path(r1.json["key"]).read_text().splitlines()[1].encode()
    assert seed_line not in (a / ".logbook" / "ledger.db").read_bytes()


def test_init_refuses_existing_ledger(ledger_dir: Path, cli) -> None:
    r = cli("init", str(ledger_dir), "--name", "again")
    assert r.code == 2 and "already exists" in r.err


def test_logbook_key_names_another_key(tmp_path: Path, cli, monkeypatch) -> None:
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "other.key"))
    r = cli("init", ".", "--name", "x", "--json")
    assert r.code == 0 and r.json["key"] == str(tmp_path / "other.key")
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "missing.key"))
    before = head(cli)
    r = cli("note", "hello")
    assert r.code == 3 and "missing.key" in r.err
    assert head(cli) == before


def test_no_ledger_is_exit_3(cli) -> None:
    r = cli("log")
    assert r.code == 3 and "no ledger" in r.err


def test_full_flow(ledger_dir: Path, cli, tmp_path: Path) -> None:
    plan = write_json(tmp_path / "plan.json", plan_body())
    r = cli("plan", str(plan), "--json")
    assert r.code == 0, r.err
    plan_digest = r.json["digest"]
    # runs refer to the plan by slug; it is stored as the full digest
    r = cli("append", str(write_json(tmp_path / "r1.json",
                                     draft("run", run_body("kv-q8-vs-f16", "f16")))), "--json")
    assert r.code == 0, r.err
    assert r.json["entry"]["body"]["plan"] == plan_digest
    run_digest = r.json["digest"]
    r = cli("append", "-", "--json",
            stdin=write_json(tmp_path / "r2.json",
                             draft("run", run_body(plan_digest[:10], "q8", status="failed")))
            .read_bytes())
    assert r.code == 0, r.err
    r = cli("amend", "kv-q8-vs-f16", "--set", "runs_per_arm=5", "--set", "suite.n_items=60",
            "--reason", "more power")
    assert r.code == 0, r.err
    r = cli("note", "looked at the first run", "--ref", run_digest[:8])
    assert r.code == 0, r.err
    r = cli("retract", run_digest, "--reason", "wrong dataset", "--category", "data_error")
    assert r.code == 0, r.err
    r = cli("log", "--json")
    kinds = [e["kind"] for e in r.json]
    assert kinds == ["genesis", "plan", "run", "run", "amendment", "note", "retraction"]
    assert r.json[2]["retracted_by"]
    r = cli("log", "--plan", "kv-q8-vs-f16", "--json")
    assert [e["kind"] for e in r.json] == ["plan", "run", "run", "amendment"]
    r = cli("log", "--kind", "run", "-n", "1", "--json")
    assert len(r.json) == 1 and r.json[0]["seq"] == 3
    r = cli("show", "@2", "--json")
    assert r.code == 0 and r.json["digest"] == run_digest and r.json["retracted_by"]
    r = cli("show", "#1")
    assert r.code == 0 and "kv-q8-vs-f16" in r.out
    out = tmp_path / "export.jsonl"
    r = cli("export", "--out", str(out))
    assert r.code == 0 and len(out.read_bytes().splitlines()) == 7
    r = cli("verify", str(out))
    assert r.code == 0, r.out
    r = cli("verify")
    assert r.code == 0, r.out


def test_jsonl_is_all_or_none(ledger_dir: Path, cli, tmp_path: Path) -> None:
    before = head(cli)
    bad = write_jsonl(tmp_path / "d.jsonl", [draft("note", {"text": "a"}),
                                             draft("note", {"text": "b", "extra": 1})])
    r = cli("append", "--jsonl", str(bad))
    assert r.code == 2 and "draft 2" in r.err and "extra" in r.err
    assert head(cli) == before
    good = write_jsonl(tmp_path / "g.jsonl", [draft("note", {"text": "a"}),
                                              draft("note", {"text": "b"})])
    r = cli("append", "--jsonl", str(good), "--json")
    assert r.code == 0 and len(r.json) == 2


def test_once_returns_the_first_entry(ledger_dir: Path, cli, tmp_path: Path) -> None:
    f = write_json(tmp_path / "n.json", draft("note", {"text": "retry me"}))
    a = cli("append", str(f), "--once", "job-17", "--json")
    b = cli("append", str(f), "--once", "job-17", "--json")
    assert a.code == 0 and b.code == 0
    assert a.json["digest"] == b.json["digest"]
    assert "nothing new was appended" in b.err and "nothing new" not in a.err
    assert head(cli)[0] == 2


def test_reindex_rebuilds_derived_tables(ledger_dir: Path, cli, tmp_path: Path) -> None:
    cli("plan", str(write_json(tmp_path / "p.json", plan_body())))
    cli("append", str(write_json(tmp_path / "r.json",
                                 draft("run", run_body("kv-q8-vs-f16", "f16")))))
    r = cli("reindex", "--json")
    assert r.code == 0 and r.json["entries"] == 3 and r.json["outcomes"] == 1
    assert cli("verify").code == 0


def test_toml_plan_and_readme_example(ledger_dir: Path, cli) -> None:
    from importlib import resources

    text = resources.files("logbook.examples").joinpath("plan.toml").read_text()
    path = ledger_dir / "plan.toml"
    path.write_text(text)
    r = cli("plan", str(path), "--json")
    assert r.code == 0, r.err
    assert r.json["entry"]["body"]["slug"] == "kv-q8-vs-f16"


def test_internal_error_exits_70_with_traceback(ledger_dir: Path, cli, monkeypatch) -> None:
    from logbook.ledger.service import Ledger

    def boom(*a, **k):
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(Ledger, "log", boom)
    r = cli("log")
    assert r.code == 70 and "Traceback" in r.err and "ZeroDivisionError" in r.err


def test_usage_error_is_exit_2(cli) -> None:
    r = cli("retract")
    assert r.code == 2
    r = cli("no-such-command")
    assert r.code == 2


def test_debug_shows_traceback_of_user_error(ledger_dir: Path, cli) -> None:
    r = cli("--debug", "show", "@99")
    assert r.code == 2 and "Traceback" in r.err
    r = cli("show", "@99")
    assert r.code == 2 and "Traceback" not in r.err


def test_every_command_has_help(cli) -> None:
    r = cli("--help")
    assert r.code == 0
    for name in ("init", "append", "plan", "amend", "note", "retract", "log", "show", "export",
                 "verify", "keys", "demo", "reindex"):
        assert name in r.out, name
        h = cli(name, "--help")
        assert h.code == 0 and len(h.out) > 50, name


def test_export_to_an_unwritable_place_is_exit_2(ledger_dir: Path, cli, tmp_path: Path) -> None:
    r = cli("export", "--out", str(tmp_path / "no" / "such" / "dir" / "x.jsonl"))
    assert r.code == 2 and "cannot be written" in r.err
    r = cli("keys", "revoke", "nope", "--reason", "x")
    assert r.code == 2 and "not a key of this ledger" in r.err


def test_log_unknown_kind_is_exit_2(ledger_dir: Path, cli) -> None:
    r = cli("log", "--kind", "nope")
    assert r.code == 2 and "--kind" in r.err


def test_an_older_schema_is_migrated_by_a_write_never_by_verify(ledger_dir: Path, cli) -> None:
    import sqlite3

    db = ledger_dir / ".logbook" / "ledger.db"
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO tree (level, idx, hash) VALUES (0, 0, zeroblob(32))")
    conn.execute("PRAGMA user_version = 3")  # as a ledger from before migration 4 looks
    conn.commit()
    conn.close()
    r = cli("verify")
    assert r.code == 3 and "schema version 3" in r.err  # read-only: never migrates
    assert cli("reindex").code == 0
    assert cli("verify").code == 0


def test_append_and_verify_import_neither_numpy_nor_scipy(ledger_dir: Path,
                                                          tmp_path: Path) -> None:
    """DESIGN §3: the hot paths stay light (sqlite-utils would pull numpy and pandas in)."""
    import os
    import subprocess
    import sys

    draft = write_json(tmp_path / "r.json", draft_run())
    code = ("import sys\nfrom logbook.cli.main import run\n"
            f"assert run(['append', {str(draft)!r}]) == 0\n"
            "assert run(['verify']) == 0\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'scipy', 'pandas', 'sqlite_utils')]\n"
            "assert not heavy, heavy\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ledger_dir, env=dict(os.environ),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]


def draft_run() -> dict:
    return draft("run", run_body(None, None, n_items=20))


def test_a_ledger_url_no_backend_serves_is_exit_2(cli, monkeypatch) -> None:
    # open_store picks the backend from the locator: an unknown scheme is refused (exit 2), a
    # PostgreSQL server that cannot be reached is exit 3; neither repeats a password
    r = cli("--ledger", "postgresql://me:s3cret@127.0.0.1:1/ledger", "log")
    assert r.code == 3 and "cannot be reached" in r.err, r.err
    assert "s3cret" not in r.err
    monkeypatch.setenv("LOGBOOK_DIR", "postgres://me:s3cret@127.0.0.1:1/ledger")
    r = cli("show", "@0")
    assert r.code == 3 and "s3cret" not in r.err, r.err
    monkeypatch.delenv("LOGBOOK_DIR")
    r = cli("--ledger", "s3://bucket/ledger.db", "log")
    assert r.code == 2 and "s3:// is not a kind of ledger" in r.err
    assert "bucket" not in r.err


def test_once_with_another_draft_is_refused_naming_the_first(ledger_dir: Path, cli,
                                                             tmp_path: Path) -> None:
    """An honest mistake (issue 34): the key reused for another draft is exit 2 naming the
    entry the key recorded, and nothing is dropped silently or appended."""
    first = cli("append", str(write_json(tmp_path / "a.json", draft("note", {"text": "a"}))),
                "--once", "job-18", "--json")
    assert first.code == 0
    other = write_json(tmp_path / "b.json", draft("note", {"text": "b"}))
    r = cli("append", str(other), "--once", "job-18")
    assert r.code == 2 and r.err.count("\n") == 1, r.err
    assert f"@{first.json['seq']}" in r.err and first.json["digest"][:12] in r.err
    assert "--once job-18" in r.err
    assert head(cli)[0] == 2
    # a batch under one key: the same batch again is the same entries; another batch is not
    batch = [draft("note", {"text": f"n{i}"}) for i in range(3)]
    path = write_jsonl(tmp_path / "batch.jsonl", batch)
    a = cli("append", "--jsonl", str(path), "--once", "batch-1", "--json")
    b = cli("append", "--jsonl", str(path), "--once", "batch-1", "--json")
    assert a.code == b.code == 0 and b.json[-1]["digest"] == a.json[-1]["digest"]
    changed = write_jsonl(tmp_path / "batch2.jsonl", [batch[0], draft("note", {"text": "x"}),
                                                      batch[2]])
    r = cli("append", "--jsonl", str(changed), "--once", "batch-1")
    assert r.code == 2 and "draft 2 differs" in r.err, r.err
    assert head(cli)[0] == 5


def test_a_once_key_planted_by_someone_else_never_drops_a_draft(ledger_dir: Path, cli,
                                                                tmp_path: Path) -> None:
    """A co-agent with the INSERT grant writes once-key rows ahead of a victim (issue 34):
    naming another entry, the victim's append is refused naming it (exit 2); naming no entry,
    it is a damaged ledger (exit 1); either way nothing is dropped as if it were appended."""
    import sqlite3

    other = cli("note", "someone else's", "--json").json
    conn = sqlite3.connect(ledger_dir / ".logbook" / "ledger.db")
    conn.execute("INSERT INTO once_keys VALUES ('victim-1', ?)", (other["digest"],))
    conn.execute("INSERT INTO once_keys VALUES ('victim-2', ?)", ("ab" * 32,))
    conn.commit()
    conn.close()
    f = write_json(tmp_path / "n.json", draft("note", {"text": "mine"}))
    r = cli("append", str(f), "--once", "victim-1")
    assert r.code == 2 and f"@{other['seq']}" in r.err, r.err
    r = cli("append", str(f), "--once", "victim-2")
    assert r.code == 1 and "no entry of the ledger" in r.err and r.err.count("\n") == 1, r.err
    assert head(cli)[0] == 2
