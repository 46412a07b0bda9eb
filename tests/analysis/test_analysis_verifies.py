"""Every analysis verifies what it reads (issue 14, item 1).

`report`, `compare`, `audit`, `brief` and `claim check` on a ledger whose bytes or derived rows
were altered below logbook: each exits 1, says `this ledger does not verify: ...` on stderr and
prints nothing on stdout (no figure computed from bad bytes). The attacks cover each part of
the check: a digest recomputed from the stored bytes, the chain, the signature of an entry
after the latest checkpoint, the root of a checkpoint that vouches for older entries, an entry
slipped in without a key beneath an honest one, and a derived outcomes row.

These attack the check made in full, which every analysis makes when this machine keeps no
checked copy (LOGBOOK_STATE_DIR=off, set here) and the first time it sees a ledger;
tests/verify/test_tamper_resumed.py attacks the check carried on from the copy.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import prebuilt
import pytest
import rfc8785
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import CliResult, run_cli

# the module's ledger is initialised once and copied into each test (tests/prebuilt.py)
initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir

SLUG = "verified-plan"


@pytest.fixture(autouse=True)
def _in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
BANNER = "this ledger does not verify: "


def ok(*args: str) -> CliResult:
    r = run_cli(*args)
    assert r.code == 0, (args, r.code, r.out, r.err)
    return r


def build(work: Path, checkpoint: bool, late: bool = True) -> str:
    """Plan, 3 runs per arm, a claim; optionally a checkpoint; then (``late``) one more run.
    Returns the claim's digest."""
    ok("plan", str(write_json(work / "plan.json", plan_body(SLUG, runs_per_arm=3,
                                                             n_items=40))))
    runs = [draft("run", run_body(SLUG, ("f16", "q8")[i % 2], n_items=40, seed=i))
            for i in range(6)]
    ok("append", str(write_jsonl(work / "runs.jsonl", runs)), "--jsonl")
    claim = ok("claim", SLUG, "--arm", "f16", "--statement", "f16 scores about 70",
               "--json").json["digest"]
    if checkpoint:
        ok("checkpoint", "--out", str(work / "cp.txt"))
    if late:
        ok("append", str(write_jsonl(work / "late.jsonl", [
            draft("run", run_body(SLUG, "q8", n_items=40, seed=99))])), "--jsonl")
    return claim


@contextmanager
def connect(work: Path) -> Iterator[sqlite3.Connection]:
    """The attacker's raw access to the file (the append-only triggers dropped)."""
    conn = sqlite3.connect(work / ".logbook" / "ledger.db", isolation_level=None)
    try:
        conn.execute("DROP TRIGGER IF EXISTS entries_no_update")
        conn.execute("DROP TRIGGER IF EXISTS entries_no_delete")
        yield conn
    finally:
        conn.close()


def run_seqs(conn: sqlite3.Connection) -> list[int]:
    return [r[0] for r in conn.execute("SELECT seq FROM entry_index WHERE kind = 'run' "
                                       "ORDER BY seq")]


def edit_score(conn: sqlite3.Connection, seq: int, new_digest: bool) -> None:
    """Raise one item's score in run `seq`'s bytes (canonical again afterwards); with
    `new_digest`, store the new digest too, so that only the chain or a signature tells."""
    (raw,) = conn.execute("SELECT entry FROM entries WHERE seq = ?", (seq,)).fetchone()
    env = orjson.loads(raw)
    scores = env["body"]["outcomes"]["score"]
    scores[scores.index(0.0)] = 1.0
    new = rfc8785.dumps(env)
    conn.execute("UPDATE entries SET entry = ? WHERE seq = ?", (new, seq))
    if new_digest:
        conn.execute("UPDATE entries SET digest = ? WHERE seq = ?",
                     (hashlib.sha256(new).hexdigest(), seq))


def bytes_only(work: Path) -> None:
    with connect(work) as conn:
        edit_score(conn, run_seqs(conn)[0], new_digest=False)


def bytes_digest_and_index(work: Path) -> None:
    # the last run: no later entry's prev names it, so only its signature can tell
    with connect(work) as conn:
        edit_score(conn, run_seqs(conn)[-1], new_digest=True)
    ok("reindex")


def rechained_to_the_head(work: Path, which: int = 0) -> None:
    # a run edited and every later entry's prev (and digest) rewritten to match
    with connect(work) as conn:
        first = run_seqs(conn)[which]
        edit_score(conn, first, new_digest=True)
        rows = conn.execute("SELECT seq, entry, digest FROM entries WHERE seq >= ? ORDER BY "
                            "seq", (first,)).fetchall()
        prev = rows[0][2]
        for seq, raw, _ in rows[1:]:
            env = orjson.loads(raw)
            env["prev"] = prev
            new = rfc8785.dumps(env)
            prev = hashlib.sha256(new).hexdigest()
            conn.execute("UPDATE entries SET entry = ?, digest = ? WHERE seq = ?",
                         (new, prev, seq))
    ok("reindex")


def slipped_in_without_a_key(work: Path) -> None:
    # an attacker with the file but no key adds a run (signed by a key of their own), the
    # derived rows follow; then the owner appends on top of it, signing over its digest
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    attacker = Ed25519PrivateKey.generate()
    public = attacker.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    with connect(work) as conn:
        seq, raw, digest = conn.execute("SELECT seq, entry, digest FROM entries ORDER BY seq "
                                        "DESC LIMIT 1").fetchone()
        env = orjson.loads(raw)
        env.update(seq=seq + 1, prev=digest, signer=hashlib.sha256(public).hexdigest())
        env["body"]["outcomes"]["score"] = [1.0] * 40
        new = rfc8785.dumps(env)
        d = hashlib.sha256(new).digest()
        sig = base64.b64encode(attacker.sign(b"logbook.entry.v1\n" + d)).decode()
        conn.execute("INSERT INTO entries (seq, digest, entry, signature) VALUES (?,?,?,?)",
                     (seq + 1, d.hex(), new, sig))
    ok("reindex")
    ok("note", "the owner appends on top, unaware")


def outcomes_row(work: Path) -> None:
    with connect(work) as conn:
        seq = run_seqs(conn)[0]
        conn.execute("UPDATE outcomes SET total = total + 1 WHERE seq = ?", (seq,))


ATTACKS: dict[str, Callable[[Path], None]] = {
    "entry bytes edited": bytes_only,
    "last run edited, digest and index made to match": bytes_digest_and_index,
    "early run edited, chain rewritten to the head": rechained_to_the_head,
    "run slipped in without a key, honest append on top": slipped_in_without_a_key,
    "derived outcomes row edited": outcomes_row,
}


def analyses(claim: str) -> list[list[str]]:
    return [["report", SLUG], ["report", SLUG, "--json"],
            ["compare", f"{SLUG}:f16", f"{SLUG}:q8"], ["audit"], ["audit", "--json"],
            ["brief"], ["brief", "--json"], ["claim", "check", claim]]


@pytest.mark.parametrize("checkpoint", [False, True], ids=["no checkpoint", "checkpoint"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_analysis_refuses_a_ledger_that_does_not_verify(attack: str, checkpoint: bool,
                                                        ledger_dir: Path) -> None:
    claim = build(ledger_dir, checkpoint)
    for args in analyses(claim):  # the honest ledger: every analysis prints
        r = ok(*args)
        assert r.out.strip()
    ATTACKS[attack](ledger_dir)
    assert run_cli("verify").code == 1
    for args in analyses(claim):
        r = run_cli(*args)
        assert r.code == 1, (args, r.code, r.out, r.err)
        assert BANNER in r.err and r.err.count("\n") == 1, (args, r.err)
        assert r.out == "", (args, r.out)  # no figure at all
    r = run_cli("checkpoint")
    assert r.code == 1 and BANNER in r.err  # nothing unverified is ever signed


def test_a_checkpoint_vouches_only_for_the_bytes_it_signed(ledger_dir: Path) -> None:
    # a checkpoint at the head: the analysis leaves the signatures below it to the checkpoint.
    # A run no claim cites edited and the chain rewritten to the head (digests and derived
    # rows to match) leaves only the checkpoint's root to tell, and it does
    build(ledger_dir, checkpoint=True, late=False)
    # only the genesis entry's signature is checked one by one (it names the keys)
    assert ok("brief", "--json").json["integrity"]["verified"]["signatures_checked"] == 1
    rechained_to_the_head(ledger_dir, which=-1)  # the last q8 run; the claim cites f16's
    r = run_cli("report", SLUG)
    assert r.code == 1 and r.out == ""
    assert BANNER in r.err and "stored checkpoint 1" in r.err and "rewritten" in r.err, r.err
    # without the checkpoint kept beside it, every signature is checked again
    with connect(ledger_dir) as conn:
        conn.execute("DELETE FROM checkpoints")
    r = run_cli("report", SLUG)
    assert r.code == 1 and r.out == "" and "signature does not verify" in r.err, r.err


def test_brief_says_what_it_checked(ledger_dir: Path) -> None:
    build(ledger_dir, checkpoint=True)
    size = len(ok("log", "--json").json)
    integrity = ok("brief", "--json").json["integrity"]
    checked = integrity["verified"]
    assert checked["verified"] is True and checked["entries"] == size
    assert checked["vouched_by_checkpoint"] == size - 1  # one run came after the checkpoint
    assert "after the checkpoint at size" in checked["checks"]
    assert "verified now (digests, chain" in ok("brief").out
    # a forged row in the old table of verify results changes nothing
    with connect(ledger_dir) as conn:
        conn.execute("INSERT INTO verifications (size, ok, findings, at, trusted) VALUES "
                     "(1, 1, 0, '2030-01-01T00:00:00Z', NULL)")
    assert ok("brief", "--json").json["integrity"]["verified"] == checked


def test_verify_writes_nothing(ledger_dir: Path) -> None:
    build(ledger_dir, checkpoint=False)
    db = ledger_dir / ".logbook" / "ledger.db"
    before = db.read_bytes()
    ok("verify")
    ok("verify", "--json")
    assert db.read_bytes() == before
    wal = Path(f"{db}-wal")  # SQLite may leave an empty log beside a read-only reader
    assert not wal.exists() or wal.stat().st_size == 0


READER = """
import sys
import cryptography.hazmat.primitives.asymmetric.ed25519 as ed

def refuse(*a, **k):
    raise AssertionError("a reading command used a private key")

ed.Ed25519PrivateKey.generate = refuse
ed.Ed25519PrivateKey.from_private_bytes = refuse
from logbook.cli.main import run
args = sys.argv[1:]
assert run(args) == 0, args
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy', 'pandas'))
print('HEAVY:' + ' '.join(heavy))
"""


def test_analysis_needs_no_private_key_and_light_commands_stay_light(ledger_dir: Path) -> None:
    claim = build(ledger_dir, checkpoint=True)
    env = {**os.environ, "LOGBOOK_KEY": str(ledger_dir / "no-such.key")}
    for args in [*analyses(claim), ["verify"], ["log"]]:
        r = subprocess.run([sys.executable, "-c", READER, *args], cwd=ledger_dir, env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (args, r.stderr[-2000:])
        heavy = r.stdout.rsplit("HEAVY:", 1)[1].strip()
        if args[0] in ("brief", "verify", "log"):  # none of these imported numpy before
            assert heavy == "", (args, heavy)


def test_brief_suggests_a_checkpoint_when_many_signatures_were_checked(
        ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import logbook.analysis.brief as brief

    build(ledger_dir, checkpoint=False)
    monkeypatch.setattr(brief, "SLOW_SIGNATURES", 5)  # the real threshold is 10,000
    next_steps = ok("brief", "--json").json["next"]
    assert any(s.startswith("run `logbook checkpoint`: ") for s in next_steps), next_steps
    ok("checkpoint")
    next_steps = ok("brief", "--json").json["next"]
    assert not any("checkpoint" in s for s in next_steps), next_steps
