"""`serve` checks Host on every address it binds (issue 34, item 5): on 127.0.0.2, 127.1 or
::1, a request addressed to a foreign name (DNS rebinding) is 400 and shows nothing; the bound
address and loopback names are served, and `--allow-host NAME` adds a name."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import served
from served import get, serve_command

planted = served.planted  # the module's fixture: the demo ledger


@contextmanager
def serving(folder: Path, tmp: Path, *args: str) -> Iterator[str]:
    logs = tmp / "stderr.txt"
    with logs.open("w") as err:
        proc = subprocess.Popen(serve_command("--ledger", str(folder), "serve", "--port", "0",
                                              *args), stderr=err, text=True)
    url = None
    deadline = time.monotonic() + 30
    while url is None and time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"http://\S+:\d+/", logs.read_text())
        url = found.group(0) if found else None
        time.sleep(0.1)
    try:
        assert url is not None, f"serve did not start: {logs.read_text()}"
        yield url.rstrip("/")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _ipv6() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("host", ["127.0.0.2", "127.1", "::1"])
def test_a_foreign_host_name_is_refused_on_every_address(host: str, planted: dict[str, Any],
                                                         tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    if host == "::1" and not _ipv6():
        pytest.skip("this machine has no IPv6 loopback")
    with serving(planted["folder"], tmp_path, "--host", host,
                 "--allow-host", "ledger.lan") as url:
        port = url.rsplit(":", 1)[1]
        for name in ("attacker.example", f"attacker.example:{port}", "127.0.0.3"):
            status, body, _ = get(url + "/", host=name)
            assert status == 400, name
            assert "ledger" not in str(body).lower() or "host name" in str(body)
        status, body, _ = get(url + "/runs.json", host="attacker.example")
        assert status == 400 and body["status"] == 400
        bound = f"[{host}]" if ":" in host else host
        for name in (f"{bound}:{port}", f"localhost:{port}", "ledger.lan", f"ledger.lan:{port}"):
            status, _, _ = get(url + "/", host=name)
            assert status == 200, name
