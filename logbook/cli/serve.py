"""`logbook serve`: the read-only web view (logbook.web; the ``web`` extra)."""

from __future__ import annotations

import typer

from logbook.cli import state
from logbook.errors import EnvironmentProblem


def serve(
    host: str = typer.Option("127.0.0.1", "--host", metavar="HOST", help="Address to listen "
                             "on (default 127.0.0.1, this machine only)."),
    port: int = typer.Option(8000, "--port", metavar="N", min=0, max=65535,
                             help="Port to listen on (default 8000; 0 picks a free one, "
                             "printed on stderr)."),
    allow_host: list[str] = typer.Option([], "--allow-host", metavar="NAME",
                                         help="Also answer requests addressed to NAME "
                                         "(by default only loopback names and the address "
                                         "listened on)."),
) -> None:
    """Serve a read-only web view of the ledger: plans, reports, runs, audit, retractions.

    Every page has a JSON twin (the same path with .json). Nothing is written; every page
    is computed from entries that were just verified. Stops on Ctrl-C.
    """
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise EnvironmentProblem("`logbook serve` needs Starlette and uvicorn: "
                                 "pip install 'logbook[web]'") from None
    from logbook.web.server import serve as listen

    with state.open_ledger() as ledger:
        db, name = ledger.path, ledger.name
    listen(db, name, host, port, tuple(allow_host))


def register(app: typer.Typer) -> None:
    app.command()(serve)
