"""Witnessed checkpoints end to end (issue 19): two `logbook witness serve` processes on
loopback, `checkpoint --witness A --witness B --quorum 2`, then `verify --checkpoint ...
--quorum 2`; a checkpoint short of the quorum fails `verify`; forks and truncations are
refused by the witnesses (the evidence kept) and caught by `mirror`."""

from __future__ import annotations

import base64
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import prebuilt
import pytest
from conftest import run_cli
from running import Served, log_vkey, ok, running_witness, witness_key
from test_witness_server import grow

# the module's ledger is initialised once and copied into each test (tests/prebuilt.py)
initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir


@pytest.fixture
def two(ledger_dir: Path, tmp_path: Path) -> Iterator[tuple[Served, Served]]:
    grow(ledger_dir, 3, "a")
    vkey = log_vkey()
    keys = tmp_path / "keys"
    with ExitStack() as stack:
        a = stack.enter_context(running_witness(witness_key(keys, "a"), [vkey],
                                                tmp_path / "a.state", "a.witness.test"))
        b = stack.enter_context(running_witness(witness_key(keys, "b"), [vkey],
                                                tmp_path / "b.state", "b.witness.test"))
        yield a, b


def at(w: Served) -> str:
    return f"{w.url}={w.vkey}"


def test_two_witnesses_cosign_and_verify_requires_the_quorum(
        two: tuple[Served, Served], ledger_dir: Path, tmp_path: Path) -> None:
    a, b = two
    cp = ledger_dir / "cp"
    ok("checkpoint", "--witness", at(a), "--witness", at(b), "--quorum", "2", "--out", str(cp))
    lines = cp.read_text().splitlines()
    assert lines[-2].startswith("\u2014 a.witness.test ") or \
        lines[-1].startswith("\u2014 a.witness.test ")
    assert sum(ln.startswith("\u2014 ") for ln in lines) == 3  # the ledger's and two cosigns
    r = ok("verify", "--checkpoint", str(cp), "--witness", a.vkey, "--witness", b.vkey,
           "--quorum", "2")
    assert "the ledger extends it" in r.out
    # the witnesses follow the ledger as it grows (from the sizes they cosigned on cp)
    grow(ledger_dir, 4, "b")
    ok("checkpoint", "--witness", at(a), "--witness", at(b), "--out", str(cp))
    assert cp.read_text().split("\n")[1] == "8"
    ok("verify", "--checkpoint", str(cp), "--witness", a.vkey, "--witness", b.vkey)
    # short of the quorum: a witness that did not cosign counts for nothing
    stranger = run_cli("witness", "key", "--key", str(witness_key(tmp_path / "keys", "c")),
                       "--name", "c.witness.test").out.strip()
    r = run_cli("verify", "--checkpoint", str(cp), "--witness", a.vkey, "--witness", stranger,
                "--quorum", "2")
    assert r.code == 1 and "not witnessed" in r.out and "none by c.witness.test" in r.out
    # a cosignature by a key nobody named is ignored: B alone meets a quorum of 1
    ok("verify", "--checkpoint", str(cp), "--witness", b.vkey, "--quorum", "1")
    # a bad signature by a named witness is an error, whatever the quorum
    text = cp.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("\u2014 a.witness.test "))
    blob = bytearray(base64.b64decode(line.split(" ")[2]))
    blob[-1] ^= 1
    bad = ledger_dir / "bad"
    bad.write_text(text.replace(line, line.split(" ")[0] + " a.witness.test " +
                                base64.b64encode(bytes(blob)).decode()))
    r = run_cli("verify", "--checkpoint", str(bad), "--witness", a.vkey, "--witness", b.vkey,
                "--quorum", "1")
    assert r.code == 1 and "by witness a.witness.test does not verify" in r.out
    # bad input: exit 2, one sentence naming the option
    r = run_cli("verify", "--checkpoint", str(cp), "--witness", a.vkey, "--quorum", "2")
    assert r.code == 2 and "--quorum 2" in r.err
    r = run_cli("verify", "--witness", a.vkey)
    assert r.code == 2 and "--checkpoint" in r.err
    r = run_cli("verify", "--checkpoint", str(cp), "--witness", "nope")
    assert r.code == 2 and "--witness" in r.err


def test_a_witness_down_leaves_the_checkpoint_short_of_quorum(
        two: tuple[Served, Served], ledger_dir: Path) -> None:
    a, b = two
    b.process.terminate()
    b.process.wait(timeout=20)
    cp = ledger_dir / "cp"
    before = ok("log", "--checkpoints").out
    r = run_cli("checkpoint", "--witness", at(a), "--witness", at(b), "--out", str(cp),
                "--timeout", "5")
    assert r.code == 1 and b.url in r.err and "1 of the 2" in r.err and a.url not in r.err
    assert not cp.exists(), "a checkpoint short of its quorum is not written"
    assert ok("log", "--checkpoints").out == before, "nor kept in the ledger"
    ok("checkpoint", "--witness", at(a), "--witness", at(b), "--quorum", "1", "--out",
       str(cp), "--timeout", "5")
    ok("verify", "--checkpoint", str(cp), "--witness", a.vkey)
    r = run_cli("checkpoint", "--witness", at(a), "--quorum", "2")
    assert r.code == 2 and "--quorum 2" in r.err
    r = run_cli("checkpoint", "--witness", at(a), "--witness", at(a))
    assert r.code == 2 and "given twice" in r.err
    r = run_cli("checkpoint", "--witness", "localhost=" + a.vkey)
    assert r.code == 2 and "--witness" in r.err


@pytest.mark.parametrize(("forged", "status", "says"), [
    (4, "422", "answered 422"),
    (2, "409", "answered 409"),
])
def test_a_forked_ledger_is_refused_and_the_answer_kept_as_evidence(
        two: tuple[Served, Served], ledger_dir: Path, tmp_path: Path, forged: int,
        status: str, says: str) -> None:
    a, b = two
    copy = tmp_path / "copy"
    shutil.copytree(ledger_dir / ".logbook", copy / ".logbook")
    grow(ledger_dir, 2, "real")
    ok("checkpoint", "--witness", at(a), "--witness", at(b), "--out", str(ledger_dir / "cp"))
    grow(copy, forged, "forged", ledger=copy)
    out = tmp_path / "forged" / "cp"
    out.parent.mkdir()
    r = run_cli("--ledger", str(copy), "checkpoint", "--witness", at(a), "--out", str(out))
    assert r.code == 1 and says in r.err and "fork" in r.err, r.err
    evidence = sorted(out.parent.glob("witness-evidence.*"))
    assert len(evidence) == 1 and evidence[0].name.endswith("." + status)
    assert str(evidence[0]) in r.err
    assert not out.exists()


def test_a_truncated_ledger_is_refused(two: tuple[Served, Served], ledger_dir: Path,
                                       tmp_path: Path) -> None:
    a, _ = two
    copy = tmp_path / "copy"
    shutil.copytree(ledger_dir / ".logbook", copy / ".logbook")
    grow(ledger_dir, 3, "later")
    ok("checkpoint", "--witness", at(a), "--out", str(ledger_dir / "cp"))
    r = run_cli("--ledger", str(copy), "checkpoint", "--witness", at(a))
    assert r.code == 1 and "holds a checkpoint of size 7, larger than this one's 4" in r.err


def test_mirror_requires_the_quorum_and_catches_a_rewrite(
        two: tuple[Served, Served], ledger_dir: Path, tmp_path: Path) -> None:
    a, b = two
    pub, mirror, copy = tmp_path / "pub", tmp_path / "mirror", tmp_path / "copy"
    shutil.copytree(ledger_dir / ".logbook", copy / ".logbook")
    grow(ledger_dir, 2, "real")
    ok("publish", str(pub), "--witness", at(a), "--witness", at(b))
    r = run_cli("mirror", str(pub), str(mirror), "--witness", a.vkey, "--witness", b.vkey,
                "--quorum", "2")
    assert r.code == 0, r.err
    ok("verify", str(mirror))
    # the owner rewrites the history (same size, other root): the witnesses refuse it...
    grow(copy, 2, "forged", ledger=copy)
    shutil.rmtree(pub)
    r = run_cli("--ledger", str(copy), "publish", str(pub), "--witness", at(a))
    assert r.code == 1 and "answered 409" in r.err
    # ...and the mirror, which kept the witnessed checkpoint, says SECURITY ERROR
    r = run_cli("mirror", str(pub), str(mirror), "--witness", a.vkey, "--witness", b.vkey)
    assert r.code == 1 and r.err.startswith("SECURITY ERROR: ") and "forked" in r.err
    # a fresh mirror of the unwitnessed publication is refused for want of the quorum
    r = run_cli("mirror", str(pub), str(tmp_path / "fresh"), "--witness", a.vkey)
    assert r.code == 1 and "not witnessed" in r.err and not (tmp_path / "fresh").exists()
