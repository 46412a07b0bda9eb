"""Hostile files, full disks and weak keys (issue 16): every path keeps the exit-code contract.

One test per numbered finding, through the command line as a user would meet it. Device nodes,
FIFOs, symlinks and small file systems are made by the test inside its own folder (never the
machine's own /dev files); tests that need root skip with a reason when not root, which CI
(run as root) counts as a failure. Each ends in the documented exit code with one sentence on
stderr, never 70, and the ledger verifies afterwards with every acknowledged entry present.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785
from builders import draft, plan_body, run_body, write_json
from conftest import CliResult, run_cli

pytestmark = pytest.mark.long  # a minute or more: scheduled first (conftest.py)

SLUG = "kv-q8-vs-f16"


def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: makes device nodes and mounts small file systems")


def one_sentence(r: CliResult, code: int, *words: str) -> None:
    """Exit ``code`` with one line on stderr, naming what it should (never a traceback)."""
    assert r.code == code, (r.code, r.err)
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("logbook: "), r.err
    assert "Traceback" not in r.err
    for word in words:
        assert word in lines[0], (word, lines[0])


def head() -> tuple[int, str]:
    """The last entry as stored (the export takes a ledger as it is, damaged or not: `log`
    reads only one that verifies)."""
    r = run_cli("export")
    assert r.code == 0, r.err
    last = orjson.loads(r.out.splitlines()[-1])
    return last["seq"], last["digest"]


def verified(*digests: str) -> int:
    """The ledger verifies and holds every acknowledged entry; returns its size."""
    r = run_cli("verify", "--json")
    assert r.code == 0, r.out + r.err
    for d in digests:
        got = run_cli("show", d, "--json")
        assert got.code == 0 and got.json["digest"] == d, got.err
    return int(r.json["entries"])


def device(path: Path, minor: int) -> Path:
    """A character device node like the machine's null (3), zero (5) or full (7) device."""
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, minor))
    return path


def populated(tmp_path: Path) -> list[str]:
    """A plan and a run in the test's ledger; their digests."""
    r = run_cli("plan", str(write_json(tmp_path / "plan.json", plan_body())), "--json")
    assert r.code == 0, r.err
    digests = [r.json["digest"]]
    r = run_cli("append", str(write_json(tmp_path / "run.json",
                                         draft("run", run_body(SLUG, "f16")))), "--json")
    assert r.code == 0, r.err
    return [*digests, r.json["digest"]]


# --- 1. --out writes into what it names, never replaces it ----------------------------------


def test_1_out_writes_through_devices_and_fifos_and_follows_symlinks(ledger_dir: Path,
                                                                    tmp_path: Path) -> None:
    needs_root()
    acked = populated(tmp_path)
    null, full = device(tmp_path / "nd", 3), device(tmp_path / "full", 7)
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    target, link = tmp_path / "t", tmp_path / "l"
    link.symlink_to(target)

    r = run_cli("export", "--out", str(null))
    assert r.code == 0, r.err
    assert stat.S_ISCHR(null.lstat().st_mode)  # still the device, not a regular file

    # a FIFO nobody reads is refused at once (never waited on, never replaced)
    one_sentence(run_cli("export", "--out", str(fifo)), 2, str(fifo), "FIFO")
    one_sentence(run_cli("report", SLUG, "--html", str(fifo)), 2, str(fifo), "FIFO")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    # a FIFO somebody reads gets the export, written through (it fits in the pipe's buffer)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        r = run_cli("export", "--out", str(fifo))
        assert r.code == 0, r.err
        got = os.read(fd, 1 << 20)
    finally:
        os.close(fd)
    assert len(got.splitlines()) == 3 and stat.S_ISFIFO(fifo.lstat().st_mode)

    # a symlink is followed: the file it points to gets the key, the link stays a link
    r = run_cli("keys", "export", "--out", str(link))
    assert r.code == 0, r.err
    assert link.is_symlink() and target.read_text().startswith("logbook-ed25519-public-key-v1")
    r = run_cli("export", "--out", str(link))
    assert r.code == 0, r.err
    assert link.is_symlink() and len(target.read_text().splitlines()) == 3

    # a device that refuses the bytes: the checkpoint is not kept, and no success is printed
    r = run_cli("checkpoint", "--out", str(full))
    one_sentence(r, 3, str(full), "No space left")
    assert run_cli("log", "--checkpoints", "--json").json == []
    assert stat.S_ISCHR(full.lstat().st_mode)
    r = run_cli("checkpoint", "--out", str(null))  # the null device takes it: kept
    assert r.code == 0, r.err
    assert len(run_cli("log", "--checkpoints", "--json").json) == 1
    assert stat.S_ISCHR(null.lstat().st_mode)
    assert verified(*acked) == 3


# --- 6. weak public keys are refused where they enter, and verify nothing -------------------

IDENTITY = bytes([1]) + bytes(31)  # the identity point: 8 * it = it, and any S = 0 forges
NON_CANONICAL = bytes([0xEF]) + b"\xff" * 30 + b"\x7f"  # y = p + 2, which no encoder writes


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_6_small_order_keys_are_refused_and_forgeries_under_them_fail(ledger_dir: Path,
                                                                      tmp_path: Path) -> None:
    from test_tamper import Attacker, Row, read_private, reindex, sign_envelope

    acked = populated(tmp_path)
    before = head()
    key_file = tmp_path / "weak.pub"
    key_file.write_text(f"logbook-ed25519-public-key-v1\n{_b64(IDENTITY)}\n")
    for weak, why in [(_b64(IDENTITY), "small order"), (_b64(NON_CANONICAL), "canonical"),
                      (str(key_file), "small order")]:
        r = run_cli("keys", "add", weak, "--name", "weak", "--reason", "test")
        one_sentence(r, 2, "PUBLIC", why)
    one_sentence(run_cli("verify", "--trust", str(key_file)), 2, str(key_file), "small order")
    from logbook.tlog.note import verifier_key

    weak_verifier = verifier_key("logbook/x", IDENTITY)  # the C2SP form --trust also takes
    one_sentence(run_cli("verify", "--trust", weak_verifier), 2, "--trust", "small order")
    assert head() == before

    # a ledger written by a logbook that took the identity key: the forgery fails to verify
    db = ledger_dir / ".logbook" / "ledger.db"
    owner = read_private(tmp_path / "home" / "config" / "logbook" / "keys" / "default.key")
    attacker = Attacker(db)
    last = attacker.rows()[-1]
    genesis = attacker.rows()[0].env
    added = sign_envelope({**last.env, "seq": last.seq + 1, "prev": last.digest,
                           "kind": "key", "body": {"action": "add", "name": "weak",
                                                   "public": _b64(IDENTITY),
                                                   "reason": "an old logbook took it"}}, owner)
    forged_env = {**genesis, "seq": added.seq + 1, "prev": added.digest, "kind": "note",
                  "signer": hashlib.sha256(IDENTITY).hexdigest(), "ts": last.env["ts"],
                  "body": {"text": "forged by anyone", "refs": []}}
    raw = rfc8785.dumps(forged_env)
    attacker.put(added)
    attacker.put(Row(added.seq + 1, hashlib.sha256(raw).hexdigest(), raw,
                     _b64(IDENTITY + bytes(32))))  # signature: R = identity, S = 0
    attacker.close()
    reindex(db)
    r = run_cli("verify", "--trust", owner_fingerprint(owner), "--strict", "--json")
    assert r.code == 1, r.out + r.err
    checks = {(f["check"], f["seq"]) for f in r.json["findings"]}
    assert ("key", added.seq) in checks  # the weak key is named where it was added
    assert any(seq == added.seq + 1 for _, seq in checks)  # and the forgery does not verify
    # `show` reads only a ledger that verifies; the auditor's export takes every entry as
    # stored: each one made before is still there
    exported = {orjson.loads(line)["digest"] for line in run_cli("export").out.splitlines()}
    assert set(acked) <= exported
    assert run_cli("show", acked[0]).code == 1  # nothing is shown from an unverified ledger


def test_6_the_small_order_encodings_are_libsodiums() -> None:
    """The computed list is libsodium's blocklist: 7 encodings, each with either sign bit."""
    from logbook.crypto.points import small_order_encodings

    ff = "ff" * 30
    listed = ["00" * 32, "01" + "00" * 31,
              "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
              "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
              f"ec{ff}7f", f"ed{ff}7f", f"ee{ff}7f"]
    both = {bytes.fromhex(h) for h in listed} | {
        bytes.fromhex(h)[:31] + bytes([bytes.fromhex(h)[31] | 0x80]) for h in listed}
    assert small_order_encodings() == both


def owner_fingerprint(key: Any) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return hashlib.sha256(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
                          ).hexdigest()


# --- 7. a corrupted tree row is never signed, proved or trusted ------------------------------


def test_7_checkpoint_prove_and_verify_never_trust_a_corrupted_tree(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    from test_tamper import read_private

    from logbook.tlog import merkle
    from logbook.tlog.checkpoint import Checkpoint, sign_checkpoint

    acked = populated(tmp_path)
    for i in range(7):  # 10 entries: a level-3 node (entries 0-7) exists
        r = run_cli("note", f"note {i}", "--json")
        assert r.code == 0, r.err
        acked.append(r.json["digest"])
    good = tmp_path / "good.checkpoint"
    assert run_cli("checkpoint", "--out", str(good)).code == 0
    db = ledger_dir / ".logbook" / "ledger.db"
    conn = sqlite3.connect(db)
    with conn:
        assert conn.execute("UPDATE tree SET hash = zeroblob(32) WHERE level = 3 AND idx = 0"
                            ).rowcount == 1
    conn.close()
    before = head()

    # carried on from this machine's checked copy, `checkpoint` finds the copy's root and the
    # stored tree's apart: one of them was damaged, so it checks in full, which reads the
    # stored tree and refuses its damage as below (a damaged copy would be signed over: the
    # full check's root, tests/analysis/test_checked_copy_damage.py)
    kept = tmp_path / "kept.checkpoint"
    one_sentence(run_cli("checkpoint", "--out", str(kept)), 1, "node (3, 0)", "reindex")
    assert not kept.exists()
    assert len(run_cli("log", "--checkpoints", "--json").json) == 1
    assert head() == before
    # checked in full (no copy), the stored tree is read, and its damage refused
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    one_sentence(run_cli("checkpoint"), 1, "node (3, 0)", "reindex")
    one_sentence(run_cli("checkpoint", "--out", str(tmp_path / "new.checkpoint")), 1,
                 "node (3, 0)")
    assert not (tmp_path / "new.checkpoint").exists()
    assert len(run_cli("log", "--checkpoints", "--json").json) == 1  # only the good one
    one_sentence(run_cli("prove", "@1", "--checkpoint", str(good)), 1, "node (3, 0)")
    one_sentence(run_cli("prove", "--consistency", str(good)), 1, "node (3, 0)")

    # a checkpoint signed over the corrupted tree (as before this fix) does not verify
    owner = read_private(tmp_path / "home" / "config" / "logbook" / "keys" / "default.key")
    raw_pub = owner.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    def stored(level: int, idx: int) -> bytes:  # what the old code read: the stored tree
        c = sqlite3.connect(db)
        try:
            if level == 0:  # `show` reads only a ledger that verifies: the stored digest
                return merkle.leaf_hash(bytes.fromhex(c.execute(
                    "SELECT digest FROM entries WHERE seq = ?", (idx,)).fetchone()[0]))
            return bytes(c.execute("SELECT hash FROM tree WHERE level = ? AND idx = ?",
                                   (level, idx)).fetchone()[0])
        finally:
            c.close()

    uuid = orjson.loads(run_cli("export").out.splitlines()[0])["entry"]["ledger"]
    wrong = merkle.root_from_nodes(before[0] + 1, stored)
    bad = tmp_path / "bad.checkpoint"
    bad.write_text(sign_checkpoint(Checkpoint(f"logbook/{uuid}", before[0] + 1, wrong),
                                   f"logbook/{uuid}", owner.sign, raw_pub))
    r = run_cli("verify", "--checkpoint", str(bad), "--checkpoint", str(good), "--json")
    assert r.code == 1, r.out + r.err
    by_path = {c["path"]: c["ok"] for c in r.json["checkpoints"]}
    assert by_path == {str(bad): False, str(good): True}
    assert head() == before
    assert run_cli("reindex").code == 0  # the fix the sentence names
    assert verified(*acked) == 10
    r = run_cli("verify", "--checkpoint", str(good), "--checkpoint", str(bad), "--json")
    assert r.code == 1 and [c["ok"] for c in r.json["checkpoints"]] == [True, False]


# --- 3. memory: every file named is read with a bound -----------------------------------------

MEMORY_LIMIT = 1 << 30  # address space for each command: far less than what it was asked to read


def limited(*args: str, cwd: Path, env: dict[str, str] | None = None) -> CliResult:
    """`logbook ARGS` in a subprocess whose address space the test limits (RLIMIT_AS)."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    p = subprocess.run([sys.executable, "-m", "logbook", *args], cwd=cwd,
                       env={**os.environ, **(env or {})}, preexec_fn=limit,
                       capture_output=True, text=True, timeout=300, check=False)
    return CliResult(p.returncode, p.stdout, p.stderr)


def zstd_zeros(size: int) -> bytes:
    """A zstd frame of ``size`` zero bytes, made without holding them."""
    import zstandard

    c = zstandard.ZstdCompressor(level=1).compressobj()
    chunk, parts = bytes(1 << 26), []
    for start in range(0, size, len(chunk)):
        parts.append(c.compress(chunk[: min(len(chunk), size - start)]))
    return b"".join([*parts, c.flush()])


def zip_bombs(tmp_path: Path) -> list[Path]:
    """A .eval whose sample member inflates to 3 GiB: once declared honestly in the zip
    directory, once declared as 2 bytes."""
    import zlib

    from builders import write_eval
    from test_ingest_hostile import eval_members

    members = eval_members()
    name = next(n for n in members if n.startswith("samples/"))
    size = 3 << 30
    bomb = zstd_zeros(size)
    crc, chunk = 0, bytes(1 << 26)
    for _ in range(size // len(chunk)):
        crc = zlib.crc32(chunk, crc)
    honest = write_eval(tmp_path / "honest.eval", members | {name: b"{}"}, packed={name: bomb},
                        declared={name: (crc, size)})
    lying = write_eval(tmp_path / "lying.eval", members | {name: b"{}"}, packed={name: bomb})
    assert honest.stat().st_size < 1 << 20 and lying.stat().st_size < 1 << 20
    return [honest, lying]


def test_3_files_named_are_read_with_a_bound_and_entries_are_capped(ledger_dir: Path,
                                                                     tmp_path: Path) -> None:
    needs_root()
    acked = populated(tmp_path)
    zero, fifo = device(tmp_path / "zero", 5), tmp_path / "fifo"
    os.mkfifo(fifo)
    cp = tmp_path / "c.checkpoint"
    assert run_cli("checkpoint", "--out", str(cp)).code == 0
    before = head()
    for args, word in [(("append", str(zero)), "too large"),
                       (("append", "--jsonl", str(zero)), "too large"),
                       (("plan", str(zero)), "not a plan"),
                       (("verify", "--checkpoint", str(zero)), "not a checkpoint"),
                       (("verify-proof", str(zero), "--checkpoint", str(cp)), "too large"),
                       (("append", "--from", "jsonl", str(zero)), "too large")]:
        one_sentence(limited(*args, cwd=ledger_dir), 2, str(zero), word)
    # an export whose one "line" never ends is refused, not read whole
    endless = tmp_path / "endless.jsonl"
    with open(endless, "wb") as fh:
        fh.truncate(40 << 20)  # sparse: 40 MiB of zero bytes, no line end
    one_sentence(limited("verify", str(endless), cwd=ledger_dir), 2, str(endless),
                 "line 1 is longer")
    # a FIFO that nobody writes is refused after the read timeout, never waited on for ever
    one_sentence(limited("append", str(fifo), cwd=ledger_dir,
                         env={"LOGBOOK_READ_TIMEOUT": "0.5"}), 2, str(fifo), "sent nothing")
    # a zip bomb never reaches inspect_ai's reader (nor logbook's)
    r = run_cli("plan", str(write_json(tmp_path / "arith.json",
                                       plan_body("arith", arms=("a", "b")))), "--json")
    assert r.code == 0, r.err
    acked.append(r.json["digest"])
    before = head()
    for bomb, word in zip(zip_bombs(tmp_path), ("more than the", "inflates to more"),
                          strict=True):
        r = limited("append", "--from", "inspect", str(bomb), "--plan", "arith", "--arm", "a",
                    cwd=ledger_dir)
        one_sentence(r, 2, str(bomb), word)
    # 500 levels of TOML in 1 KB
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 500 + "]" * 500 + "\n")
    one_sentence(run_cli("plan", str(deep)), 2, str(deep), "nest")
    # an entry larger than the cap: a 17 MiB note, as an argument and as a draft
    big = "x" * (17 << 20)
    one_sentence(run_cli("note", big), 2, "16 MiB")
    one_sentence(run_cli("append", str(write_json(tmp_path / "big.json", draft(
        "note", {"text": big, "refs": []})))), 2, "16 MiB")
    assert head() == before

    # under `run`, the run is never lost: the unreadable outcome or log is its reason or note
    out = tmp_path / "items.jsonl"
    r = limited("run", "--outcomes", str(zero), "--", "true", cwd=ledger_dir)
    # `true` exited 0 but its run is failed: logbook run says so with exit 1 (issue 13)
    assert r.code == 1 and "appended run" in r.err, r.err
    r = limited("run", "--outcomes", str(out), "--log", str(zero), "--", "python3", "-c",
                f"open({str(out)!r}, 'w').write('{{\"id\": \"1\", \"score\": 1}}\\n')",
                cwd=ledger_dir)
    assert r.code == 0 and "appended run" in r.err, r.err
    runs = run_cli("log", "--kind", "run", "-n", "2", "--json").json
    assert runs[0]["entry"]["body"]["status"] == "failed"
    assert "too large" in runs[0]["entry"]["body"]["reason"]
    assert runs[1]["entry"]["body"]["status"] == "completed"
    assert f"log file {zero} could not be read" in runs[1]["entry"]["body"]["note"]
    assert verified(*acked) == before[0] + 3


# --- 4. full disks: a run is never lost, and --out says so -------------------------------------


@contextlib.contextmanager
def small_fs(path: Path, size: str = "4m") -> Iterator[Path]:
    """A small tmpfs mounted at ``path`` for the test (unmounted whatever happens)."""
    import subprocess

    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                   check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder: Path) -> Path:
    """Fill the file system holding ``folder``; the filler file, to remove later."""
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(bytes(1 << 16))
                fh.flush()
        except OSError:
            pass
    return filler


FILL_AND_FAIL = """
import sys
print("x" * 200000)
with open(sys.argv[1], "w") as fh:
    fh.write('{"id": "1", "score": 1}\\n')
with open(sys.argv[2], "wb") as fh:
    try:
        while True:
            fh.write(bytes(1 << 16)); fh.flush()
    except OSError:
        pass
sys.exit(5)
"""


def test_4_a_full_disk_loses_no_run_and_out_says_so(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    needs_root()
    with small_fs(tmp_path / "m") as mnt, small_fs(tmp_path / "o", "1m") as outs:
        assert run_cli("init", str(mnt), "--name", "small").code == 0
        monkeypatch.setenv("LOGBOOK_DIR", str(mnt))
        acked = populated(tmp_path)
        outcomes = tmp_path / "items.jsonl"

        # --out on a full disk: exit 3, one sentence; no checkpoint kept, no file left
        filler = fill(outs)
        one_sentence(run_cli("export", "--out", str(outs / "x.jsonl")), 3, "No space left")
        one_sentence(run_cli("checkpoint", "--out", str(outs / "c.checkpoint")), 3,
                     "No space left")
        filler.unlink()
        assert list(outs.iterdir()) == []
        assert run_cli("log", "--checkpoints", "--json").json == []

        # the blobs cannot be kept: the run is appended all the same, saying so
        blobs = mnt / ".logbook" / "blobs"
        blobs.write_text("not a folder")
        r = run_cli("run", "--outcomes", str(outcomes), "--", sys.executable, "-c",
                    FILL_AND_FAIL.replace("fh.write(bytes", "break; fh.write(bytes"),
                    str(outcomes), str(tmp_path / "nofill"))
        assert r.code == 5 and "appended run" in r.err, r.err
        body = run_cli("show", f"@{head()[0]}", "--json").json["entry"]["body"]
        assert body["status"] == "failed" and "status 5" in body["reason"]
        assert "could not be kept" in body["reason"] and body["logs"][0]["name"] == "output"
        acked.append(run_cli("show", f"@{head()[0]}", "--json").json["digest"])
        blobs.unlink()

        # the disk fills during the run: nothing can be written, not even the spool, so the
        # record is on stderr, to be saved into the spool once there is room
        before = head()
        r = run_cli("run", "--outcomes", str(outcomes), "--", sys.executable, "-c",
                    FILL_AND_FAIL, str(outcomes), str(mnt / "filler"))
        assert r.code == 5, r.err
        sentence, *lines = r.err.splitlines()[-2:]
        assert "could not be appended" in sentence and "nor spooled" in sentence
        assert "logbook append --spool" in sentence
        (mnt / "filler").unlink()
        assert head() == before
        spooled = mnt / ".logbook" / "spool"
        assert not list(spooled.glob("*.json")) if spooled.is_dir() else True
        spooled.mkdir(exist_ok=True)
        (spooled / "saved.json").write_text("\n".join(lines) + "\n")
        r = run_cli("append", "--spool", "--json")
        assert r.code == 0, r.err
        body = r.json["entry"]["body"]
        assert body["status"] == "failed" and "status 5" in body["reason"]
        assert body["outcomes"]["id"] == ["1"]
        acked.append(r.json["digest"])
        assert verified(*acked) == before[0] + 2


# the command starts a writer that holds the ledger's lock until the test releases it (the
# file sys.argv[3] appears; at most 60 s), and exits 7 once the lock is held
HOLD_LOCK = """
import sqlite3, subprocess, sys, time
holder = subprocess.Popen([sys.executable, "-c",
    "import os, sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
    "c.execute('BEGIN IMMEDIATE'); open(sys.argv[2], 'w').close(); end = time.time() + 60\\n"
    "while not os.path.exists(sys.argv[3]) and time.time() < end: time.sleep(0.02)",
    sys.argv[1], sys.argv[2], sys.argv[3]], stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL)
while True:
    try:
        open(sys.argv[2]).close()
        break
    except FileNotFoundError:
        time.sleep(0.05)
sys.exit(7)
"""


def test_4_a_locked_ledger_spools_the_run(ledger_dir: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    acked = populated(tmp_path)
    before = head()
    db = ledger_dir / ".logbook" / "ledger.db"
    monkeypatch.setenv("LOGBOOK_LOCK_TIMEOUT", "0.5")
    flag, release = tmp_path / "locked", tmp_path / "release"
    r = run_cli("run", "--outcomes", str(tmp_path / "none.jsonl"), "--", sys.executable, "-c",
                HOLD_LOCK, str(db), str(flag), str(release))
    assert r.code == 7, r.err
    one_sentence(r, 7, "could not be appended", "locked", "spooled in",
                 "logbook append --spool")
    spooled = sorted((db.parent / "spool").glob("*.json"))
    assert len(spooled) == 1
    listed = run_cli("spool", "list", "--json")
    assert listed.code == 0, listed.err
    [row] = listed.json
    assert row["source"] == "run" and row["runs"] == 1 and "locked" in row["why"]
    assert row["output"] == f"the run of {Path(sys.executable).name}"
    kept = spooled[0].read_bytes()
    # still locked: the run cannot be appended yet, nothing changed, the run stays spooled
    locked = run_cli("append", "--spool")
    one_sentence(locked, 3, "locked")
    assert head() == before and spooled[0].exists()
    release.touch()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # until the lock holder is gone
        r = run_cli("append", "--spool", "--json")
        if r.code != 3:
            break
        time.sleep(0.2)
    assert r.code == 0, r.err
    assert r.json["entry"]["body"]["status"] == "failed"
    assert "status 7" in r.json["entry"]["body"]["reason"]
    assert not spooled[0].exists()
    # the spooled file back (a drain that died before removing it): appended once only
    spooled[0].write_bytes(kept)
    again = run_cli("append", "--spool")
    assert again.code == 0 and "already appended" in again.err, again.err
    assert not spooled[0].exists()
    assert verified(*acked, r.json["digest"]) == before[0] + 2


# --- 2. a secret on the command line is scrubbed wherever the command echoes it --------------

SECRET = "SECRETVALUE123"
ECHO = """
import sys
print(sys.argv)
print("connecting with key", sys.argv[-1], file=sys.stderr)
open(sys.argv[1], "w").write('{"id": "1", "score": null, "error": "refused key %s"}\\n'
                             % sys.argv[-1])
open(sys.argv[2], "w").write("server log: auth with " + sys.argv[-1] + "\\n")
"""


def test_2_values_redacted_from_the_command_line_are_scrubbed_everywhere(
        ledger_dir: Path, tmp_path: Path) -> None:
    import subprocess

    acked = populated(tmp_path)
    items, log = tmp_path / "items.jsonl", tmp_path / "server.log"
    # as a user runs it: the command's own terminal output is theirs and shows the value
    r = subprocess.run([sys.executable, "-m", "logbook", "run", "--outcomes", str(items),
                        "--log", str(log), "--note", f"run with {SECRET}", "--",
                        sys.executable, "-c", ECHO, str(items), str(log), "--api-key", SECRET],
                       cwd=ledger_dir, capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert "appended run" in r.stderr and SECRET not in r.stderr.splitlines()[-1]
    digest = r.stderr.split("appended run ")[1].split()[1]
    shown = run_cli("show", digest, "--json")
    assert shown.code == 0
    body = shown.json["entry"]["body"]
    assert body["apparatus"]["captured"]["command"][-2:] == ["--api-key", "[redacted]"]
    assert body["outcomes"]["error"] == ["refused key [redacted]"]
    assert body["note"] == "run with [redacted]"
    assert {ref["name"] for ref in body["logs"]} == {"output", "server.log"}
    assert all("[redacted]" in ref["excerpt"] for ref in body["logs"])
    # nothing logbook keeps or prints holds it: export, log, show, the database, the blobs
    for args in (("export",), ("log", "--json"), ("show", digest, "--json")):
        out = run_cli(*args)
        assert out.code == 0 and SECRET not in out.out + out.err, args
    kept = [p for p in (ledger_dir / ".logbook").rglob("*") if p.is_file()]
    assert any(p.parent.name == "blobs" for p in kept)
    for p in kept:
        assert SECRET.encode() not in p.read_bytes(), p
    assert verified(*acked, digest) == 4


# --- 9. redaction never mangles paths, log names or digests -----------------------------------

INSPECT_NAME = "2026-11-29T18-13-40-00-00_sums_AWmXtCZJkqs6wiwnaQaHoB.eval"
BROKEN_LOG = 'import sys; open(sys.argv[1], "wb").write(b"not a zip archive"); sys.exit(1)'


def test_9_redaction_keeps_inspect_log_paths_and_digests(ledger_dir: Path,
                                                         tmp_path: Path) -> None:
    import tempfile

    acked = populated(tmp_path)
    folder = tempfile.mkdtemp(dir=tmp_path)  # a temporary folder, random name and all
    log = Path(folder) / INSPECT_NAME
    r = run_cli("run", "--from", "inspect", str(log), "--", sys.executable, "-c", BROKEN_LOG,
                str(log))
    assert r.code == 1, r.err
    body = run_cli("show", f"@{head()[0]}", "--json").json["entry"]["body"]
    assert body["status"] == "failed"
    # the path an auditor needs, the log's random id included, is there whole
    assert f"outcomes not read: {log}: not a readable" in body["reason"], body["reason"]
    assert "[redacted]" not in body["reason"]
    acked.append(run_cli("show", f"@{head()[0]}", "--json").json["digest"])
    # digests and log names in a note are kept as written; a pasted key is not
    sha = hashlib.sha256(b"data").hexdigest()
    text = (f"checked {acked[0]} and sha256:{sha}, blob {sha}; log {folder}/{INSPECT_NAME}; "
            f"sha512 {hashlib.sha512(b'data').hexdigest()}")
    r = run_cli("note", text, "--json")
    assert r.code == 0 and r.json["entry"]["body"]["text"] == text, r.err
    acked.append(r.json["digest"])
    r = run_cli("note", "key sk-proj-FAKEfakeFAKE0123456789abcdefFAKE", "--json")
    assert r.code == 0 and r.json["entry"]["body"]["text"] == "key [redacted]"
    assert "replaced by [redacted]" in r.err
    assert verified(*acked, r.json["digest"]) == 6


# --- 8. key files: a private folder whatever the umask; a key others can read never signs ----


def test_8_keys_folder_is_private_and_a_readable_key_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    old = os.umask(0)
    try:
        r = run_cli("init", str(work), "--name", "umask-000", "--json")
    finally:
        os.umask(old)
    assert r.code == 0, r.err
    key = Path(r.json["key"])
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700  # keys/
    assert stat.S_IMODE(key.parent.parent.stat().st_mode) == 0o700  # logbook/, made with it
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    acked = [r.json["digest"]]
    r = run_cli("note", "signed while private", "--json")
    assert r.code == 0, r.err
    acked.append(r.json["digest"])
    before = head()

    key.chmod(0o644)
    for args in (("note", "never signed"), ("checkpoint",)):
        one_sentence(run_cli(*args), 3, str(key), "0644", f"chmod 600 {key}")
    # reading and exporting the public key need no private key to be private
    assert run_cli("keys", "export").code == 0
    assert head() == before and run_cli("log", "--checkpoints", "--json").json == []
    key.chmod(0o600)  # the fix the sentence gives
    r = run_cli("note", "signed again", "--json")
    assert r.code == 0, r.err
    assert verified(*acked, r.json["digest"]) == 3
