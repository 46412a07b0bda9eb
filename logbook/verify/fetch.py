"""The one HTTP client of `verify URL`, `mirror` and the witness client (issue 34): every
request has a whole deadline (not only one per read, which a server sending a byte a second
never trips), a bounded answer (its status line, headers and body), and every way it can fail
is one sentence (EnvironmentProblem, exit 3), never a traceback.

The deadline is kept by a timer that shuts the connection's socket down when it passes, which
wakes whatever read is waiting on it; the standard library's client keeps a header line under
64 KiB and the headers under 100, and refuses an answer that breaks them (both mapped here).
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass

from logbook import config
from logbook.errors import EnvironmentProblem, InputError

__all__ = ["Answer", "request"]

_REDIRECTS = 3
_CLOCK_SLACK = 0.05  # seconds: a socket timeout may be rounded a little short of its value


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes  # at most the limit + 1 bytes, so a caller can tell an answer over its limit
    content_type: str
    reason: str


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InputError(f"{url} is not a URL that can be fetched ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{url} is not an http(s) URL")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    if parts.scheme == "https":
        return http.client.HTTPSConnection(parts.hostname, port, timeout=timeout,
                                           context=ssl.create_default_context()), path
    return http.client.HTTPConnection(parts.hostname, port, timeout=timeout), path


def request(url: str, shown: str, limit: int, deadline: float, *, method: str = "GET",
            body: bytes | None = None, headers: dict[str, str] | None = None,
            per: str = "LOGBOOK_READ_TIMEOUT") -> Answer:
    """``method`` ``url`` within ``deadline`` seconds in all (each read also within it), its
    answer's body read to at most ``limit`` + 1 bytes; ``shown`` names the URL in messages
    (without its credentials); ``per`` names what set ``deadline``. Redirects of a GET are
    followed, three at most. No request waits past the command's own deadline
    (LOGBOOK_DEADLINE, logbook.config)."""
    for _ in range(_REDIRECTS + 1):
        left = config.time_left()
        if left <= 0:
            raise EnvironmentProblem(f"{shown} was not fetched: the command ran for its whole "
                                     f"deadline, {config.deadline():g} s (LOGBOOK_DEADLINE)")
        cause = per if deadline <= left else "LOGBOOK_DEADLINE"
        answer, location = _once(url, shown, limit, min(deadline, left), method, body,
                                 headers or {}, cause)
        if location is None:
            return answer
        url = urllib.parse.urljoin(url, location)
    raise EnvironmentProblem(f"{shown} redirects more than {_REDIRECTS} times")


def _once(url: str, shown: str, limit: int, deadline: float, method: str,
          body: bytes | None, headers: dict[str, str],
          cause: str) -> tuple[Answer, str | None]:
    conn, path = _connection(url, deadline)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        sock = conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(deadline, expire)
    timer.daemon = True
    started = time.monotonic()
    timer.start()
    try:
        conn.request(method, path, body=body, headers={"User-Agent": "logbook",
                                                       "Accept-Encoding": "identity",
                                                       **headers})
        response = conn.getresponse()
        data = response.read(limit + 1)
        location = response.getheader("Location")
        answer = Answer(response.status, data, response.getheader("Content-Type") or "",
                        response.reason)
    except (http.client.HTTPException, OSError, ValueError) as exc:
        # the socket's own timeout (also ``deadline``) may fire before the timer does, under
        # load: a failure at the deadline is the deadline's, whichever noticed it first
        if expired.is_set() or time.monotonic() - started >= deadline - _CLOCK_SLACK:
            raise EnvironmentProblem(f"{shown} did not answer in full within {deadline:g} s "
                                     f"({cause})") from None
        raise EnvironmentProblem(f"{shown} cannot be fetched: {_reason(exc)}") from None
    finally:
        timer.cancel()
        conn.close()
    if expired.is_set():
        raise EnvironmentProblem(f"{shown} did not answer in full within {deadline:g} s "
                                 f"({cause})")
    if method == "GET" and answer.status in (301, 302, 303, 307, 308) and location:
        return answer, location
    return answer, None


def _reason(exc: BaseException) -> str:
    """What went wrong, in a few words: a malformed answer is named as such."""
    if isinstance(exc, http.client.BadStatusLine):
        return "its answer does not begin with an HTTP status line"
    if isinstance(exc, http.client.LineTooLong):
        return "its answer has a header line over 64 KiB"
    if isinstance(exc, http.client.HTTPException):
        text = " ".join(str(exc).split())[:120]
        return f"its answer is not well-formed HTTP ({text or type(exc).__name__})"
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
    return " ".join(str(reason).split())[:200] or type(exc).__name__
