"""Defects a reviewer reproduced, each through the CLI: outputs that would destroy the ledger
or a key, damaged storage, decompression bombs, redaction, `demo --dir`, `verify` of a pipe,
and the key folder's permissions."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import prebuilt
import pytest
from builders import plan_body, write_json
from conftest import run_cli

# the module's ledger is initialised once and copied into each test (tests/prebuilt.py)
initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _folder_listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_1_out_and_html_never_overwrite_the_ledger_a_database_or_a_key(
        ledger_dir: Path, tmp_path: Path) -> None:
    assert run_cli("plan", str(write_json(tmp_path / "plan.json", plan_body("p1")))).code == 0
    db = ledger_dir / ".logbook" / "ledger.db"
    key = Path(os.environ["XDG_CONFIG_HOME"]) / "logbook" / "keys" / "default.key"
    other_db = tmp_path / "other.sqlite"
    sqlite3.connect(other_db).execute("create table t(x)").connection.close()
    key_copy = tmp_path / "backup.key"
    key_copy.write_bytes(key.read_bytes())
    # the ledger's -wal / -shm, present or not
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    for p in (wal, shm):
        if not p.exists():
            p.write_bytes(b"")
    targets = [db, wal, shm, other_db, key, key_copy]
    kept = [db, other_db, key, key_copy]  # (SQLite itself writes the -shm as it reads)
    before = {p: _digest(p) for p in kept}
    listing = (_folder_listing(db.parent), _folder_listing(key.parent),
               _folder_listing(tmp_path))
    n_entries = len(run_cli("log", "--json").json)
    commands = []
    for t in targets:
        commands += [("export", "--out", str(t)), ("report", "p1", "--html", str(t)),
                     ("checkpoint", "--out", str(t)), ("keys", "export", "--out", str(t))]
    for args in commands:
        r = run_cli(*args)
        assert r.code == 2, (args, r.code, r.err)
        assert args[-1] in r.err and "never overwritten" in r.err, r.err
        assert len(r.err.strip().splitlines()) == 1, r.err
    assert {p: _digest(p) for p in kept} == before
    assert (_folder_listing(db.parent), _folder_listing(key.parent),
            _folder_listing(tmp_path)) == listing
    assert len(run_cli("log", "--json").json) == n_entries  # no checkpoint kept
    assert run_cli("verify").code == 0
    # a symlink to the ledger is judged by what it points to
    link = tmp_path / "link.db"
    link.symlink_to(db)
    r = run_cli("export", "--out", str(link))
    assert r.code == 2 and "SQLite database" in r.err
    assert _digest(db) == before[db]
    # an ordinary file is still replaced
    plain = tmp_path / "plain.jsonl"
    plain.write_text("old\n")
    assert run_cli("export", "--out", str(plain)).code == 0
    assert plain.read_text() != "old\n"


def _damage(db: Path, sql: str) -> None:
    conn = sqlite3.connect(db)
    conn.executescript("DROP TRIGGER IF EXISTS entries_no_update; "
                       "DROP TRIGGER IF EXISTS entries_no_delete; " + sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(("sql", "column", "commands"), [
    ("UPDATE entries SET digest = CAST(digest AS BLOB) WHERE seq = 4", "digest of entry 4",
     [("export", "--out", "x.jsonl"), ("export",), ("show", "@4", "--json"), ("show", "@4"),
      ("log", "--json"), ("log",)]),
    ("UPDATE entries SET signature = CAST(signature AS BLOB) WHERE seq = 5",
     "signature of entry 5", [("export",), ("show", "@5", "--json"), ("log", "--json")]),
    ("UPDATE checkpoints SET note = CAST(note AS BLOB)", "note of stored checkpoint 1",
     [("log", "--checkpoints", "--json"), ("log", "--checkpoints")]),
])
def test_2_a_column_stored_with_the_wrong_type_is_a_finding_never_a_crash(
        ledger_dir: Path, sql: str, column: str, commands: list[tuple[str, ...]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    while len(run_cli("log", "--json").json) < 7:
        assert run_cli("note", "a note").code == 0
    assert run_cli("checkpoint").code == 0
    db = ledger_dir / ".logbook" / "ledger.db"
    _damage(db, sql)
    r = run_cli("verify", "--json")
    assert r.code == 1, (r.code, r.err)
    texts = [f["message"] for f in r.json["findings"]]
    what = column.split(" of ")[0]
    assert any(what in t and "stored as SQLite blob" in t for t in texts), texts
    r = run_cli("verify")
    assert r.code == 1 and "stored as SQLite blob" in r.out + r.err
    for args in commands:
        r = run_cli(*args)
        assert r.code == 1, (args, r.code, r.err)
        assert f"the {column} is stored as SQLite blob" in r.err, (args, r.err)
        assert len(r.err.strip().splitlines()) == 1, r.err
    assert not (ledger_dir / "x.jsonl").exists()
    # checked in full (no checked copy), the analysis refuses it too; carried on from this
    # machine's copy it reads the copy's digests and never that column
    # (tests/verify/test_tamper_resumed.py)
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    for args in (("audit",), ("brief",), ("checkpoint",)):
        assert run_cli(*args).code == 1, args


def test_3_an_eval_member_larger_than_the_input_limit_is_refused_before_inflating(
        ledger_dir: Path, tmp_path: Path) -> None:
    """A 400 MiB header.json in a small .eval: under the old 1 GiB member limit it was
    inflated whole (MemoryError); LOGBOOK_MAX_INPUT_BYTES bounds each member too."""
    import zlib

    from builders import write_eval
    from test_hostile_env import limited
    from test_ingest_hostile import eval_members

    r = run_cli("plan", str(write_json(tmp_path / "arith.json",
                                       plan_body("arith", arms=("a", "b")))))
    assert r.code == 0, r.err
    import zstandard

    # valid JSON of 400 MiB ({"eval": "xxx…"}), compressed without holding it
    size, head, tail = 400 << 20, b'{"eval": "', b'"}'
    filler, c, crc, parts = b"x" * (1 << 24), zstandard.ZstdCompressor(level=1).compressobj(), 0, []
    pieces = [head] + [filler] * ((size - len(head) - len(tail)) // len(filler))
    pieces.append(b"x" * (size - len(head) - len(tail) - len(filler) * (len(pieces) - 1)))
    for piece in [*pieces, tail]:
        parts.append(c.compress(piece))
        crc = zlib.crc32(piece, crc)
    packed = b"".join([*parts, c.flush()])
    members = eval_members()
    bomb = write_eval(tmp_path / "bomb.eval", members | {"header.json": b"{}"},
                      packed={"header.json": packed}, declared={"header.json": (crc, size)})
    assert bomb.stat().st_size < 1 << 20
    before = run_cli("log", "--json").json
    # through the CLI (inspect_ai's reader, after logbook's pre-check), under a 1 GiB address
    # space: a reader that inflated the member would fail, not refuse
    r = limited("append", "--from", "inspect", str(bomb), "--plan", "arith", "--arm", "a",
                cwd=ledger_dir)
    assert r.code == 2, (r.code, r.err[-2000:])
    assert str(bomb) in r.err and "member header.json" in r.err, r.err
    assert "LOGBOOK_MAX_INPUT_BYTES" in r.err and len(r.err.strip().splitlines()) == 1
    assert run_cli("log", "--json").json == before
    # logbook's own reader (used when inspect_ai is not installed) refuses it the same way
    from logbook.errors import InputError
    from logbook.ingest.inspect_reader import read_log

    with pytest.raises(InputError, match=r"member header\.json.*LOGBOOK_MAX_INPUT_BYTES"):
        read_log(bomb, reader="zstd")


# a harness run through a shell: it echoes its secret to its output, its items and its log
SHELL_SECRET = "SECRET/VAL+UE123"
SHELL_ECHO = """
import os, sys
key = sys.argv[sys.argv.index("--api-key") + 1]
print("connecting with key", key, "db", os.environ.get("DB_PASS"), file=sys.stderr)
open("items.jsonl", "w").write('{"id": "1", "score": null, "error": "refused key %s"}\\n' % key)
open("server.log", "w").write("server log: auth with " + key + "\\n")
"""


def _kept_bytes(ledger_dir: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in (ledger_dir / ".logbook").rglob("*") if p.is_file()]


def test_4a_secrets_inside_a_shell_string_and_password_flags_are_taken_out(
        ledger_dir: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    (ledger_dir / "ev.py").write_text(SHELL_ECHO)
    shell = (f'DB_PASS=dbSECRET99 {sys.executable} ev.py --api-key "{SHELL_SECRET}" '
             "--db-pass pwSECRET77 --password hunter2hunter2")
    r = subprocess.run([sys.executable, "-m", "logbook", "run", "--outcomes", "items.jsonl",
                        "--log", "server.log", "--note", f"key {SHELL_SECRET}", "--",
                        "sh", "-c", shell],
                       cwd=ledger_dir, capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stderr
    digest = r.stderr.split("appended run ")[1].split()[1]
    body = run_cli("show", digest, "--json").json["entry"]["body"]
    command = body["apparatus"]["captured"]["command"]
    assert command[:2] == ["sh", "-c"]
    assert command[2] == (f'DB_PASS=[redacted] {sys.executable} ev.py --api-key "[redacted]" '
                          "--db-pass [redacted] --password [redacted]"), command
    assert body["outcomes"]["error"] == ["refused key [redacted]"]
    assert body["note"] == "key [redacted]"
    assert all("[redacted]" in ref["excerpt"] for ref in body["logs"]), body["logs"]
    for secret in (SHELL_SECRET, "dbSECRET99", "pwSECRET77", "hunter2hunter2"):
        for args in (("export",), ("log", "--json")):
            out = run_cli(*args)
            assert out.code == 0 and secret not in out.out + out.err, (secret, args)
        for p, data in _kept_bytes(ledger_dir):
            assert secret.encode() not in data, (secret, p)
    # curl's USER:PASSWORD, and variables named *PASS*, *PWD*
    from logbook.capture.argv import argv_redaction
    from logbook.capture.redact import is_secret_name

    assert argv_redaction(["curl", "-u", "bob:SECRETpw42", "https://x"]) == (
        ["curl", "-u", "bob:[redacted]", "https://x"], ["SECRETpw42"])
    assert argv_redaction(["sh", "-c", "curl -u bob:SECRETpw42 https://x"])[0][2] == (
        "curl -u bob:[redacted] https://x")
    assert argv_redaction(["env", "MY_SERVICE_PASS=abcdefgh12", "python", "x"])[0][1] == (
        "MY_SERVICE_PASS=[redacted]")
    for name in ("DB_PASS", "MY_SERVICE_PASS", "PASSWD", "DB_PWD", "--db-pass", "PASSPHRASE",
                 "SMTP_PASS", "DB_PASS_PROD"):
        assert is_secret_name(name), name
    # the working folder, pass@k and other words are not secrets
    for name in ("PWD", "OLDPWD", "pass_at_k", "pass@1", "--pass-k", "compass", "bypass",
                 "passthrough", "pass_rate", "--pass-threshold", "n_pass", "passes"):
        assert not is_secret_name(name), name
    assert argv_redaction(["docker", "run", "-u", "1000:1000", "python", "-u", "x.py"])[1] == []


def test_4b_retract_amend_and_claim_texts_are_redacted_like_a_note(
        ledger_dir: Path, tmp_path: Path) -> None:
    key = "sk-proj-FAKEfakeFAKE0123456789abcdefFAKE"
    r = run_cli("plan", str(write_json(tmp_path / "plan.json", plan_body("p4"))), "--json")
    assert r.code == 0, r.err
    plan = r.json["digest"]
    r = run_cli("note", "a note to retract", "--json")
    note = r.json["digest"]
    r = run_cli("retract", note, "--reason", f"leaked {key}", "--category", "other",
                "--correction", "see https://bob:hunter2@example.com/x", "--json")
    assert r.code == 0, r.err
    body = r.json["entry"]["body"]
    assert body["reason"] == "leaked [redacted]"
    assert body["correction"] == "see https://[redacted]@example.com/x"
    assert "2 secret-looking value(s) in the retraction" in r.err
    r = run_cli("amend", plan, "--set", "title=new", "--reason", f"token {key}", "--json")
    assert r.code == 0, r.err
    assert r.json["entry"]["body"]["reason"] == "token [redacted]"
    assert "replaced by [redacted]" in r.err
    for args in (("export",), ("log", "--json")):
        assert key not in run_cli(*args).out and "hunter2" not in run_cli(*args).out
    for p, data in _kept_bytes(ledger_dir):
        assert key.encode() not in data and b"hunter2" not in data, p


def test_4b_a_claim_statement_is_redacted_like_a_note(ledger_dir: Path, tmp_path: Path) -> None:
    from builders import draft, run_body

    key = "ghp_FAKEfakeFAKEfake0123456789abcdef"
    r = run_cli("plan", str(write_json(tmp_path / "plan.json",
                                       plan_body("p5", runs_per_arm=1))), "--json")
    assert r.code == 0, r.err
    for arm, seed in (("f16", 1), ("q8", 2)):
        r = run_cli("append", str(write_json(tmp_path / f"{arm}.json",
                                             draft("run", run_body("p5", arm, seed=seed)))))
        assert r.code == 0, r.err
    r = run_cli("claim", "p5", "--arm", "f16", "--statement", f"f16 scores well ({key})",
                "--json")
    assert r.code == 0, r.err
    assert r.json["entry"]["body"]["statement"] == "f16 scores well ([redacted])"
    assert "replaced by [redacted]" in r.err
    for p, data in _kept_bytes(ledger_dir):
        assert key.encode() not in data, p


def test_4c_redaction_replaces_the_secret_part_never_a_whole_path(ledger_dir: Path) -> None:
    folder = "ck/run-7f3kQp9ZxW2mLs8vB4nR6tY1uJ0hGd5e/items.jsonl"
    rev = "0123456789abcdef0123456789abcdef01234567"
    kept = ["https://wandb.ai/team/proj/runs/AbCdEf123456",
            f"models--org--m/snapshots/{rev}/config.json", f"hf.co/org/m@{rev}",
            f"https://github.com/org/repo/commit/{rev}"]
    r = run_cli("note", f"read {folder}; " + "; ".join(kept), "--json")
    assert r.code == 0, r.err
    text = r.json["entry"]["body"]["text"]
    # the run-id folder is random enough to be a secret: only it goes, the path stays
    assert text == "read ck/[redacted]/items.jsonl; " + "; ".join(kept), text
    # a bare 40-digit hex word (a GitHub OAuth token has that shape) still goes
    r = run_cli("note", f"token {rev}", "--json")
    assert r.json["entry"]["body"]["text"] == "token [redacted]"


def test_5_demo_dir_that_is_a_file_or_a_fifo_is_refused_in_one_sentence(
        tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("keep me\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    for target, word in ((afile, f"--dir {afile} is not a folder"),
                         (afile / "sub", f"{afile} is not a folder"),
                         (afile / "sub" / "deeper", f"{afile} is not a folder"),
                         (fifo, f"--dir {fifo} is not a folder"),
                         (dangling, f"--dir {dangling} is not a folder")):
        before = _folder_listing(tmp_path)
        r = run_cli("demo", "--dir", str(target))
        assert r.code == 2, (target, r.code, r.err)
        assert word in r.err and len(r.err.strip().splitlines()) == 1, r.err
        assert _folder_listing(tmp_path) == before
    assert afile.read_text() == "keep me\n"
    # a folder to be created still is
    r = run_cli("demo", "--dir", str(tmp_path / "new" / "demo"))
    assert r.code == 0, r.err
    assert (tmp_path / "new" / "demo" / ".logbook" / "ledger.db").is_file()


def test_6_verify_reads_an_export_from_a_fifo_or_pipe(ledger_dir: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys
    import threading

    assert run_cli("note", "one").code == 0
    export = run_cli("export").out.encode()
    fifo = tmp_path / "export.fifo"
    os.mkfifo(fifo)

    def feed(data: bytes = export) -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    r = run_cli("verify", str(fifo))
    writer.join(10)
    assert r.code == 0, r.err
    assert r.out.startswith("verified "), r.out
    # as a shell gives it: a pipe under /dev/fd, from process substitution
    (tmp_path / "e.jsonl").write_bytes(export)
    p = subprocess.run(["bash", "-c", f'"{sys.executable}" -m logbook verify <(cat e.jsonl)'],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    assert "verified" in p.stdout
    # stdin as -
    assert run_cli("verify", "-", stdin=export).code == 0
    # a damaged export through a FIFO is a finding, not bad input
    writer = threading.Thread(target=feed, args=(export.replace(b"one", b"two"),))
    writer.start()
    r = run_cli("verify", str(fifo))
    writer.join(10)
    assert r.code == 1, r.err
    # a FIFO nobody writes is refused after the read timeout; true sentences otherwise
    monkeypatch.setenv("LOGBOOK_READ_TIMEOUT", "0.3")
    r = run_cli("verify", str(fifo))
    assert r.code == 2 and "sent nothing" in r.err and str(fifo) in r.err, r.err
    for target, word in ((tmp_path / "missing.jsonl", "does not exist"),
                         (tmp_path, "is a directory")):
        r = run_cli("verify", str(target))
        assert r.code == 2 and f"FILE {target} {word}" in r.err, r.err


def test_7_a_key_folder_others_can_write_never_signs_and_init_ignores_the_umask(
        tmp_path: Path) -> None:
    import stat

    work = tmp_path / "work"
    old = os.umask(0)
    try:
        r = run_cli("init", str(work), "--name", "umask-000", "--json")
        assert r.code == 0, r.err
        # a run whose output is kept as a blob
        items = work / "items.jsonl"
        r2 = run_cli("run", "--outcomes", str(items), "--", "sh", "-c",
                     f"echo output under umask 000; echo '{{\"id\": \"1\", \"score\": 1}}' "
                     f"> {items}")
        assert r2.code == 0, r2.err
    finally:
        os.umask(old)
    folder = work / ".logbook"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert not stat.S_IMODE((folder / "ledger.db").stat().st_mode) & 0o022
    kept = list(folder.rglob("*"))
    assert any(p.parent.name == "blobs" for p in kept), kept
    for p in kept:
        assert not stat.S_IMODE(p.stat().st_mode) & 0o022, p
    key = Path(r.json["key"])
    keys = key.parent
    head = len(run_cli("log", "--json").json)
    keys.chmod(0o777)  # the key file itself stays 0600
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    for args in (("note", "never signed"), ("checkpoint",),
                 ("keys", "new", "--out", str(keys / "k2.key"))):
        r = run_cli(*args)
        assert r.code == 3, (args, r.code, r.err)
        assert f"chmod 700 {keys}" in r.err and "0777" in r.err, r.err
        assert len(r.err.strip().splitlines()) == 1, r.err
    assert len(run_cli("log", "--json").json) == head
    assert run_cli("keys", "export").code == 0  # the public half needs no private folder
    # a key named by LOGBOOK_KEY in a folder others can write (a sticky one too)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "my.key").write_bytes(key.read_bytes())
    (shared / "my.key").chmod(0o600)
    shared.chmod(0o1777)
    os.environ["LOGBOOK_KEY"] = str(shared / "my.key")
    try:
        r = run_cli("note", "never signed")
        assert r.code == 3 and f"chmod 700 {shared}" in r.err, r.err
        # a new key is never written into such a folder either
        os.environ["LOGBOOK_KEY"] = str(shared / "new.key")
        (tmp_path / "other").mkdir()
        r = run_cli("init", str(tmp_path / "other"), "--name", "x")
        assert r.code == 3 and f"chmod 700 {shared}" in r.err, r.err
        assert not (shared / "new.key").exists()
        assert not (tmp_path / "other" / ".logbook").exists()
    finally:
        del os.environ["LOGBOOK_KEY"]
    keys.chmod(0o700)  # the fix the sentence gives
    assert run_cli("note", "signed again").code == 0
