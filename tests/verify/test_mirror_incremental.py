"""A mirror with nothing new costs one request (issue 34, item 9): the checkpoint, signed by
a key the mirror knows and of the size and root it verified before, is all it reads; no tile or
entry is fetched or verified again. A mirror whose own copy was altered since is not trusted."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import prebuilt
import pytest
from conftest import run_cli
from test_publish import grow, ok

initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir


@contextmanager
def counting_server(root: Path) -> Iterator[tuple[str, list[str]]]:
    """A static server of ``root`` on 127.0.0.1 that lists every path it is asked for."""
    asked: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            asked.append(self.path)
            super().do_GET()

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_nothing_new_is_one_request(ledger_dir: Path, tmp_path: Path) -> None:
    pub, dest = tmp_path / "pub", tmp_path / "mirror"
    grow(ledger_dir, 299)  # 300 entries: a full tile and a partial one
    ok("publish", str(pub))
    with counting_server(pub) as (url, asked):
        first = ok("mirror", url, str(dest), "--json").json
        assert len(asked) > 5 and first["ok"] and first["size"] == 300
        asked.clear()
        again = ok("mirror", url, str(dest), "--json").json
        assert asked == ["/checkpoint"], asked
        assert again["ok"] and again["size"] == again["old_size"] == 300
        assert again["head"] == first["head"] and again["fetched"] == []
        text = ok("mirror", url, str(dest)).out
        assert "mirrored 300 entries" in text and "0 file(s) fetched" in text
        # the ledger grows: only what is new is fetched, and verified
        grow(ledger_dir, 5, "m")
        ok("publish", str(pub))
        asked.clear()
        grown = ok("mirror", url, str(dest), "--json").json
        assert grown["size"] == 305 and "/tile/0/001.p/49" in asked
        assert "/tile/0/000" not in asked  # the full tile the mirror holds is not fetched


def test_an_altered_mirror_is_not_trusted_when_nothing_is_new(ledger_dir: Path,
                                                              tmp_path: Path) -> None:
    pub, dest = tmp_path / "pub", tmp_path / "mirror"
    grow(ledger_dir, 9)
    ok("publish", str(pub))
    with counting_server(pub) as (url, _asked):
        ok("mirror", url, str(dest))
        (dest / "tile" / "entries" / "000.p" / "10").unlink()
        r = run_cli("mirror", url, str(dest))
        assert r.code == 1 and "000.p/10" in r.err, r.err


@contextmanager
def fed_entries() -> Iterator[list[int]]:
    """The seq of every entry the chain check is fed meanwhile, in order."""
    from logbook.verify import chain

    fed: list[int] = []
    original = chain.ChainVerifier.feed

    def counting(self: chain.ChainVerifier, *args: object) -> object:
        fed.append(self.expected_seq)
        return original(self, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chain.ChainVerifier, "feed", counting)
        yield fed


def _mirrored(ledger_dir: Path, tmp_path: Path, n: int = 299) -> tuple[Path, Path]:
    pub, dest = tmp_path / "pub", tmp_path / "mirror"
    grow(ledger_dir, n)
    ok("publish", str(pub))
    ok("mirror", str(pub), str(dest))
    assert (dest / "mirror" / "state.json").is_file()
    return pub, dest


def test_a_grown_ledger_is_verified_from_where_the_mirror_was(ledger_dir: Path,
                                                               tmp_path: Path) -> None:
    """Only the entries after the mirrored size are checked, carried on from its head and key
    history: a note naming an entry from before resolves through the mirror's copy, and the
    mirror ends as a first mirror of the grown ledger would."""
    import hashlib


    pub, dest = _mirrored(ledger_dir, tmp_path)
    first = ok("export").out.splitlines()[1]
    named = orjson.loads(first)["digest"]
    ok("note", "about the first note", "--ref", named)
    grow(ledger_dir, 300, "m")  # across two more tiles
    ok("publish", str(pub))
    with fed_entries() as fed:
        grown = ok("mirror", str(pub), str(dest), "--json").json
    assert grown["ok"] and grown["size"] == 601 and grown["old_size"] == 300
    assert fed == list(range(300, 601))  # the new entries, and none before them
    again = tmp_path / "fresh"
    ok("mirror", str(pub), str(again))  # a first mirror of the same ledger
    same = {p.relative_to(again) for p in again.rglob("*") if p.is_file()
            and "mirror" not in p.relative_to(again).parts}
    for rel in same:
        assert hashlib.sha256((dest / rel).read_bytes()).digest() == \
            hashlib.sha256((again / rel).read_bytes()).digest(), rel
    assert ok("verify", str(dest)).code == 0


def test_a_new_entry_changed_at_the_source_is_found(ledger_dir: Path, tmp_path: Path) -> None:
    pub, dest = _mirrored(ledger_dir, tmp_path)
    grow(ledger_dir, 20, "m")
    ok("publish", str(pub))
    entries = pub / "logbook" / "entries" / "001.p" / "64"
    lines = entries.read_bytes().splitlines(keepends=True)
    lines[50] = lines[50].replace(b'"m 6"', b'"m 7"')  # entry 306's text
    entries.write_bytes(b"".join(lines))
    r = run_cli("mirror", str(pub), str(dest))
    assert r.code == 1 and "entry 306" in r.out and "not updated" in r.err, (r.out, r.err)
    assert orjson.loads((dest / "mirror" / "state.json").read_bytes())["size"] == 300


def test_a_higher_tile_that_lies_is_found(ledger_dir: Path, tmp_path: Path) -> None:
    """A level-1 tile past the mirrored size that does not hold the roots of the level-0
    tiles below it (a tile the mirror would publish again) is refused: nothing changes."""
    pub, dest = _mirrored(ledger_dir, tmp_path, n=255)  # one full level-0 tile
    grow(ledger_dir, 300, "m")
    ok("publish", str(pub))
    tile = pub / "tile" / "1" / "000.p" / "2"  # at 556 entries: two level-0 tiles' roots
    data = bytearray(tile.read_bytes())
    data[-1] ^= 1
    tile.write_bytes(bytes(data))
    r = run_cli("mirror", str(pub), str(dest))
    said = r.out + r.err
    assert r.code == 1 and ("does not hold the roots" in said
                            or "do not give its checkpoint's root" in said), said
    assert orjson.loads((dest / "mirror" / "state.json").read_bytes())["size"] == 256


def test_a_state_that_does_not_match_is_not_used(ledger_dir: Path, tmp_path: Path) -> None:
    """A state file of another size (or none) is set aside: the whole ledger is verified."""

    pub, dest = _mirrored(ledger_dir, tmp_path)
    state = dest / "mirror" / "state.json"
    doc = orjson.loads(state.read_bytes())
    state.write_bytes(orjson.dumps({**doc, "size": 7}))
    grow(ledger_dir, 5, "m")
    ok("publish", str(pub))
    with fed_entries() as fed:
        ok("mirror", str(pub), str(dest))
    assert fed == list(range(305))
    assert orjson.loads(state.read_bytes())["size"] == 305


def test_each_file_is_fetched_once_a_round(ledger_dir: Path, tmp_path: Path) -> None:
    """A first mirror and an update each ask for every file at most once (the right edge's
    tiles were fetched twice on a first mirror and three times on an update)."""
    from collections import Counter

    pub, dest = tmp_path / "pub", tmp_path / "mirror"
    grow(ledger_dir, 299)
    ok("publish", str(pub))
    with counting_server(pub) as (url, asked):
        ok("mirror", url, str(dest))
        assert max(Counter(asked).values()) == 1, Counter(asked).most_common(3)
        grow(ledger_dir, 40, "m")
        ok("publish", str(pub))
        asked.clear()
        ok("mirror", url, str(dest))
        assert max(Counter(asked).values()) == 1, Counter(asked).most_common(3)


def test_the_checkpoint_signature_is_checked_once_a_round(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An update checks the new checkpoint's signature once (it was checked twice: before the
    fork checks and again when the signer is named), a first mirror with --trust too, and a
    checkpoint signed by no key the mirror knows still changes nothing."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    import logbook.tlog.checkpoint as checkpoint
    import logbook.tlog.note as note

    checked: list[str] = []
    real = note.note_signers  # what every check of a note's signatures goes through

    def counted(text: object, name: str, keys: object) -> list[bytes]:
        checked.append(name)
        return real(text, name, keys)  # type: ignore[arg-type]

    monkeypatch.setattr(note, "note_signers", counted)
    monkeypatch.setattr(checkpoint, "note_signers", counted)  # a checkpoint's, by its name
    pub, dest = tmp_path / "pub", tmp_path / "mirror"
    grow(ledger_dir, 299)
    ok("publish", str(pub))
    with counting_server(pub) as (url, _asked):
        ok("mirror", url, str(dest))
        assert len(checked) == 1, checked
        for extra in ("m", "n"):
            grow(ledger_dir, 40, extra)
            ok("publish", str(pub))
            checked.clear()
            ok("mirror", url, str(dest))
            assert len(checked) == 1, checked
        ok("keys", "export", "--out", str(tmp_path / "public.key"))
        for trusting in ("trusting-first", "trusting-first"):  # a first mirror, then nothing new
            checked.clear()
            ok("mirror", url, str(tmp_path / trusting), "--trust", str(tmp_path / "public.key"))
            assert len(checked) == 1, checked
        grow(ledger_dir, 40, "o")
        ok("publish", str(pub))
        checked.clear()
        ok("mirror", url, str(tmp_path / "trusting-first"), "--trust",
           str(tmp_path / "public.key"))
        assert len(checked) == 1, checked
        grow(ledger_dir, 40, "p")
        ok("publish", str(pub))
        cp, _sigs = checkpoint.parse_checkpoint((pub / "checkpoint").read_text())
        stranger = Ed25519PrivateKey.generate()
        (pub / "checkpoint").write_text(checkpoint.sign_checkpoint(
            cp, cp.origin, stranger.sign, stranger.public_key().public_bytes_raw()))
        held = (dest / "checkpoint").read_bytes()
        r = run_cli("mirror", url, str(dest))
        assert r.code == 1 and "not signed by a key the mirror knows" in r.err, r.err
        assert (dest / "checkpoint").read_bytes() == held


def test_a_key_added_after_the_mirror_carries_on(ledger_dir: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A key added after the mirrored size signs new entries that verify, and the state
    carries it; the keys document a grown ledger publishes is held to the keys its entries
    define (one key fewer is refused, nothing changed)."""
    pub, dest = _mirrored(ledger_dir, tmp_path)
    assert run_cli("keys", "new", "--out", str(tmp_path / "b.key")).code == 0
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "b.key"))
    assert run_cli("keys", "export", "--out", str(tmp_path / "b.pub")).code == 0
    monkeypatch.delenv("LOGBOOK_KEY")
    ok("keys", "add", str(tmp_path / "b.pub"), "--name", "colleague", "--reason", "second")
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "b.key"))
    ok("note", "signed by the colleague's key")
    monkeypatch.delenv("LOGBOOK_KEY")
    ok("publish", str(pub))
    grown = ok("mirror", str(pub), str(dest), "--json").json
    assert grown["ok"] and grown["size"] == 302
    state = orjson.loads((dest / "mirror" / "state.json").read_bytes())
    assert len(state["keys"]) == 2
    # the keys document of the next round says one key fewer than the entries define
    grow(ledger_dir, 3, "m")
    ok("publish", str(pub))
    keys = pub / "logbook" / "keys.json"
    doc = orjson.loads(keys.read_bytes())
    doc["keys"] = doc["keys"][:1]
    keys.write_bytes(orjson.dumps(doc))
    r = run_cli("mirror", str(pub), str(dest))
    assert r.code == 1, (r.out, r.err)
    assert orjson.loads((dest / "mirror" / "state.json").read_bytes())["size"] == 302
