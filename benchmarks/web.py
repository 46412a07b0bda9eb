"""Budget (issue 37): `logbook serve` on a 100,000-entry ledger (the brief benchmark's: 4,000
plans, 96,000 runs): the runs table's first page, and a filtered and sorted page, each in at
most 0.5 s, printed as a ratio to `logbook log -n 20 --json` on the same ledger (a page is
checked, as every page is, carried on from this machine's checked copy).

Each page is fetched over HTTP from a server started once (its first page, which makes the
checked copy, is not timed), alternating with the peer command, medians of 5.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import paired_medians, report, run_checked, shared_ledger
from brief import build

PAGES = {"first page": "/runs.json",
         "filtered page": "/runs.json?where=seed%3D3&status=completed&sort=-score"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=600) as answer:
        return bytes(answer.read())


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-web-"))
    server = None
    try:
        size = shared_ledger("brief", tmp, build)
        env = {**os.environ, "LOGBOOK_DIR": str(tmp), "LOGBOOK_STATE_DIR": str(tmp / "state")}
        exe = str(Path(sys.executable).parent / "logbook")
        port = _free_port()
        server = subprocess.Popen([exe, "serve", "--port", str(port)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 600
        while True:  # up, and the checked copy made by its first page
            try:
                _get(base + "/runs.json?per=1")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("logbook serve did not start: " + (
                        server.stderr.read().decode() if server.stderr else "")) from None
                time.sleep(0.5)
        for name, path in PAGES.items():
            ours, peer = paired_medians(
                lambda path=path: _get(base + path),  # type: ignore[misc]
                lambda: run_checked([exe, "log", "-n", "20", "--json"], env=env), repeat=5)
            report(f"web /runs {name} ({size:,} entries)", ours / peer,
                   f"a page <= 0.5 s: {'met' if ours <= 0.5 else 'NOT met'}",
                   f"GET {path} {ours:.2f} s, logbook log -n 20 --json {peer:.2f} s "
                   "(medians of 5, alternating)")
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
