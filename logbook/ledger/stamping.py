"""`logbook checkpoint --timestamp URL`: a checkpoint stamped by a time-stamping authority
(RFC 3161; docs/format.md, "Timestamps"). The checkpoint's body is sent (as its SHA-256) to the
TSA, the answer is accepted only when it grants a token over that body, and it is appended as a
`timestamp` entry: signed, chained and published with the rest of the ledger, so that anyone can
check it against the TSA's certificate (`logbook verify --tsa-cert`)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from logbook.errors import EnvironmentProblem, InputError

if TYPE_CHECKING:
    from cryptography.x509 import Certificate

    from logbook.crypto.signing import SigningKey
    from logbook.ledger.entry import Entry
    from logbook.ledger.service import Ledger


def tsa_url(url: str) -> str:
    """``url`` when it can name a TSA (http or https, a host); InputError otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"--timestamp {url}: give the http(s):// URL of a time-stamping "
                         "authority (RFC 3161)")
    return url


def stamp(ledger: Ledger, key: SigningKey, note: str, url: str, timeout: float,
          certs: list[Certificate] | None = None) -> Entry:
    """Ask the TSA at ``url`` to stamp the checkpoint ``note``, check its answer (and, with
    ``certs``, its signature), and append it as a `timestamp` entry."""
    from logbook.crypto.timestamps import MAX_RESPONSE_BYTES, check, read_response, request
    from logbook.tlog.checkpoint import body_text, parse_checkpoint
    from logbook.verify.fetch import request as send

    cp = parse_checkpoint(note)[0]
    message = body_text(cp)
    query, nonce = request(message)
    parts = urlsplit(url)  # said and kept without any credentials it carries
    shown = urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path,
                        parts.query, ""))
    answer = send(url, shown, MAX_RESPONSE_BYTES, timeout, method="POST", body=query,
                  headers={"Content-Type": "application/timestamp-query",
                           "Accept": "application/timestamp-reply"},
                  per="--timeout, or LOGBOOK_READ_TIMEOUT")
    if answer.status != 200:
        raise EnvironmentProblem(f"the TSA at {shown} answered HTTP {answer.status}, not a "
                                 "time-stamp")
    what = f"the answer of the TSA at {shown}"
    if len(answer.body) > MAX_RESPONSE_BYTES:
        raise EnvironmentProblem(f"{what} is more than {MAX_RESPONSE_BYTES} bytes")
    try:
        stamped = read_response(answer.body, message, what, nonce)
    except InputError as exc:  # the TSA's fault, not the command line's
        raise EnvironmentProblem(str(exc)) from None
    if certs is not None:
        problem = check(answer.body, message, certs)
        if problem is not None:
            raise EnvironmentProblem(f"{what} is not signed by the TSA --tsa-cert names: "
                                     f"{problem}")
    body = {"size": cp.size, "root": cp.root.hex(), "tsa": shown, "time": stamped.time,
            "response": base64.b64encode(answer.body).decode()}
    return ledger.append("timestamp", body, key)
