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

import prebuilt
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
