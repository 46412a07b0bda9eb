"""`logbook mirror SOURCE DEST` (issue 19): a verified copy that catches up incrementally, and
an owner who rewrites or truncates a published ledger is caught with SECURITY ERROR, both
checkpoints kept as evidence.

The owner's attacks go through the public commands: a copy of the ledger folder taken
earlier (same ledger, same key) is grown differently and published in place of the real one.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from builders import draft, static_server, write_jsonl
from conftest import CliResult, run_cli


def ok(*args: str) -> CliResult:
    r = run_cli(*args)
    assert r.code == 0, (args, r.out, r.err)
    return r


def grow(work: Path, n: int, tag: str, ledger: Path | None = None) -> None:
    drafts = [draft("note", {"text": f"{tag} {i}", "refs": []}) for i in range(n)]
    batch = str(write_jsonl(work / f"{tag}.jsonl", drafts))
    ok(*(["--ledger", str(ledger)] if ledger else []), "append", "--jsonl", batch)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A static HTTP server on 127.0.0.1 serving tmp_path/pub (stopped after the test)."""
    root = tmp_path / "pub"
    root.mkdir()
    with static_server(root) as url:
        yield root, url


def test_mirror_catches_up_incrementally_over_http(ledger_dir: Path, tmp_path: Path,
                                                   served: tuple[Path, str]) -> None:
    pub, url = served
    mirror = tmp_path / "mirror"
    grow(ledger_dir, 299, "a")
    ok("publish", str(pub))
    first = ok("mirror", url, str(mirror), "--json").json
    assert first["ok"] and first["size"] == 300 and first["old_size"] == 0
    assert "tile/0/000" in first["fetched"]
    ok("verify", str(mirror))  # the copy is itself a published ledger
    grow(ledger_dir, 300, "b")
    ok("publish", str(pub))
    second = ok("mirror", url, str(mirror), "--json").json
    assert second["size"] == 600 and second["old_size"] == 300
    held = {"tile/0/000", "tile/entries/000", "logbook/entries/000"}
    assert not held & set(second["fetched"]), "full tiles already held are not fetched again"
    assert {"tile/0/001", "tile/0/002.p/88", "tile/1/000.p/2"} <= set(second["fetched"])
    assert (mirror / "tile/0/000").read_bytes() == (pub / "tile/0/000").read_bytes()
    assert sorted(p.name for p in (mirror / "mirror/checkpoints").iterdir()) == ["300", "600"]
    again = ok("mirror", url, str(mirror), "--json").json
    assert again["fetched"] == [] and again["size"] == 600
    ok("verify", str(mirror))


def _fork(ledger_dir: Path, tmp_path: Path) -> Path:
    """The owner's second copy of the ledger, taken now."""
    copy = tmp_path / "copy"
    shutil.copytree(ledger_dir / ".logbook", copy / ".logbook")
    return copy


def _republish(pub: Path, ledger: Path) -> None:
    shutil.rmtree(pub)
    ok("--ledger", str(ledger), "publish", str(pub))


@pytest.mark.parametrize(("real", "forged", "says"), [
    (5, 5, "forked: its checkpoint of size 11 has root"),
    (5, 9, "does not extend the 11 verified before"),
    (5, 0, "rolled back: its checkpoint has 6 entries, fewer than the 11"),
])
def test_a_rewritten_or_truncated_ledger_is_a_security_error(
        ledger_dir: Path, tmp_path: Path, real: int, forged: int, says: str) -> None:
    pub, mirror = tmp_path / "pub", tmp_path / "mirror"
    grow(ledger_dir, 5, "common")
    copy = _fork(ledger_dir, tmp_path)
    grow(ledger_dir, real, "real")
    ok("publish", str(pub))
    ok("mirror", str(pub), str(mirror))
    kept = (mirror / "checkpoint").read_bytes()
    if forged:
        grow(copy, forged, "forged", ledger=copy)
    _republish(pub, copy)
    ok("verify", str(pub))  # on its own the forged publication is a valid ledger
    r = run_cli("mirror", str(pub), str(mirror))
    assert r.code == 1 and r.err.startswith("SECURITY ERROR: ") and says in r.err, r.err
    assert (mirror / "checkpoint").read_bytes() == kept, "the older checkpoint is kept"
    evidence = list((mirror / "mirror/evidence").iterdir())
    assert len(evidence) == 1 and evidence[0].read_bytes() == (pub / "checkpoint").read_bytes()
    assert str(evidence[0]) in r.err
    ok("verify", str(mirror))  # the mirror still holds the ledger it verified


def test_mirror_refuses_an_unverifiable_source_and_changes_nothing(ledger_dir: Path,
                                                                   tmp_path: Path) -> None:
    pub, mirror = tmp_path / "pub", tmp_path / "mirror"
    grow(ledger_dir, 3, "a")
    ok("publish", str(pub))
    ok("mirror", str(pub), str(mirror))
    before = sorted(p for p in mirror.rglob("*"))
    grow(ledger_dir, 3, "b")
    ok("publish", str(pub))
    bundle = pub / "logbook/entries/000.p/7"
    bundle.write_bytes(bundle.read_bytes().replace(b"b 2", b"b 9"))
    r = run_cli("mirror", str(pub), str(mirror))
    assert r.code == 1 and "was not updated" in r.err and "SECURITY" not in r.err
    assert sorted(p for p in mirror.rglob("*")) == before
    r = run_cli("mirror", str(tmp_path / "nothing"), str(mirror))
    assert r.code == 2 and "neither a folder nor" in r.err
