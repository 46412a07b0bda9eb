"""`publish DIR` and `mirror URL DEST` write only inside the folder they were given (issue 34,
item 1): a symlink planted at a published path is replaced, never written through; a symlink
standing for a folder on the way is refused (exit 2) with nothing written outside; a FIFO
planted in a published folder never makes `verify` or `mirror` wait."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import prebuilt
from builders import static_server
from conftest import run_cli
from test_publish import grow, ok

initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("precious\n")
    return outside


def test_a_symlink_at_the_checkpoint_is_replaced_not_followed(ledger_dir: Path,
                                                              tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    pub = tmp_path / "pub"
    grow(ledger_dir, 3)
    ok("publish", str(pub))
    (pub / "checkpoint").unlink()
    (pub / "checkpoint").symlink_to(outside / "victim")
    grow(ledger_dir, 2, "m")
    ok("publish", str(pub))
    assert (outside / "victim").read_text() == "precious\n"
    assert not (pub / "checkpoint").is_symlink()
    assert (pub / "checkpoint").read_text().split("\n")[1] == "6"
    assert ok("verify", str(pub)).code == 0


def test_a_dangling_symlink_at_the_next_tile_creates_nothing_outside(ledger_dir: Path,
                                                                     tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    pub = tmp_path / "pub"
    grow(ledger_dir, 3)  # 4 entries: tile/0/000.p/4
    ok("publish", str(pub))
    for rel in ("tile/0/000.p/6", "tile/entries/000.p/6", "logbook/entries/000.p/6"):
        (pub / rel).symlink_to(outside / f"planted-{rel.replace('/', '_')}")
    grow(ledger_dir, 2, "m")
    ok("publish", str(pub))
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]
    for rel in ("tile/0/000.p/6", "tile/entries/000.p/6", "logbook/entries/000.p/6"):
        assert (pub / rel).is_file() and not (pub / rel).is_symlink()
    assert ok("verify", str(pub)).code == 0


def test_a_symlink_for_a_folder_is_refused_and_nothing_is_written_outside(
        ledger_dir: Path, tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    pub = tmp_path / "pub"
    pub.mkdir()
    (pub / "tile").symlink_to(outside)
    grow(ledger_dir, 3)
    r = run_cli("publish", str(pub))
    assert r.code == 2 and "symlink" in r.err and r.err.count("\n") == 1, r.err
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]


def test_a_fifo_in_a_published_folder_never_makes_verify_wait(ledger_dir: Path,
                                                              tmp_path: Path) -> None:
    pub = tmp_path / "pub"
    grow(ledger_dir, 3)
    ok("publish", str(pub))
    tile = pub / "tile/0/000.p/4"
    tile.unlink()
    os.mkfifo(tile)
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(run_cli("verify", str(pub)).code))
    worker.start()
    worker.join(60)
    if worker.is_alive():  # unblock it before failing: a writer opens the FIFO
        with open(tile, "wb"):
            pass
        worker.join(10)
    assert done and done[0] in (1, 2), done
    # publishing again puts the tile back in place of the FIFO
    ok("publish", str(pub))
    assert tile.is_file() and ok("verify", str(pub)).code == 0


def test_mirror_never_writes_through_a_symlink_in_its_destination(ledger_dir: Path,
                                                                  tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    pub, dest = tmp_path / "pub", tmp_path / "mirror"
    grow(ledger_dir, 3)
    ok("publish", str(pub))
    with static_server(pub) as url:
        ok("mirror", url, str(dest))
        (dest / "checkpoint").unlink()
        (dest / "checkpoint").symlink_to(outside / "victim")
        r = run_cli("mirror", url, str(dest))
        assert r.code in (1, 2) and "symlink" in r.err, r.err
        assert (outside / "victim").read_text() == "precious\n"
        (dest / "checkpoint").unlink()
        (dest / "tile").rename(dest / "tile-moved")
        (dest / "tile").symlink_to(outside)
        grow(ledger_dir, 2, "m")
        ok("publish", str(pub))
        r = run_cli("mirror", url, str(dest))
        assert r.code == 2 and "symlink" in r.err, r.err
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]
