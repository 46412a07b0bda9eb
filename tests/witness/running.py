"""Scenario builders for the witness tests: a ledger's verifier key, a witness key, and a
`logbook witness serve` process on a free loopback port, started and stopped by the test."""

from __future__ import annotations

import base64
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from conftest import CliResult, run_cli

READY = re.compile(r"^logbook witness: listening on (http://127\.0\.0\.1:\d+) as (\S+) for ")


def ok(*args: str) -> CliResult:
    r = run_cli(*args)
    assert r.code == 0, (args, r.out, r.err)
    return r


def log_vkey(ledger: Path | None = None) -> str:
    """The ledger's C2SP verifier key, as `logbook checkpoint --json` prints it."""
    pre = ["--ledger", str(ledger)] if ledger is not None else []
    return str(ok(*pre, "checkpoint", "--json").json["verifier_key"])


def witness_key(folder: Path, name: str) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{name}.key"
    ok("keys", "new", "--out", str(path))
    return path


def witness_public(key: Path) -> bytes:
    """The raw public key of a witness key file, read from the file itself (the key file
    holds a header line and the base64 32-byte seed)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    seed = base64.b64decode(key.read_text().split()[-1])
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


@dataclass
class Served:
    url: str
    vkey: str
    process: subprocess.Popen[bytes]


@contextmanager
def running_witness(key: Path, logs: list[str], state: Path,
                    name: str = "witness.test/w1") -> Iterator[Served]:
    """`logbook witness serve` in a subprocess on a free port; SIGTERM afterwards, which must
    stop it cleanly (exit 0)."""
    args = [sys.executable, "-m", "logbook", "witness", "serve", "--key", str(key), "--name",
            name, "--state", str(state), "--listen", "127.0.0.1:0"]
    for log in logs:
        args += ["--log", log]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE)
    killer = threading.Timer(60, proc.kill)  # a witness that never says it listens
    killer.start()
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        m = READY.match(line)
        assert m, f"witness did not start: {line}{proc.stderr.read().decode()}"
        yield Served(m.group(1), m.group(2), proc)
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover - a witness that hangs
            proc.kill()
            raise
        rest = proc.stderr.read().decode() if proc.stderr else ""
        assert code == 0 and "stopped" in rest, (code, rest)


def post(url: str, body: bytes) -> tuple[int, bytes, str]:
    """POST `body` to URL/add-checkpoint: (status, body, content type)."""
    request = urllib.request.Request(url + "/add-checkpoint", data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers.get("Content-Type", "")


def request_body(old: int, proof_hex: list[str], note: str) -> bytes:
    """An add-checkpoint body as C2SP tlog-witness spells it, built here from the spec."""
    lines = [f"old {old}"] + [base64.b64encode(bytes.fromhex(h)).decode() for h in proof_hex]
    return ("\n".join(lines) + "\n\n" + note).encode()
