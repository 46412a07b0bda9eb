"""Budget (issue 34, item 9): `logbook mirror URL DEST` with nothing new, on a published ledger of
100,000 entries that DEST mirrored before, in at most 0.2 s: one request (the checkpoint), its
signature and size and root compared with what the mirror verified, no tile or entry read
again. The peer, measured in the same run, is the least any client pays: a cold `python`
process fetching the checkpoint from the same server (its ratio is printed beside the
budget's seconds). Then GROWN more entries are published and mirrored: only those are
verified (logbook.verify.mirror_tail), against the first mirror's time.

The ledger is built in-process in batches, published with `logbook publish`, served by a
static HTTP server on 127.0.0.1 and mirrored once (that first mirror's time is printed too).
Medians of 7, alternating with the peer after a warm-up. Prints and never fails: CI machines
are noisy.
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import paired_medians, report, run_checked

SIZE = 100_000
BATCH = 2000
GROWN = 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
        os.environ.pop("LOGBOOK_KEY", None)
        exe = str(Path(sys.executable).parent / "logbook")
        folder = tmp / "ledger"
        folder.mkdir()
        run_checked([exe, "init", str(folder), "--name", "bench"])

        from logbook.crypto.signing import load_key
        from logbook.ledger.service import Ledger

        key = load_key()
        started = time.perf_counter()
        with Ledger.open(folder) as ledger:
            n = ledger.size()
            while n < SIZE:
                count = min(BATCH, SIZE - n)
                ledger.append_many([("note", {"text": f"note {n + i}", "refs": []})
                                    for i in range(count)], key)
                n += count
        built = time.perf_counter() - started
        pub, dest = tmp / "pub", tmp / "mirror"
        env = {**os.environ, "LOGBOOK_DIR": str(folder)}
        run_checked([exe, "publish", str(pub)], env=env)
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Quiet, directory=str(pub)))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        try:
            started = time.perf_counter()
            run_checked([exe, "mirror", url, str(dest)], env=env)
            first = time.perf_counter() - started
            fetch = ("import urllib.request; "
                     f"urllib.request.urlopen({url + 'checkpoint'!r}, timeout=30).read()")
            ours, peer = paired_medians(
                lambda: run_checked([exe, "mirror", url, str(dest)], env=env),
                lambda: run_checked([sys.executable, "-c", fetch], env=env))
            with Ledger.open(folder) as ledger:  # GROWN more entries, published
                ledger.append_many([("note", {"text": f"new {i}", "refs": []})
                                    for i in range(GROWN)], key)
            run_checked([exe, "publish", str(pub)], env=env)
            started = time.perf_counter()
            run_checked([exe, "mirror", url, str(dest)], env=env)
            grown = time.perf_counter() - started
        finally:
            server.shutdown()
            server.server_close()
        report("mirror, nothing new", ours / peer, f"<= 0.2 s: {ours:.3f} s",
               f"logbook mirror {ours:.3f} s, a python process fetching the checkpoint "
               f"{peer:.3f} s (medians of 7, alternating); {SIZE:,} entries built in "
               f"{built:.1f} s, the first mirror {first:.1f} s")
        report("mirror, grown", grown / first, "<= 0.1 (goal: the new entries only)",
               f"logbook mirror {grown:.2f} s after {GROWN} entries were appended to the "
               f"{SIZE:,} it had mirrored, against {first:.1f} s for the first mirror")


if __name__ == "__main__":
    main()
