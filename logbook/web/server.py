"""Listening: bind the socket first (so a taken port or an unknown host is one sentence, not a
server log), say where the view is, then hand the socket to uvicorn until Ctrl-C, which
ends it normally (exit 0)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from pathlib import Path

from logbook.errors import EnvironmentProblem, InputError


def bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise InputError(f"--host {host} is not an address or a name this machine knows") \
            from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(64)
    except OSError as exc:
        sock.close()
        raise EnvironmentProblem(f"cannot listen on {host}:{port} ({exc.strerror})") from None
    return sock


def deadlined_protocol(deadline: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol (h11), with one more rule: each request must arrive whole
    (its line, headers and any body) within ``deadline`` seconds of its first byte (of the
    connection, for the first), or it is answered 408 and the connection closed. uvicorn
    alone keeps a request that is sent a byte at a time open for as long as the bytes come.
    A malformed request is answered 400 by uvicorn itself."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    whole = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)

    class Deadlined(H11Protocol):
        cut: asyncio.TimerHandle | None = None

        def arm(self) -> None:
            if self.cut is None:
                self.cut = self.loop.call_later(deadline, self.too_slow)

        def disarm(self) -> None:
            if self.cut is not None:
                self.cut.cancel()
                self.cut = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self.arm()

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE:
                self.arm()
            super().data_received(data)
            if self.conn.their_state in whole:
                self.disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm()
            super().connection_lost(exc)

        def too_slow(self) -> None:
            self.cut = None
            if self.conn.their_state in whole or self.transport.is_closing():
                return
            self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n"
                                 b"connection: close\r\n\r\n")
            self.transport.close()

    return Deadlined


def serve(db: Path, name: str, host: str, port: int, allow: tuple[str, ...] = ()) -> None:
    import uvicorn

    from logbook.config import request_deadline
    from logbook.web.app import make_app

    deadline = request_deadline()  # a bad value is refused before anything listens

    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"serving ledger {name} read-only at http://{shown}:{bound}/ (Ctrl-C stops)",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(make_app(db, host, allow), log_level="warning", lifespan="off",
                            server_header=False, access_log=False,
                            http=deadlined_protocol(deadline))
    # uvicorn re-raises Ctrl-C once it has shut down cleanly
    with sock, contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    # Ctrl-C is how a server is meant to stop: a normal end (exit 0), not an interruption
    print("stopped", file=sys.stderr)
