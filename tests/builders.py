"""Drafts a user would write: plans and runs, as plain JSON-ready dicts."""

from __future__ import annotations

import random
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson


def plan_body(slug: str = "kv-q8-vs-f16", runs_per_arm: int = 3, n_items: int = 50,
              arms: tuple[str, ...] = ("f16", "q8"), **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "slug": slug, "title": f"Plan {slug}", "decision": "ship or not",
        "hypothesis": "no difference", "runs_per_arm": runs_per_arm, "min_effect": 0.05,
        "variable": ["kv_cache_precision"],
        "metric": {"name": "acc", "kind": "proportion", "higher_is_better": True},
        "suite": {"name": "suite", "version": "1", "n_items": n_items},
        "arms": [{"name": a, "role": "control" if i == 0 else "treatment"}
                 for i, a in enumerate(arms)],
        "success": [{"stat": "effect_low", "op": ">", "value": -0.05}],
        "failure": [{"stat": "effect_high", "op": "<", "value": -0.05}],
    }
    body.update(extra)
    return body


def run_body(plan: str | None, arm: str | None, n_items: int = 50, seed: int = 0, p: float = 0.7,
             missing: int = 0, status: str = "completed", **extra: Any) -> dict[str, Any]:
    rng = random.Random(seed)
    ids = [f"item-{i:04d}" for i in range(n_items)]
    score: list[float | None] = [1.0 if rng.random() < p else 0.0 for _ in ids]
    error: list[str | None] = [None] * n_items
    for i in range(missing):
        score[i] = None
        error[i] = "request timed out"
    body: dict[str, Any] = {
        "plan": plan, "arm": arm, "status": status,
        "apparatus": {"model": "m-7b", "engine": "llama.cpp", "engine_build": "b1234",
                      "kv_cache_precision": arm or "f16",
                      "decoding": {"temperature": 0.0, "seed": seed}},
    }
    if status == "completed":
        body["outcomes"] = {"metric": "acc", "id": ids, "score": score, "error": error}
    else:
        body["reason"] = "engine crashed"
    body.update(extra)
    return body


def draft(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, "body": body}


def write_json(path: Path, value: Any) -> Path:
    path.write_bytes(orjson.dumps(value))
    return path


def write_jsonl(path: Path, values: list[Any]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(v) + b"\n" for v in values))
    return path


def write_eval(path: Path, members: dict[str, bytes],
               packed: dict[str, bytes] | None = None,
               declared: dict[str, tuple[int, int]] | None = None) -> Path:
    """A .eval archive as Inspect writes it (zstd members, zip method 93); ``packed`` gives a
    member's compressed bytes as they are, instead of compressing its data, and ``declared``
    its (CRC-32, size) for the zip directory, instead of its data's."""
    import zstandard

    body, directory = bytearray(), bytearray()
    for name, data in members.items():
        raw_name = name.encode()
        blob = (packed or {}).get(name) or zstandard.ZstdCompressor().compress(data)
        crc, size = (declared or {}).get(name) or (zlib.crc32(data), len(data))
        sizes = (crc, len(blob), size, len(raw_name))
        offset = len(body)
        body += struct.pack("<4s5H3I2H", b"PK\x03\x04", 63, 0, 93, 0, 33, *sizes, 0)
        body += raw_name + blob
        directory += struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 63, 63, 0, 93, 0, 33, *sizes,
                                 0, 0, 0, 0, 0, offset)
        directory += raw_name
    n = len(members)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, n, n, len(directory), len(body), 0)
    path.write_bytes(bytes(body + directory + end))
    return path


@contextmanager
def static_server(root: Path, delay: float = 0.0) -> Iterator[str]:
    """A static HTTP server on 127.0.0.1 serving the folder ``root``; yields its URL and stops
    it afterwards (a published ledger as any web server would serve it). ``delay``: seconds
    it waits before each answer (a slow server; a client that gave up is not answered)."""
    import contextlib
    import functools
    import http.server
    import threading
    import time

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            time.sleep(delay)
            with contextlib.suppress(OSError):
                super().do_GET()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=str(root)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# A process appending ``count`` entries (a run every third, notes between) to the ledger in
# ``work`` with the user's key: `.format(tests=, work=, count=, w=)` and run with python -c.
APPENDER = """
import sys
from pathlib import Path
from logbook.crypto.signing import load_key
from logbook.ledger.service import Ledger
sys.path.insert(0, {tests!r})
from builders import run_body
key = load_key()
with Ledger.open(Path({work!r})) as ledger:
    for k in range({count}):
        if k % 3 == 0:
            ledger.append("run", run_body(None, None, n_items=30, seed=k, missing=k % 2), key)
        else:
            ledger.append("note", {{"text": "writer {w} note " + str(k)}}, key)
"""
