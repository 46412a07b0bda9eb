"""`logbook witness serve`: a C2SP tlog-witness (docs/auditing.md §11).

`POST /add-checkpoint` takes `old <size>`, a consistency proof and a signed checkpoint, and
answers as C2SP tlog-witness says:

* 400: the body is malformed, or its old size is larger than the checkpoint's (a log that
  goes backwards);
* 404: the checkpoint's origin is not a log this witness follows;
* 403: no signature on it verifies with a key the witness holds for that log;
* 409 (body: the latest size held, `text/x.tlog.size`): the old size is not the size of the
  latest checkpoint cosigned, or it is, and so is the new size, but the root differs (a fork
  at the same size; C2SP answers 409 for it, and the client tells it apart by the size);
* 422: the consistency proof from the old checkpoint to the new one does not verify;
* 200: one `cosignature/v1` line by the witness's key, after the new checkpoint is on disk.

Checking and recording are one compare-and-swap (logbook.witness.state).
"""

from __future__ import annotations

import contextlib
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from logbook.crypto.signing import SigningKey
from logbook.errors import InputError, LogbookError
from logbook.tlog import merkle
from logbook.tlog.checkpoint import body_text
from logbook.tlog.note import verify_note
from logbook.tlog.witness import (
    SIZE_CONTENT_TYPE,
    cosignature_line,
    cosigned_message,
    encode_size,
    parse_request,
)
from logbook.witness.state import Latest, WitnessState

__all__ = ["MAX_REQUEST_BYTES", "Answer", "LogKey", "Witness", "parse_log", "serve"]

_LENGTH = re.compile(r"[0-9]+", re.ASCII)  # not str.isdigit, which takes "²"
# a checkpoint note is at most 64 KiB where logbook reads one; 63 proof lines are ~3 KiB
MAX_REQUEST_BYTES = 128 * 1024


@dataclass(frozen=True)
class LogKey:
    """A log the witness follows: its origin and the (note key name, public key) of a key
    that signs its checkpoints."""

    origin: str
    key_name: str
    public: bytes


def parse_log(value: str) -> LogKey:
    """`--log ORIGIN=VERIFIER_KEY` (or the verifier key alone, its name being the origin,
    as logbook's are); the key is a C2SP note verifier key of type 0x01 (Ed25519)."""
    from logbook.crypto.points import public_key_problem
    from logbook.tlog.note import parse_verifier_key

    origin, sep, vkey = value.partition("=")
    if not sep or "+" in origin:
        origin, vkey = "", value
    try:
        name, public = parse_verifier_key(vkey.strip())
    except InputError as exc:
        raise InputError(f"--log {value}: {exc}") from None
    problem = public_key_problem(public)
    if problem is not None:
        raise InputError(f"--log {value}: the log's key is refused: {problem}")
    return LogKey(origin or name, name, public)


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"


def _text(status: int, message: str) -> Answer:
    return Answer(status, (message + "\n").encode("utf-8"))


class Witness:
    """The witness's decisions, apart from HTTP: one `add_checkpoint` per request."""

    def __init__(self, name: str, key: SigningKey, logs: Sequence[LogKey],
                 state: WitnessState, clock: Callable[[], float] = time.time) -> None:
        self.name, self.key, self.state, self.clock = name, key, state, clock
        self.logs: dict[str, list[LogKey]] = {}
        for log in logs:
            self.logs.setdefault(log.origin, []).append(log)

    def add_checkpoint(self, body: bytes) -> Answer:
        from logbook.tlog.checkpoint import parse_checkpoint

        try:
            request = parse_request(body)
            cp, sigs = parse_checkpoint(request.note)
        except InputError as exc:
            return _text(400, f"malformed request: {exc}")
        keys = self.logs.get(cp.origin)
        if keys is None:
            return _text(404, f"unknown log {cp.origin}")
        text = body_text(cp)
        if not any(verify_note((text, sigs), k.key_name, [k.public]) for k in keys):
            return _text(403, f"the checkpoint is not signed by a key of {cp.origin}")
        if request.old_size > cp.size:
            return _text(400, f"old size {request.old_size} is larger than the checkpoint's "
                         f"size {cp.size}")
        if request.old_size == 0 and request.proof:
            return _text(400, "a request from old size 0 carries no proof")

        def decide(latest: Latest | None) -> tuple[Latest | None, Answer]:
            held = latest.size if latest is not None else 0
            if request.old_size != held:
                return None, Answer(409, encode_size(held), SIZE_CONTENT_TYPE)
            if latest is not None:
                if cp.size == latest.size:
                    if cp.root != latest.root:  # a fork at the held size: C2SP's 409
                        return None, Answer(409, encode_size(held), SIZE_CONTENT_TYPE)
                    if request.proof:
                        return None, _text(422, "a proof between equal sizes must be empty")
                elif not merkle.verify_consistency(latest.size, cp.size, latest.root, cp.root,
                                                   list(request.proof)):
                    return None, _text(422, f"the consistency proof from size {latest.size} "
                                       f"to {cp.size} does not verify")
            note = request.note.decode("utf-8")
            return Latest(cp.size, cp.root, note), Answer(200, self._cosign(text))

        return self.state.update(cp.origin, decide)

    def _cosign(self, text: bytes) -> bytes:
        timestamp = int(self.clock())
        signature = self.key.sign(cosigned_message(text, timestamp))
        line = cosignature_line(self.name, self.key.public.raw, timestamp, signature)
        return line.encode("utf-8")


def _handler(witness: Witness, deadline: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "logbook-witness"
        protocol_version = "HTTP/1.1"
        # a read waits past the deadline only until the cut (below) has answered 408: the
        # socket's own timeout is a backstop, never the first to end a slow request
        timeout = deadline + 5

        def log_message(self, format: str, *args: object) -> None:
            pass  # one line per request would drown the startup message; errors are answered

        def handle_one_request(self) -> None:
            """One request, which must arrive whole (line, headers and body) within the
            deadline: a client sending a byte now and then is answered 408 and cut off."""
            # answering and cutting off exclude each other: whichever comes first, alone
            self.gate, self.answering, self.cut_off = threading.Lock(), False, False
            cut = threading.Timer(deadline, self._too_slow)
            cut.daemon = True
            cut.start()
            try:
                super().handle_one_request()
            except OSError:  # the connection was cut or the client went away
                self.close_connection = True
            finally:
                cut.cancel()

        def _too_slow(self) -> None:
            with self.gate:
                if self.answering:
                    return
                self.cut_off = self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.sendall(b"HTTP/1.1 408 Request Timeout\r\n"
                                            b"Content-Length: 0\r\nConnection: close\r\n\r\n")
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)

        def _answer(self, answer: Answer) -> None:
            with self.gate:
                if self.cut_off:
                    return
                self.answering = True
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def do_GET(self) -> None:
            self.close_connection = True
            self._answer(_text(405, "POST /add-checkpoint is the only call"))

        def do_POST(self) -> None:
            if self.path != "/add-checkpoint":
                self.close_connection = True
                self._answer(_text(404, f"no such call {self.path}"))
                return
            length = self.headers.get("Content-Length")
            if length is None:
                self.close_connection = True
                self._answer(_text(411, "a Content-Length is required"))
                return
            if not _LENGTH.fullmatch(length.strip()):
                self.close_connection = True
                self._answer(_text(400, "malformed Content-Length: not one decimal number"))
                return
            if len(length.strip()) > 9 or int(length) > MAX_REQUEST_BYTES:
                self.close_connection = True
                self._answer(_text(413, f"a request is at most {MAX_REQUEST_BYTES} bytes"))
                return
            body = self.rfile.read(int(length))
            if len(body) < int(length):  # the client stopped sending, or was cut off
                self.close_connection = True
                return
            with self.gate:  # read whole in time: it is answered, however long that takes
                if self.cut_off:
                    return
                self.answering = True
            try:
                answer = witness.add_checkpoint(body)
            except LogbookError as exc:  # the state cannot be read or written: cosign nothing
                print(f"logbook witness: {exc}", file=sys.stderr, flush=True)
                answer = _text(500, "the witness cannot keep its state; nothing was cosigned")
            self._answer(answer)

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True


def serve(witness: Witness, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve until SIGTERM or SIGINT; `ready` gets the URL once the socket listens."""
    import signal

    from logbook.config import request_deadline

    server = _Server((host, port), _handler(witness, request_deadline()))
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    try:
        ready(f"http://{host}:{server.server_address[1]}")
        while not stop.wait(0.2):
            pass
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        for s, handler in previous.items():
            signal.signal(s, handler)
    print("logbook witness: stopped", file=sys.stderr)
