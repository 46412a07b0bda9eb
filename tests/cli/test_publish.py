"""`logbook publish DIR` and `logbook verify DIR|URL` (issue 19): a ledger written as C2SP
tlog-tiles, served by a static HTTP server on 127.0.0.1, verified from its tiles alone, and
caught when any published file is changed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import orjson
import prebuilt
import pytest
from builders import draft, static_server, write_jsonl
from conftest import CliResult, run_cli

from logbook.tlog import merkle, tiles

# the module's ledger is initialised once and copied into each test (tests/prebuilt.py)
initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir


def ok(*args: str) -> CliResult:
    r = run_cli(*args)
    assert r.code == 0, (args, r.out, r.err)
    return r


def grow(work: Path, n: int, tag: str = "n") -> None:
    """Append ``n`` notes in one batch, through `append --jsonl`."""
    drafts = [draft("note", {"text": f"{tag} {i}", "refs": []}) for i in range(n)]
    ok("append", "--jsonl", str(write_jsonl(work / f"{tag}.jsonl", drafts)))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A static HTTP server on 127.0.0.1 serving tmp_path/pub (stopped after the test)."""
    root = tmp_path / "pub"
    root.mkdir()
    with static_server(root) as url:
        yield root, url


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_publish_writes_the_c2sp_layout_and_its_tiles_give_the_root(ledger_dir: Path,
                                                                    tmp_path: Path) -> None:
    grow(ledger_dir, 299)  # 300 entries with the genesis: one full tile and a partial of 44
    r = ok("publish", str(tmp_path / "pub"), "--json")
    assert r.json["size"] == 300 and r.json["new_checkpoint"] is True
    pub = files(tmp_path / "pub")
    assert set(pub) == {"checkpoint", "logbook/keys.json",
                        "tile/0/000", "tile/0/001.p/44", "tile/1/000.p/1",
                        "tile/entries/000", "tile/entries/001.p/44",
                        "logbook/entries/000", "logbook/entries/001.p/44"}
    assert len(pub["tile/0/000"]) == 8192 and len(pub["tile/0/001.p/44"]) == 44 * 32
    # the leaves are the entries' digests, as the export gives them
    export = [orjson.loads(x) for x in ok("export").out.splitlines()]
    digests = [bytes.fromhex(e["digest"]) for e in export]
    bundled = tiles.decode_bundle(pub["tile/entries/000"] + pub["tile/entries/001.p/44"])
    assert bundled == digests
    assert pub["logbook/entries/000"].splitlines() == ok("export").out.encode().splitlines()[:256]
    # the level-1 tile holds the root of the full level-0 tile; the root is the checkpoint's
    level0 = tiles.decode_tile(pub["tile/0/000"], 256)
    assert level0 == [merkle.leaf_hash(d) for d in digests[:256]]
    assert tiles.decode_tile(pub["tile/1/000.p/1"], 1) == [tiles.subtree_root(level0)]
    cp = ok("checkpoint", "--json").json  # a new checkpoint of the same tree
    assert merkle.root_hash(digests).hex() == cp["root"]
    assert pub["checkpoint"].decode().splitlines()[1:3] == ["300", cp["root_base64"]]


def test_publishing_again_writes_only_new_files_and_never_a_full_tile(ledger_dir: Path,
                                                                       tmp_path: Path) -> None:
    pub = tmp_path / "pub"
    grow(ledger_dir, 299)
    ok("publish", str(pub))
    before = files(pub)
    again = ok("publish", str(pub), "--json").json
    assert again["new_checkpoint"] is False and again["written"] == []
    grow(ledger_dir, 300, "m")  # 600 entries: tiles 000 and 001 full, 002.p/88
    r = ok("publish", str(pub), "--json").json
    after = files(pub)
    assert {k: v for k, v in after.items() if k in before and k not in
            ("checkpoint", "logbook/keys.json")} == \
        {k: v for k, v in before.items() if k not in ("checkpoint", "logbook/keys.json")}
    assert set(r["written"]) == (set(after) - set(before)) | {"checkpoint"}
    assert {"tile/0/001", "tile/0/002.p/88", "tile/1/000.p/2"} <= set(r["written"])
    assert "tile/0/000" not in r["written"]
    ok("verify", str(pub))


def test_publish_refuses_a_folder_that_holds_another_history(ledger_dir: Path,
                                                            tmp_path: Path) -> None:
    pub = tmp_path / "pub"
    ok("publish", str(pub))
    (pub / "tile" / "0" / "000.p/1").write_bytes(bytes(32))
    r = run_cli("publish", str(pub))
    assert r.code == 1 and "another history" in r.err
    (tmp_path / "afile").write_text("x")
    r = run_cli("publish", str(tmp_path / "afile"))
    assert r.code == 2 and "DIR" in r.err and "not a folder" in r.err


def test_verify_reads_a_published_ledger_over_http(ledger_dir: Path,
                                                    served: tuple[Path, str]) -> None:
    root, url = served
    grow(ledger_dir, 260)
    ok("publish", str(root))
    r = ok("verify", url)
    assert "verified 261 entries" in r.out and "tiles give the root" in r.out
    key = ok("checkpoint", "--json").json["verifier_key"]
    out = ok("verify", url, "--trust", key, "--json").json
    assert out["ok"] and out["published"]["size"] == 261
    # a checkpoint kept from earlier: the published ledger must extend it
    ok("checkpoint", "--out", str(ledger_dir / "old.checkpoint"))
    ok("verify", url, "--checkpoint", str(ledger_dir / "old.checkpoint"))


def test_verify_of_an_unreachable_url_is_an_environment_problem(ledger_dir: Path,
                                                               served: tuple[Path, str]) -> None:
    _root, url = served
    r = run_cli("verify", url)
    assert r.code == 2 and "has no checkpoint" in r.err
    r = run_cli("verify", "http://127.0.0.1:9/")  # the discard port: nothing listens
    assert r.code == 3 and "cannot be fetched" in r.err


def _tampered(pub: Path, rel: str, change: str) -> None:
    path = pub / rel
    data = path.read_bytes()
    if change == "flip":
        data = data[:10] + bytes([data[10] ^ 1]) + data[11:]
    elif change == "truncate":
        data = data[:-1]
    path.write_bytes(data)


@pytest.mark.parametrize(("rel", "change", "says"), [
    ("tile/0/000", "flip", "tile/entries/000: entry 0's digest does not hash to leaf 0"),
    ("tile/0/000", "truncate", "tile/0/000 is damaged: it is 8191 bytes"),
    ("tile/1/000.p/1", "flip", "tile/1/000.p/1 does not hold the roots"),
    ("tile/entries/001.p/4", "flip", "entry 256's digest does not hash"),
    ("tile/entries/000", "truncate", "tile/entries/000 is damaged"),
    ("logbook/entries/000", "flip", ""),
])
def test_a_changed_published_file_fails_verify(ledger_dir: Path, tmp_path: Path, rel: str,
                                               change: str, says: str) -> None:
    pub = tmp_path / "pub"
    grow(ledger_dir, 259)
    ok("publish", str(pub))
    ok("verify", str(pub))
    _tampered(pub, rel, change)
    r = run_cli("verify", str(pub))
    assert r.code == 1, (r.out, r.err)
    assert says in r.out


def test_a_checkpoint_for_another_root_fails_verify(ledger_dir: Path, tmp_path: Path) -> None:
    pub = tmp_path / "pub"
    grow(ledger_dir, 3)
    ok("publish", str(pub))
    good = (pub / "checkpoint").read_bytes()
    # a checkpoint validly signed by the ledger's key, of another ledger's tree: the tiles
    # still verify, but not the root it signs
    other = tmp_path / "other"
    other.mkdir()
    ok("init", str(other), "--name", "other")
    r = run_cli("--ledger", str(other), "checkpoint")
    lines = good.decode().split("\n")
    lines[2] = r.out.split("\n")[2]
    (pub / "checkpoint").write_text("\n".join(lines))
    r = run_cli("verify", str(pub))
    assert r.code == 1 and "not the checkpoint's" in r.out
    assert "not signed" in r.out  # its signature no longer covers the text
    (pub / "checkpoint").write_bytes(good)
    (pub / "tile/0/000.p/4").unlink()
    r = run_cli("verify", str(pub))
    assert r.code == 1 and "tile/0/000.p/4 is missing" in r.out


def test_a_published_checkpoint_not_signed_by_the_trusted_key_fails(ledger_dir: Path,
                                                                    tmp_path: Path) -> None:
    pub = tmp_path / "pub"
    ok("publish", str(pub))
    stranger = hashlib.sha256(b"not our key").hexdigest()
    r = run_cli("verify", str(pub), "--trust", stranger)
    assert r.code == 1


def test_an_oversized_file_over_http_is_refused(ledger_dir: Path,
                                                served: tuple[Path, str]) -> None:
    root, url = served
    ok("publish", str(root))
    (root / "checkpoint").write_bytes(b"x" * (64 * 1024 + 1))
    r = run_cli("verify", url)
    assert r.code == 2 and "larger than the 65536 bytes" in r.err
