"""Listening: bind the socket first (so a taken port or an unknown host is one sentence, not a
server log), say where the view is, then hand the socket to uvicorn until Ctrl-C, which
ends it normally (exit 0)."""

from __future__ import annotations

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


def serve(db: Path, name: str, host: str, port: int, allow: tuple[str, ...] = ()) -> None:
    import uvicorn

    from logbook.web.app import make_app

    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"serving ledger {name} read-only at http://{shown}:{bound}/ (Ctrl-C stops)",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(make_app(db, host, allow), log_level="warning", lifespan="off",
                            server_header=False, access_log=False)
    # uvicorn re-raises Ctrl-C once it has shut down cleanly
    with sock, contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    # Ctrl-C is how a server is meant to stop: a normal end (exit 0), not an interruption
    print("stopped", file=sys.stderr)
