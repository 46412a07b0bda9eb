"""A hostile server at the network edge (issue 34, item 5): a loopback server sends each
malformed answer to `verify URL`, `mirror` and the witness client (`checkpoint --witness`);
every case ends in exit 1 or 3, one sentence, within its deadline: never a traceback (70),
never a hang. A checkpoint claiming 2^32 or 2^64 - 1 entries is not believed before a file
shows it: a bad signature under --trust reads nothing for it, and a tree that is not there
ends at its first missing tile."""

from __future__ import annotations

import base64
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import prebuilt
import pytest
from conftest import CliResult, run_cli

initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
ANSWERS: dict[str, bytes | None] = {
    "garbage status line": b"HELLO WORLD\r\n\r\n",
    "no status line": b"",
    "a 70 KB header line": HEAD + b"X-Long: " + b"a" * 70_000 + b"\r\n\r\nok",
    "150 headers": HEAD + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"\r\nok",
    "a length longer than the body": HEAD + b"Content-Length: 100000\r\n\r\nshort",
    "a length that is not a number": HEAD + b"Content-Length: 10 10\r\n\r\nshort",
    "a byte a second": None,  # drips its answer: the whole deadline trips, not one read's
}


@contextmanager
def hostile(answer: bytes | None) -> Iterator[str]:
    """A loopback server that answers every request with ``answer`` (None: drips a valid
    answer one byte every 0.5 s) and closes."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    stop = threading.Event()

    def handle(conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(5)
                conn.recv(65536)
                if answer is not None:
                    conn.sendall(answer)
                    return
                for byte in HEAD + b"Content-Length: 200\r\n\r\n" + b"x" * 200:
                    if stop.is_set():
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(0.5)
            except OSError:
                pass

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        server.close()


def _within(seconds: float, *args: str) -> CliResult:
    started = time.monotonic()
    r = run_cli(*args)
    assert time.monotonic() - started < seconds, (args, "took too long")
    assert r.code in (1, 3), (args, r.code, r.err[-500:])
    ours = [line for line in r.err.splitlines() if not line.startswith("127.0.0.1 - - ")]
    assert "Traceback" not in r.err and len(ours) <= 1, r.err  # (the static server's log)
    return r


@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_malformed_answers_are_one_sentence_within_the_deadline(
        case: str, ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_READ_TIMEOUT", "3")
    key = tmp_path / "witness.key"
    assert run_cli("keys", "new", "--out", str(key)).code == 0
    vkey = run_cli("witness", "key", "--key", str(key), "--name", "w.test").out.strip()
    with hostile(ANSWERS[case]) as url:
        _within(20, "verify", url)
        _within(20, "mirror", url, str(tmp_path / "copy"))
        r = _within(20, "checkpoint", "--witness", f"{url}={vkey}", "--timeout", "3",
                    "--out", str(tmp_path / "cp"))
        assert "did not cosign" in r.err or "witness" in r.err, r.err


def _forged_checkpoint(origin: str, size: int) -> bytes:
    """A checkpoint note of ``origin`` claiming ``size`` entries, signed by a stranger."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    root = base64.b64encode(bytes([7]) * 32).decode()
    body = f"{origin}\n{size}\n{root}\n"
    key = Ed25519PrivateKey.generate()
    sig = key.sign(body.encode())
    return (body + "\n" + f"\u2014 {origin} " +
            base64.b64encode(b"\x00\x00\x00\x01" + sig).decode() + "\n").encode()


@pytest.mark.parametrize("size", [2**32, 2**64 - 1])
def test_a_huge_claimed_size_is_not_believed(size: int, ledger_dir: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from builders import static_server

    pub = tmp_path / "pub"
    assert run_cli("note", "a").code == 0
    assert run_cli("publish", str(pub)).code == 0
    origin = (pub / "checkpoint").read_text().split("\n")[0]
    key = tmp_path / "ledger.pub"
    assert run_cli("keys", "export", "--out", str(key)).code == 0
    (pub / "checkpoint").write_bytes(_forged_checkpoint(origin, size))
    with static_server(pub) as url:
        for extra in ((), ("--trust", str(key))):
            r = _within(30, "verify", url, *extra)
            assert r.code == 1
        r = _within(30, "mirror", url, str(tmp_path / "copy"))


def test_a_command_ends_at_its_deadline_however_its_waits_add_up(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file of a published ledger comes 0.6 s late (the read timeout is 5 s): `verify URL`
    and `mirror` read several, and stop at LOGBOOK_DEADLINE (2 s), exit 3 naming it."""
    from builders import static_server
    from test_publish import grow

    grow(ledger_dir, 300)
    pub = tmp_path / "pub"
    assert run_cli("publish", str(pub)).code == 0
    monkeypatch.setenv("LOGBOOK_READ_TIMEOUT", "5")
    with static_server(pub, delay=0.6) as url:
        assert run_cli("verify", url).code == 0  # without a deadline it verifies
        monkeypatch.setenv("LOGBOOK_DEADLINE", "2")
        for args in (("verify", url), ("mirror", url, str(tmp_path / "copy"))):
            r = _within(4, *args)
            assert r.code == 3 and "LOGBOOK_DEADLINE" in r.err, r.err


def test_a_slowly_fed_fifo_is_cut_at_the_deadline(ledger_dir: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO whose writer sends a byte every 0.2 s (never silent for the read timeout) is
    read until the command's deadline and no longer: exit 2, naming LOGBOOK_DEADLINE, the
    ledger unchanged."""
    import os

    fifo = tmp_path / "drafts.jsonl"
    os.mkfifo(fifo)
    stop = threading.Event()

    def drip() -> None:
        with open(fifo, "wb", buffering=0) as out:
            while not stop.is_set():
                try:
                    out.write(b" ")
                except OSError:
                    return
                time.sleep(0.2)

    before = run_cli("log", "--json").out
    monkeypatch.setenv("LOGBOOK_READ_TIMEOUT", "5")
    monkeypatch.setenv("LOGBOOK_DEADLINE", "1.5")
    writer = threading.Thread(target=drip, daemon=True)
    writer.start()
    try:
        started = time.monotonic()
        r = run_cli("append", "--jsonl", str(fifo))
        assert time.monotonic() - started < 4
    finally:
        stop.set()
    assert r.code == 2 and "LOGBOOK_DEADLINE" in r.err, r.err
    monkeypatch.delenv("LOGBOOK_DEADLINE")
    assert run_cli("log", "--json").out == before
