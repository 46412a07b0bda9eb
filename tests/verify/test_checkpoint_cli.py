"""Checkpoints and proofs through the command line (issue 4, DESIGN §4.2).

A real ledger is built through public commands; an attacker then edits the SQLite file
directly (cutting the tail, rewriting an old entry and re-signing everything after it with the
ledger's own private key, or cutting and appending different entries). The hash chain alone
cannot see any of this; `verify --checkpoint` must, and must say which it was.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shlex
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
import rfc8785
from builders import draft, plan_body, run_body, write_json
from conftest import CliResult, run_cli
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from prebuilt import Prebuilt, build_once, copy_into

DOCS = Path(__file__).resolve().parents[2] / "docs"


# --- building a ledger and attacking it -----------------------------------------------------


def ok(*args: str) -> CliResult:
    r = run_cli(*args)
    assert r.code == 0, (args, r.out, r.err)
    return r


def build(work: Path, notes: int = 8) -> None:
    """A plan, two runs and some notes, through the public commands."""
    plan = ok("plan", str(write_json(work / "plan.json", plan_body(runs_per_arm=1)))).out
    digest = plan.split()[1]
    for arm, seed in (("f16", 1), ("q8", 2)):
        ok("append", str(write_json(work / f"run-{arm}.json",
                                    draft("run", run_body(digest, arm, seed=seed)))))
    for i in range(notes):
        ok("note", f"note {i}")


def db(work: Path) -> Path:
    return work / ".logbook" / "ledger.db"


def size(work: Path) -> int:
    return len(run_cli("log", "--json").json)


def attacker(work: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db(work), isolation_level=None)
    conn.execute("DROP TRIGGER IF EXISTS entries_no_delete")
    conn.execute("DROP TRIGGER IF EXISTS entries_no_update")
    # the checkpoints kept in the file would give the attack away to a plain `verify` (it
    # recomputes each one), so the attacker removes them: only the published copy is left
    conn.execute("DELETE FROM checkpoints")
    return conn


def cut(work: Path, k: int) -> None:
    """Delete the last k entries and every derived row that came from them."""
    n = size(work)
    keep = n - k
    with attacker(work) as conn:
        conn.execute("BEGIN")
        for table in ("entries", "entry_index", "outcomes"):
            conn.execute(f"DELETE FROM {table} WHERE seq >= ?", (keep,))
        conn.execute("DELETE FROM signing_keys WHERE added_seq >= ?", (keep,))
        # a complete subtree node (level, idx) covers leaves [idx << level, (idx+1) << level)
        conn.execute("DELETE FROM tree WHERE ((idx + 1) << level) > ?", (keep,))
        conn.execute("COMMIT")


def private_key(home: Path) -> Ed25519PrivateKey:
    """The ledger owner's key, read from the key file the way an attacker would."""
    lines = (home / "config" / "logbook" / "keys" / "default.key").read_text().split()
    return Ed25519PrivateKey.from_private_bytes(base64.b64decode(lines[1]))


def rewrite(work: Path, home: Path, seq: int) -> None:
    """Change entry `seq`'s bytes; re-chain and re-sign every later entry with the real key."""
    key = private_key(home)
    with attacker(work) as conn:
        rows = conn.execute("SELECT seq, entry FROM entries WHERE seq >= ? ORDER BY seq",
                            (seq - 1,)).fetchall()
        prev = hashlib.sha256(rows[0][1]).hexdigest()
        conn.execute("BEGIN")
        for s, raw in rows[1:]:
            env = orjson.loads(raw)
            if s == seq:
                env["body"]["text"] = "a different note, written after the fact"
            env["prev"] = prev
            new = rfc8785.dumps(env)
            digest = hashlib.sha256(new).digest()
            sig = base64.b64encode(key.sign(b"logbook.entry.v1\n" + digest)).decode()
            conn.execute("UPDATE entries SET entry = ?, digest = ?, signature = ? WHERE seq = ?",
                         (new, digest.hex(), sig, s))
            prev = digest.hex()
        conn.execute("COMMIT")
    ok("reindex")


def fork(work: Path, k: int, extra: int) -> None:
    """Cut the last k entries and append `extra` different ones through the public commands."""
    cut(work, k)
    ok("reindex")
    for i in range(extra):
        ok("note", f"forked note {i}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _published(work: Path) -> None:
    build(work)
    ok("checkpoint", "--out", str(work / "published.checkpoint"))


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Prebuilt:
    return build_once(tmp_path_factory, "initialised")


@pytest.fixture(scope="module")
def published_once(tmp_path_factory: pytest.TempPathFactory) -> Prebuilt:
    return build_once(tmp_path_factory, "published", _published)


@pytest.fixture
def ledger_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The test's own copy of the module's ledger: the published one when the test takes
    ``published``, a fresh one otherwise (tests/prebuilt.py)."""
    source = "published_once" if "published" in request.fixturenames else "initialised"
    return copy_into(request.getfixturevalue(source), tmp_path)


@pytest.fixture
def published(ledger_dir: Path) -> Path:
    """A ledger of 12 entries and its checkpoint, saved to a file as if published."""
    return ledger_dir / "published.checkpoint"


ATTACKS = {
    "cut": (lambda work, home: cut(work, 3), "the ledger was cut"),
    "rewritten": (lambda work, home: rewrite(work, home, 5), "rewritten or forked"),
    "forked": (lambda work, home: fork(work, 3, 5), "rewritten or forked"),
    "cut-then-shorter": (lambda work, home: fork(work, 4, 2), "the ledger was cut"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_checkpoint_catches_attack(attack: str, published: Path, ledger_dir: Path,
                                   home: Path) -> None:
    do, words = ATTACKS[attack]
    do(ledger_dir, home)
    # the hash chain and the signatures alone are satisfied: the attacker had the key
    assert run_cli("verify").code == 0
    r = run_cli("verify", "--checkpoint", str(published))
    assert r.code == 1, r.out
    assert "FAIL [checkpoint]" in r.out and words in r.out, r.out
    # the same on an export of the attacked ledger, with no database involved
    ok("export", "--out", str(ledger_dir / "attacked.jsonl"))
    assert run_cli("verify", str(ledger_dir / "attacked.jsonl")).code == 0
    r = run_cli("verify", str(ledger_dir / "attacked.jsonl"), "--checkpoint", str(published),
                "--json")
    assert r.code == 1
    found = [f for f in r.json["findings"] if f["check"] == "checkpoint"]
    assert len(found) == 1 and words in found[0]["message"], r.json


def test_honest_growth_passes(published: Path, ledger_dir: Path) -> None:
    for i in range(7):
        ok("note", f"later {i}")
    r = ok("verify", "--checkpoint", str(published))
    assert "extends it (size 12" in r.out
    ok("checkpoint", "--out", str(ledger_dir / "later.checkpoint"))
    ok("note", "later still")
    r = ok("verify", "--checkpoint", str(published), "--checkpoint",
           str(ledger_dir / "later.checkpoint"), "--json")
    assert [c["ok"] for c in r.json["checkpoints"]] == [True, True]
    assert [c["size"] for c in r.json["checkpoints"]] == [12, 19]
    ok("export", "--out", str(ledger_dir / "grown.jsonl"))
    ok("verify", str(ledger_dir / "grown.jsonl"), "--checkpoint", str(published))
    # a checkpoint of the whole ledger (equal sizes) is consistent too
    ok("checkpoint", "--out", str(ledger_dir / "head.checkpoint"))
    ok("verify", "--checkpoint", str(ledger_dir / "head.checkpoint"))


def _export_key(name: str) -> Path:
    """A key file of the current LOGBOOK_KEY/default key, exported as `--trust` takes it."""
    ok("keys", "export", "--out", name)
    return Path(name)


def test_signature_origin_and_trust(published: Path, ledger_dir: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    pub = _export_key("owner.pub")
    fp = pub.read_text().split("fingerprint: ")[1].strip()
    ok("verify", "--checkpoint", str(published), "--trust", str(pub))
    ok("verify", "--checkpoint", str(published), "--trust", fp)
    vkey = ok("checkpoint", "--json").json["verifier_key"]
    ok("verify", "--checkpoint", str(published), "--trust", vkey)
    # a checkpoint whose signature was tampered with
    text = published.read_text()
    sig = text.rsplit(" ", 1)[1]
    bad_sig = sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:]
    (tmp_path / "bad-sig.checkpoint").write_text(text.replace(sig, bad_sig))
    r = run_cli("verify", "--checkpoint", str(tmp_path / "bad-sig.checkpoint"))
    assert r.code == 1 and "bad signature" in r.out, r.out
    # another key, trusted by the auditor, did not sign it (nor start the ledger)
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "stranger.key"))
    ok("keys", "new")
    stranger = _export_key("stranger.pub")
    r = run_cli("verify", "--checkpoint", str(published), "--trust", str(stranger))
    assert r.code == 1 and "bad signature" in r.out and "[trust]" in r.out, r.out
    # a checkpoint signed by a key the ledger does not know: exit 3 to make, 1 to accept
    assert run_cli("checkpoint").code == 3
    # a checkpoint of another ledger names another origin
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    ok("init", ".", "--name", "other")
    ok("checkpoint", "--out", str(tmp_path / "other.checkpoint"))
    monkeypatch.chdir(ledger_dir)
    r = run_cli("verify", "--checkpoint", str(tmp_path / "other.checkpoint"))
    assert r.code == 1 and "does not name this ledger" in r.out, r.out
    # a missing or malformed checkpoint file is bad input
    assert run_cli("verify", "--checkpoint", str(tmp_path / "nope")).code == 2
    (tmp_path / "garbage.checkpoint").write_text("not a checkpoint\n")
    r = run_cli("verify", "--checkpoint", str(tmp_path / "garbage.checkpoint"))
    assert r.code == 2 and "garbage.checkpoint" in r.err


def test_checkpoint_by_an_added_key_and_after_its_revocation(
        published: Path, ledger_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    second = tmp_path / "second.key"
    ok("keys", "new", "--out", str(second))
    monkeypatch.setenv("LOGBOOK_KEY", str(second))
    pub = _export_key("second.pub")
    monkeypatch.delenv("LOGBOOK_KEY")
    ok("keys", "add", str(pub), "--name", "second", "--reason", "rotation")
    monkeypatch.setenv("LOGBOOK_KEY", str(second))
    ok("checkpoint", "--out", "by-second.checkpoint")
    first = run_cli("keys", "list", "--json").json[0]["fingerprint"]
    ok("keys", "revoke", first, "--reason", "retired")
    ok("note", "signed by the second key")
    # the first key signed `published` while it was valid; the second signed the other
    ok("verify", "--checkpoint", str(published), "--checkpoint", "by-second.checkpoint")


def test_checkpoint_json_and_log(ledger_dir: Path) -> None:
    build(ledger_dir, notes=1)
    r = ok("checkpoint", "--json")
    out = r.json
    assert out["size"] == 5 and len(out["root"]) == 64
    assert out["origin"] == f"logbook/{out['ledger']}"
    assert out["note"].startswith(out["origin"] + "\n5\n" + out["root_base64"] + "\n\n\u2014 ")
    name, key_id, key_b64 = out["verifier_key"].split("+", 2)
    raw = base64.b64decode(key_b64)
    assert name == out["origin"] and raw[0] == 1 and hashlib.sha256(raw[1:]).hexdigest() == \
        out["signer"]
    assert key_id == hashlib.sha256(name.encode() + b"\n\x01" + raw[1:]).digest()[:4].hex()
    plain = ok("checkpoint").out
    assert plain.splitlines()[:3] == out["note"].splitlines()[:3]
    rows = ok("log", "--checkpoints", "--json").json
    assert [row["size"] for row in rows] == [5, 5] and rows[1]["note"] == plain


# --- prove and verify-proof -----------------------------------------------------------------


def _write(path: Path, value: Any) -> str:
    path.write_bytes(orjson.dumps(value))
    return str(path)


def test_prove_and_verify_proof_round_trip(published: Path, ledger_dir: Path,
                                           tmp_path: Path) -> None:
    pub = str(_export_key("owner.pub"))
    ok("note", "after the checkpoint")
    for seq in range(12):
        proof = ok("prove", f"@{seq}", "--checkpoint", str(published), "--json").json
        assert proof["index"] == seq and proof["size"] == 12
        path = _write(tmp_path / f"proof{seq}.json", proof)
        entry = _write(tmp_path / f"entry{seq}.json", ok("show", f"@{seq}", "--json").json)
        r = ok("verify-proof", path, "--checkpoint", str(published), "--trust", pub,
               "--entry", entry)
        assert "proof holds" in r.out and "NOT checked" not in r.out
    # the latest checkpoint made is the default; an entry beyond it is an error (exit 2)
    assert ok("prove", "@3", "--json").json == ok("prove", "@3", "--checkpoint",
                                                  str(published), "--json").json
    r = run_cli("prove", "@12")
    assert r.code == 2 and "beyond the checkpoint's size 12" in r.err
    # the exported line and the bare envelope are both accepted as --entry
    line = orjson.loads(run_cli("export").out.splitlines()[7])
    env = _write(tmp_path / "bare.json", line["entry"])
    ok("verify-proof", str(tmp_path / "proof7.json"), "--checkpoint", str(published),
       "--entry", env)
    # a consistency proof to the head, and between two checkpoints
    ok("checkpoint", "--out", str(tmp_path / "new.checkpoint"))
    ok("note", "and another")
    head = ok("prove", "--consistency", str(published), "--json").json
    assert (head["old_size"], head["size"]) == (12, 14)
    c = ok("prove", "--consistency", str(published), "--to", str(tmp_path / "new.checkpoint"),
           "--json").json
    assert (c["old_size"], c["size"]) == (12, 13)
    cpath = _write(tmp_path / "consistency.json", c)
    r = ok("verify-proof", cpath, "--checkpoint", str(tmp_path / "new.checkpoint"),
           "--old-checkpoint", str(published), "--trust", pub)
    assert "prefix" in r.out and "both checkpoints are signed" in r.out
    # the proof to the head is checked against a checkpoint of the head
    ok("checkpoint", "--out", str(tmp_path / "head.checkpoint"))
    ok("verify-proof", _write(tmp_path / "head.json", head), "--checkpoint",
       str(tmp_path / "head.checkpoint"), "--trust", pub)


def _flip(hex_digest: str) -> str:
    return ("1" if hex_digest[0] == "0" else "0") + hex_digest[1:]


def test_tampered_proofs_fail(published: Path, ledger_dir: Path, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    pub = str(_export_key("owner.pub"))
    proof = ok("prove", "@5", "--json").json
    good = _write(tmp_path / "good.json", proof)
    cp = str(published)
    for i in range(len(proof["path"])):
        bad = {**proof, "path": [_flip(h) if j == i else h for j, h in enumerate(proof["path"])]}
        r = run_cli("verify-proof", _write(tmp_path / "bad.json", bad), "--checkpoint", cp)
        assert r.code == 1 and "does not lead from leaf 5" in r.out, r.out
    for name, value in (("leaf", _flip(proof["leaf"])), ("root", _flip(proof["root"])),
                        ("index", 4), ("size", 13), ("path", proof["path"][:-1]),
                        ("ledger", "0" * 8)):
        r = run_cli("verify-proof", _write(tmp_path / "bad.json", {**proof, name: value}),
                    "--checkpoint", cp)
        assert r.code == 1, (name, r.out)
    # the wrong entry for the leaf
    other = _write(tmp_path / "entry6.json", ok("show", "@6", "--json").json)
    r = run_cli("verify-proof", good, "--checkpoint", cp, "--entry", other)
    assert r.code == 1 and "is not the proof's leaf" in r.out
    # the wrong checkpoint: a later one of the same ledger, and one of another ledger
    ok("note", "more")
    ok("checkpoint", "--out", str(tmp_path / "later.checkpoint"))
    r = run_cli("verify-proof", good, "--checkpoint", str(tmp_path / "later.checkpoint"))
    assert r.code == 1 and "has size 13, but the proof is for size 12" in r.out
    # without --trust, the reader is told; with a key that did not sign it, it fails
    r = ok("verify-proof", good, "--checkpoint", cp)
    assert "the checkpoint's signature was NOT checked (no --trust)" in r.out
    r = ok("verify-proof", good, "--checkpoint", cp, "--json")
    assert r.json["signature_checked"] is False and "NOT checked" in r.err
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "stranger.key"))
    ok("keys", "new")
    stranger = str(_export_key("stranger.pub"))
    r = run_cli("verify-proof", good, "--checkpoint", cp, "--trust", stranger)
    assert r.code == 1 and "not signed by the trusted key" in r.out
    monkeypatch.delenv("LOGBOOK_KEY")
    # a consistency proof with a flipped element, or an old checkpoint that does not bind it
    ok("checkpoint", "--out", str(tmp_path / "new.checkpoint"))
    c = ok("prove", "--consistency", cp, "--json").json
    bad = {**c, "path": [_flip(c["path"][0]), *c["path"][1:]]}
    r = run_cli("verify-proof", _write(tmp_path / "c.json", bad), "--checkpoint",
                str(tmp_path / "new.checkpoint"), "--trust", pub)
    assert r.code == 1 and "does not show the tree of 12" in r.out
    r = run_cli("verify-proof", _write(tmp_path / "c.json", c), "--checkpoint",
                str(tmp_path / "new.checkpoint"), "--old-checkpoint",
                str(tmp_path / "later.checkpoint"))
    assert r.code == 1 and "old checkpoint has size 13" in r.out


def test_proof_input_errors_exit_2(published: Path, ledger_dir: Path, tmp_path: Path) -> None:
    proof = ok("prove", "@2", "--json").json
    cp = str(published)
    cases: list[tuple[Any, str]] = [
        ({k: v for k, v in proof.items() if k != "root"}, "root is required"),
        ({**proof, "leaf": "xyz"}, "leaf must be 64 lowercase hex"),
        ({**proof, "path": ["00" * 31]}, "path[0] must be 64"),
        ({**proof, "index": -1}, "index must be a non-negative"),
        ({**proof, "extra": 1}, "'extra' is not a field"),
        ([1, 2], "must be a JSON object"),
    ]
    for value, words in cases:
        r = run_cli("verify-proof", _write(tmp_path / "p.json", value), "--checkpoint", cp)
        assert r.code == 2 and words in r.err, (value, r.err)
    (tmp_path / "p.json").write_text("{not json")
    assert run_cli("verify-proof", str(tmp_path / "p.json"), "--checkpoint", cp).code == 2
    good = _write(tmp_path / "good.json", proof)
    assert run_cli("verify-proof", good, "--checkpoint", str(tmp_path / "none")).code == 2
    fp = _export_key("owner.pub").read_text().split("fingerprint: ")[1].strip()
    r = run_cli("verify-proof", good, "--checkpoint", cp, "--trust", fp)
    assert r.code == 2 and "fingerprint cannot check a signature" in r.err
    r = run_cli("verify-proof", good, "--checkpoint", cp, "--entry",
                _write(tmp_path / "e.json", {"text": "hello"}))
    assert r.code == 2 and "envelope has no" in r.err
    assert run_cli("prove").code == 2
    assert run_cli("prove", "@1", "--consistency", cp).code == 2
    assert run_cli("prove", "@99").code == 2


def test_prove_refuses_a_ledger_that_does_not_match(published: Path, ledger_dir: Path,
                                                    home: Path) -> None:
    rewrite(ledger_dir, home, 4)
    r = run_cli("prove", "@2", "--checkpoint", str(published))
    assert r.code == 1 and "rewritten or forked" in r.err
    cut(ledger_dir, 2)
    r = run_cli("prove", "--consistency", str(published))
    assert r.code == 1 and "cut" in r.err


def test_prove_with_no_checkpoint_made(ledger_dir: Path) -> None:
    r = run_cli("prove", "@0")
    assert r.code == 2 and "no checkpoint has been made" in r.err


def test_proofs_read_log_n_nodes(ledger_dir: Path) -> None:
    from logbook.crypto.signing import load_key
    from logbook.ledger import checkpoints
    from logbook.ledger.service import Ledger
    from logbook.tlog import merkle

    key = load_key()
    with Ledger.open(ledger_dir, write=True) as ledger:
        for start in range(0, 3000, 1000):
            ledger.append_many([("note", {"text": f"n{i}", "refs": []})
                                for i in range(start, start + 1000)], key)
        n = ledger.size()
        reads = [0]
        store = ledger.entry_log  # what the ledger reads its tree from outside a check
        real = store.tree_node

        def counting(level: int, idx: int) -> bytes:
            reads[0] += 1
            return real(level, idx)

        store.tree_node = counting  # type: ignore[method-assign]
        proof = checkpoints.inclusion_proof(ledger, 1234, n)
        assert reads[0] <= 2 * (n.bit_length() + 1), reads
        assert merkle.verify_inclusion(bytes.fromhex(proof["leaf"]), 1234, n,
                                       [bytes.fromhex(h) for h in proof["path"]],
                                       bytes.fromhex(proof["root"]))
        reads[0] = 0
        c = checkpoints.consistency_proof(ledger, 1001, n)
        assert reads[0] <= 3 * (n.bit_length() + 1), reads
        assert merkle.verify_consistency(1001, n, bytes.fromhex(c["old_root"]),
                                         bytes.fromhex(c["root"]),
                                         [bytes.fromhex(h) for h in c["path"]])


# --- claims bind the ledger's root ----------------------------------------------------------


def _claim(work: Path, size: int, root: str) -> CliResult:
    body = {"statement": "q8 costs less than a point", "plan": None, "value": 0.5,
            "interval": [0.4, 0.6], "runs": [], "ledger_size": size, "ledger_root": root}
    return run_cli("append", str(write_json(work / "claim.json", draft("claim", body))))


def test_claim_root_and_size_checked_at_append(published: Path, ledger_dir: Path) -> None:
    cp = ok("checkpoint", "--json").json
    r = _claim(ledger_dir, cp["size"], _flip(cp["root"]))
    assert r.code == 2 and "body.ledger_root" in r.err
    r = _claim(ledger_dir, cp["size"] + 5, cp["root"])
    assert r.code == 2 and "body.ledger_size" in r.err
    assert size(ledger_dir) == 12  # nothing was written
    ok("note", "one more")
    r = _claim(ledger_dir, cp["size"], cp["root"])
    assert r.code == 0, r.err
    proof = ok("prove", "@0", "--checkpoint", str(published), "--json").json
    assert _claim(ledger_dir, proof["size"], proof["root"]).code == 0
    ok("verify", "--checkpoint", str(published))


# --- docs/auditing.md: every command it shows runs ------------------------------------------


def _doc_commands(text: str) -> list[tuple[str, list[str], str | None, int]]:
    """(section, argv, stdout redirect, expected exit) for every `$ logbook ...` line."""
    out, section = [], ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:]
        m = re.match(r"^\$ logbook (.*?)(?:\s+#\s*exits (\d))?$", line.strip())
        if not m:
            continue
        argv = shlex.split(m.group(1))
        redirect = None
        if ">" in argv:
            i = argv.index(">")
            argv, redirect = argv[:i], argv[i + 1]
        out.append((section, argv, redirect, int(m.group(2) or 0)))
    return out


def test_auditing_doc_commands_run(ledger_dir: Path) -> None:
    build(ledger_dir, notes=40)
    commands = _doc_commands((DOCS / "auditing.md").read_text())
    assert len(commands) >= 12
    grown = False
    for section, argv, redirect, code in commands:
        if section.startswith("5.") and not grown:
            for i in range(5):  # time passes: the owner appends more
                ok("note", f"months later {i}")
            grown = True
        r = run_cli(*argv)
        assert r.code == code, (argv, r.out, r.err)
        if redirect is not None:
            Path(redirect).write_text(r.out)
    assert grown


def test_format_doc_examples_verify() -> None:
    """The checkpoint and proofs printed in docs/format.md §10-§11 are what the code makes."""
    from logbook.tlog import merkle
    from logbook.tlog.checkpoint import verify_checkpoint_signature
    from logbook.tlog.note import parse_verifier_key

    text = (DOCS / "format.md").read_text()
    note = re.search(r"```\n(logbook/[^\n]+\n\d+\n[^\n]+\n\n\u2014 [^\n]+\n)```", text)
    assert note is not None
    vkey = re.search(r"Its verifier key is\n`([^`]+)`", text)
    assert vkey is not None
    name, public = parse_verifier_key(vkey.group(1))
    assert verify_checkpoint_signature(note.group(1), [public])
    assert name == note.group(1).split("\n")[0]
    leaves = [hashlib.sha256(f"entry {i}".encode()).digest() for i in range(3)]
    root = merkle.root_hash(leaves)
    assert base64.b64encode(root).decode() == note.group(1).split("\n")[2]
    blocks = [orjson.loads(b.replace('"<uuid>"', '"x"'))
              for b in re.findall(r"```json\n(\{\"ledger\".*?)```", text, re.S)]
    inclusion, consistency = blocks
    assert merkle.verify_inclusion(bytes.fromhex(inclusion["leaf"]), 2, 3,
                                   [bytes.fromhex(h) for h in inclusion["path"]], root)
    assert inclusion["leaf"] == leaves[2].hex() and inclusion["root"] == root.hex()
    assert merkle.verify_consistency(2, 3, bytes.fromhex(consistency["old_root"]), root,
                                     [bytes.fromhex(h) for h in consistency["path"]])
