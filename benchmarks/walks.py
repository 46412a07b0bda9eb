"""The walks of docs/architecture.md (issue 35): how many of logbook's files three everyday
commands pass through, and how many calls hand the work from one file to another, counted
with a profiler hook on a small ledger: `logbook append RUN` (a run of 100 items), `logbook
report PLAN` (2 arms of 3 runs) and `logbook mirror URL DEST` (an update of a mirror after 40
new entries). Fewer files and fewer hand-offs mean a walk a reader can follow.

Prints one line per walk; never fails (the counts are written in docs/architecture.md).

Run: python benchmarks/walks.py
"""

from __future__ import annotations

import functools
import http.server
import io
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import orjson

import logbook

PACKAGE = str(Path(logbook.__file__).resolve().parent) + os.sep  # wherever it is installed


def cli(*args: str) -> int:
    from logbook.cli.main import run

    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = run(list(args))
    if code != 0:
        raise SystemExit(f"logbook {' '.join(args)} failed ({code}): {err.getvalue()}")
    return code


def walk(fn: Callable[[], Any]) -> tuple[int, int]:
    """(files of logbook/ that ran, calls from one such file into another) while ``fn`` runs."""
    files: set[str] = set()
    handoffs = 0

    def hook(frame: Any, event: str, _arg: Any) -> None:
        nonlocal handoffs
        if event != "call":
            return
        here = frame.f_code.co_filename
        if not here.startswith(PACKAGE):
            return
        files.add(here)
        back = frame.f_back
        while back is not None and not back.f_code.co_filename.startswith(PACKAGE):
            back = back.f_back  # through the standard library and the other packages
        if back is not None and back.f_code.co_filename != here:
            handoffs += 1

    sys.setprofile(hook)
    try:
        code = fn()
    finally:
        sys.setprofile(None)
    if code not in (0, None):
        raise SystemExit(f"walk failed with exit {code}")
    return len(files), handoffs


def run_body(plan: str, arm: str, seed: int) -> dict[str, Any]:
    import random

    rng = random.Random(seed)
    return {"plan": plan, "arm": arm, "status": "completed",
            "apparatus": {"model": "m", "kv_cache_precision": arm,
                          "decoding": {"temperature": 0, "seed": seed}},
            "outcomes": {"metric": "acc", "id": [f"q{i}" for i in range(100)],
                         "score": [float(rng.random() < 0.7) for _ in range(100)]}}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="logbook-walks-") as tmp:
        work = Path(tmp) / "work"
        os.environ.update({"XDG_CONFIG_HOME": str(Path(tmp) / "cfg"),
                           "XDG_STATE_HOME": str(Path(tmp) / "state"),
                           "LOGBOOK_DIR": str(work)})
        for var in ("LOGBOOK_KEY", "LOGBOOK_SESSION", "LOGBOOK_STATE_DIR"):
            os.environ.pop(var, None)
        work.mkdir()
        assert cli("init", str(work), "--name", "walks") == 0
        plan = {"slug": "walk", "title": "walks", "runs_per_arm": 3,
                "metric": {"name": "acc", "kind": "proportion"},
                "suite": {"name": "s", "version": "1", "n_items": 100},
                "arms": [{"name": "f16", "role": "control"}, {"name": "q8", "role": "treatment"}],
                "success": [{"stat": "effect_low", "op": ">", "value": -0.05}]}
        (Path(tmp) / "plan.json").write_bytes(orjson.dumps(plan))
        assert cli("plan", str(Path(tmp) / "plan.json")) == 0
        for k in range(5):
            arm = ("f16", "q8")[k % 2]
            (Path(tmp) / f"r{k}.json").write_bytes(orjson.dumps(
                {"kind": "run", "body": run_body("walk", arm, k)}))
            assert cli("append", str(Path(tmp) / f"r{k}.json")) == 0
        (Path(tmp) / "r5.json").write_bytes(orjson.dumps(
            {"kind": "run", "body": run_body("walk", "q8", 5)}))
        files, hands = walk(lambda: cli("append", str(Path(tmp) / "r5.json")))
        print(f"walk append (a run of 100 items): {files} files, {hands} hand-offs")
        assert cli("report", "walk") == 0  # the first check keeps this machine's copy
        assert cli("note", "one more") == 0
        files, hands = walk(lambda: cli("report", "walk"))
        print(f"walk report (2 arms x 3 runs): {files} files, {hands} hand-offs")
        pub, dest = Path(tmp) / "pub", Path(tmp) / "mirror"
        assert cli("publish", str(pub)) == 0
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(pub)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        try:
            assert cli("mirror", url, str(dest)) == 0
            for i in range(40):
                assert cli("note", f"n{i}") == 0
            assert cli("publish", str(pub)) == 0
            files, hands = walk(lambda: cli("mirror", url, str(dest)))
        finally:
            server.shutdown()
            server.server_close()
        print(f"walk mirror (an update of 40 entries): {files} files, {hands} hand-offs")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    main()
