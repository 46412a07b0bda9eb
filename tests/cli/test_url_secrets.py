"""Credentials in a URL never reach a message (issue 34, item 3): `verify URL`, `mirror`,
`checkpoint --witness` and `publish --witness` name the server without its userinfo, in text
and JSON, whatever goes wrong; the run never ends in a traceback (exit 1 or 3, never 70)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import prebuilt
import pytest
from conftest import run_cli

initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir

SECRET = "Pw0rd-Zq8xK2"


class _Refuses(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(500, "broken")

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _vkey() -> str:
    r = run_cli("checkpoint", "--json")
    assert r.code == 0, r.err
    return str(r.json["verifier_key"])


@pytest.mark.parametrize("userinfo", [f"alice:{SECRET}@", f"{SECRET}@", f"alice:{SECRET}@"
                                      "127.0.0.1:1@"])
def test_no_password_in_any_message(ledger_dir: Path, tmp_path: Path, server: str,
                                    userinfo: str) -> None:
    url = f"http://{userinfo}{server}/ledger"
    vkey = _vkey()
    commands = [("verify", url), ("verify", "--json", url),
                ("mirror", url, str(tmp_path / "mirror")),
                ("checkpoint", "--witness", f"{url}={vkey}", "--out", str(tmp_path / "cp")),
                ("publish", str(tmp_path / "site"), "--witness", f"{url}={vkey}"),
                ("checkpoint", "--witness", f"{url}")]  # not URL=KEY: a usage error
    for command in commands:
        r = run_cli(*command)
        assert r.code in (1, 2, 3), (command, r.code, r.err)
        assert SECRET not in r.out + r.err, (command, r.out, r.err)
        assert "Traceback" not in r.err


def test_the_scrubber_keeps_what_names_the_server() -> None:
    from logbook.capture.redact import scrub_urls

    text = (f"http://alice:{SECRET}@h:81/tile/0/x001/002 and "
            f"postgresql://bob:{SECRET}@127.0.0.1:5432/db, https://w.example/a")
    assert scrub_urls(text) == ("http://h:81/tile/0/x001/002 and "
                                "postgresql://bob@127.0.0.1:5432/db, https://w.example/a")
