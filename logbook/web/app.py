"""The web view's routes: every page at ``/…`` and its JSON twin at ``/….json``.

Starlette (with uvicorn serving it) rather than the standard library's http.server: it gives
routing with path parameters, a thread pool for the synchronous SQLite reads, HEAD and 405
handling and host checking, all well kept and small; http.server would need each of those
written here. Each request opens the ledger read-only, runs the integrity check analysis runs
(logbook.verify.integrity) and builds its page inside the read transaction that was checked,
so nothing is shown from bytes that do not verify and nothing is ever written; what was
read at a head is kept while the head stays the same (`_Site`).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from logbook.errors import CheckFailed, EnvironmentProblem, InputError
from logbook.web import data, pages, runs_data
from logbook.web.claims_page import claims_data
from logbook.web.data import NotFound, Source
from logbook.web.items_page import compare_data, power_data
from logbook.web.run_items import item_data, items_data

# no script, no frame, nothing from elsewhere: a page is text, tables and one inline SVG
HEADERS = [(b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; "
            b"img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
           (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
           (b"cache-control", b"no-store")]
LOOPBACK = ("127.0.0.1", "localhost", "::1")

Build = Callable[[Source, Request], dict[str, Any]]


def _json(value: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n", status,
                    media_type="application/json")


def _error(status: int, message: str, as_json: bool) -> Response:
    if as_json:
        return _json({"error": message, "status": status}, status)
    return HTMLResponse(pages.error_page(status, message), status)


class _Site:
    """The ledger's pages. The view of the ledger (`LedgerView`) is kept from one request to
    the next while the check finds the same head: the ledger is append-only, so the same head
    is the same entries, and every request is still checked before its page is built. A new
    head, or a page that fails, drops the kept view and the next page builds a new one
    through the same checked path. Pages are built one at a time: the view is shared."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._kept: tuple[tuple[str, str | None, int], Any] | None = None

    def read(self, build: Build, request: Request) -> dict[str, Any]:
        from logbook.ledger.read_model import checked_reading
        from logbook.ledger.service import Ledger

        # the analysis's own path: checked (carried on from this machine's checked copy),
        # then read from what was checked
        with self._lock:
            try:
                with Ledger.open(self.db, write=False) as ledger, \
                        checked_reading(ledger) as checked:
                    return build(Source(ledger, self._view(ledger, checked), checked), request)
            except InputError:  # a query or path the page refuses: what was read stands
                raise
            except BaseException:  # a check failed, the ledger went away, a bug: read anew
                self._drop()
                raise

    def _view(self, ledger: Any, checked: Any) -> Any:
        """The kept view when it was read at this check's head, else a new one, kept."""
        from logbook.analysis.view import LedgerView

        at = (ledger.uuid, checked.head, checked.entries)
        if self._kept is not None:
            if self._kept[0] == at and self._kept[1].carry_on(ledger, checked):
                return self._kept[1]
            self._drop()
        view = LedgerView(ledger, checked)
        self._kept = (at, view)
        return view

    def _drop(self) -> None:
        """Let the kept view go. Its runs were moved out of the cyclic collector's sight when
        made (LedgerView._runs_read) and refer back to it: they are brought back and freed
        now, or the server would hold every view it ever made."""
        if self._kept is not None:
            self._kept = None
            gc.unfreeze()
            gc.collect()

    def page(self, build: Build, render: Callable[[dict[str, Any]], str] | None) -> Any:
        """A synchronous endpoint (run in Starlette's thread pool): the data, then its HTML
        (``render``) or the data itself as JSON (``render`` None)."""

        def endpoint(request: Request) -> Response:
            try:
                d = self.read(build, request)
            except NotFound as exc:
                return _error(404, str(exc), render is None)
            except InputError as exc:
                return _error(400, str(exc), render is None)
            except CheckFailed as exc:  # the ledger does not verify: no figure is shown
                return _error(409, str(exc), render is None)
            except EnvironmentProblem as exc:
                return _error(503, str(exc), render is None)
            return _json(d) if render is None else HTMLResponse(render(d))

        return endpoint


def _query(request: Request) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in request.query_params.multi_items():
        out.setdefault(k, []).append(v)
    return out


def _ref(request: Request) -> str:
    return str(request.path_params["ref"])


def _report_html(src: Source, request: Request) -> dict[str, Any]:
    return {"html": data.report_html(src, _ref(request))}


def routes(site: _Site) -> list[Route]:
    views: list[tuple[str, Build, Callable[[dict[str, Any]], str]]] = [
        ("/plans/{ref}", lambda s, r: data.plan_page(s, _ref(r)), pages.plan),
        ("/runs/{ref}/items/{item:path}", lambda s, r: item_data(
            s, _ref(r), str(r.path_params["item"]), _query(r)), pages.item_html),
        ("/runs/{ref}/items", lambda s, r: items_data(s, _ref(r), _query(r)), pages.items_html),
        ("/runs/{ref}", lambda s, r: runs_data.run_page(s, _ref(r), r.query_params.get("items")
                                                        == "all"), pages.run),
        ("/entries/{ref}", lambda s, r: data.entry(s, _ref(r)), pages.entry),
        ("/plans", lambda s, r: data.plans(s), pages.plans),
        ("/runs", lambda s, r: runs_data.runs(s, _query(r)), pages.runs),
        ("/audit", lambda s, r: data.audit(s), pages.audit),
        ("/retractions", lambda s, r: data.retractions(s), pages.retractions),
        ("/claims", lambda s, r: claims_data(s), pages.claims),
        ("/compare", lambda s, r: compare_data(s, _query(r)), pages.compare),
        ("/power", lambda s, r: power_data(s, _query(r)), pages.power),
        ("/integrity", lambda s, r: data.integrity_page(s), pages.integrity),
    ]
    out = [Route("/", site.page(lambda s, r: data.overview(s), pages.overview)),
           Route("/index.json", site.page(lambda s, r: data.overview(s), None)),
           Route("/plans/{ref}/report.html", site.page(_report_html, lambda d: d["html"]))]
    # the twins first: "/runs/{ref}" would also match "/runs/X.json"
    out += [Route(f"{path}.json", site.page(build, None)) for path, build, _ in views]
    out += [Route(path, site.page(build, render)) for path, build, render in views]
    return out


class _Headers:
    """Adds HEADERS to every response, the router's own 404 and 405 included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + HEADERS
            await send(message)

        await self.app(scope, receive, sending)


def _missing(request: Request, exc: Exception) -> Response:
    status = int(getattr(exc, "status_code", 404))
    wants_json = request.url.path.endswith(".json")
    text = "no such page" if status == 404 else "this view is read-only: only GET and HEAD"
    return _error(status, text, wants_json)


def host_name(header: str) -> str:
    """The name a ``Host`` header gives, without its port, lowercase: ``[::1]:8000`` is
    ``::1``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class _HostCheck:
    """Only requests addressed to a name the server answers to (loopback names, the address
    it is bound to, and those named with --allow-host) are served; any other is 400, so a web
    page elsewhere cannot read the ledger by rebinding its own name to this address."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            found = dict(scope.get("headers") or []).get(b"host", b"")
            if host_name(found.decode("latin-1")) not in self.allowed:
                response = _error(400, "this server does not answer to that host name",
                                  scope.get("path", "").endswith(".json"))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def make_app(db: Path, host: str = "127.0.0.1", allow: tuple[str, ...] = ()) -> Starlette:
    """The read-only view of the ledger at ``db``, answering only requests addressed to a
    loopback name, the address ``host`` it is bound to, or a name in ``allow``."""
    allowed = frozenset({*LOOPBACK, host_name(f"[{host}]" if ":" in host else host),
                         *(host_name(a) for a in allow)})
    middleware = [Middleware(_Headers), Middleware(_HostCheck, allowed=allowed)]
    return Starlette(routes=routes(_Site(db)), middleware=middleware,
                     exception_handlers={404: _missing, 405: _missing})
