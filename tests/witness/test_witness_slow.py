"""The witness server answers malformed requests and cuts slow ones (issue 34, item 5): a
Content-Length that is not one decimal number is 400 (it closed the connection without an
answer on `²`, 5,000 digits or `10 10`), one too large 413; a request that does not arrive
whole within LOGBOOK_REQUEST_DEADLINE is answered 408 and the connection closed (a request
sent a byte at a time was kept open past 70 s); an honest request is cosigned as ever."""

from __future__ import annotations

from pathlib import Path

import pytest
from running import log_vkey, post, running_witness, witness_key
from slow_clients import drip, send, silent
from test_witness_server import NAME, checkpoint, request_body

DEADLINE = 1.5


def _post(length: str, body: bytes = b"old 0\n\n") -> bytes:
    return (b"POST /add-checkpoint HTTP/1.1\r\nHost: w\r\nContent-Length: "
            + length.encode() + b"\r\n\r\n" + body)


@pytest.mark.parametrize("length", ["\u00b2", "10 10", "-5", "0x10", "1e3", ""])
def test_a_malformed_length_is_400(length: str, ledger_dir: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_REQUEST_DEADLINE", str(DEADLINE))
    key = witness_key(tmp_path / "keys", "w1")
    with running_witness(key, [log_vkey()], tmp_path / "w1.state", NAME) as w:
        answer = send(w.url, _post(length))
        assert answer.startswith(b"HTTP/1.1 400"), answer[:120]
        assert send(w.url, _post("9" * 5000)).startswith(b"HTTP/1.1 413")


def test_slow_and_silent_requests_are_cut_and_honest_ones_cosigned(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_REQUEST_DEADLINE", str(DEADLINE))
    key = witness_key(tmp_path / "keys", "w1")
    note = checkpoint(tmp_path / "cp")
    with running_witness(key, [log_vkey()], tmp_path / "w1.state", NAME) as w:
        # the headers a byte at a time
        answer, lived = drip(w.url, _post("100", b"x" * 100), every=0.2)
        assert answer.startswith(b"HTTP/1.1 408") and lived < DEADLINE + 2, (answer, lived)
        # the headers at once, the body a byte at a time
        body = request_body(0, [], note)
        head = _post(str(len(body)), b"")
        answer, lived = drip(w.url, body, every=0.05, at_once=head)
        assert answer.startswith(b"HTTP/1.1 408") and lived < DEADLINE + 2, (answer, lived)
        answer, lived = silent(w.url)
        assert lived < DEADLINE + 2 and answer.startswith(b"HTTP/1.1 408"), (answer, lived)
        status, _line, _ = post(w.url, body)
        assert status == 200
