"""Clients that misbehave on purpose, for the servers' request deadlines (issue 34, item 5):
one that sends a request a byte at a time, one that sends nothing, one that sends bytes that
are not HTTP. Each returns what the server answered and how long it kept the connection."""

from __future__ import annotations

import socket
import time
import urllib.parse


def _connect(url: str) -> socket.socket:
    parts = urllib.parse.urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    return sock


def _rest(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (or 30 s of silence)."""
    out = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            return out
        if not chunk:
            return out
        out += chunk


def drip(url: str, request: bytes, every: float, most: float = 60,
         at_once: bytes = b"") -> tuple[bytes, float]:
    """Send ``at_once``, then ``request`` one byte every ``every`` seconds (never all of it,
    when it is long enough) until the server answers or closes: (its answer, seconds the
    connection lived)."""
    started = time.monotonic()
    with _connect(url) as sock:
        sock.sendall(at_once)
        sock.settimeout(every)
        for byte in request:
            if time.monotonic() - started > most:
                break
            try:
                sock.sendall(bytes([byte]))
                seen = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                seen = b""
            sock.settimeout(30)
            return seen + _rest(sock), time.monotonic() - started
        sock.settimeout(30)
        return _rest(sock), time.monotonic() - started


def silent(url: str) -> tuple[bytes, float]:
    """Connect and send nothing."""
    started = time.monotonic()
    with _connect(url) as sock:
        return _rest(sock), time.monotonic() - started


def send(url: str, request: bytes) -> bytes:
    """Send ``request`` at once; the server's whole answer."""
    with _connect(url) as sock:
        sock.sendall(request)
        return _rest(sock)
