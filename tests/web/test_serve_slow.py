"""`serve` cuts slow and half-sent requests (issue 34, item 5): a request must arrive whole
within LOGBOOK_REQUEST_DEADLINE of its first byte (of the connection, for the first), or it
is answered 408 and the connection closed; a request that is not HTTP is answered 400; a
request that arrives in time is served as ever."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli
from slow_clients import drip, send, silent
from test_serve_hosts import serving

DEADLINE = 1.5
HALF_SENT = b"GET /index.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 400


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    folder = tmp_path / "ledger"
    folder.mkdir()
    assert run_cli("init", str(folder), "--name", "slow").code == 0
    monkeypatch.setenv("LOGBOOK_REQUEST_DEADLINE", str(DEADLINE))
    with serving(folder, tmp_path) as served:
        yield served


def test_a_request_sent_a_byte_at_a_time_is_cut_at_the_deadline(url: str) -> None:
    answer, lived = drip(url, HALF_SENT, every=0.2)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
    assert DEADLINE - 0.3 < lived < DEADLINE + 2, lived


def test_a_connection_that_sends_nothing_is_closed(url: str) -> None:
    answer, lived = silent(url)
    assert lived < DEADLINE + 2 and (answer == b"" or answer.startswith(b"HTTP/1.1 408"))


def test_bytes_that_are_not_http_are_answered_400(url: str) -> None:
    assert send(url, b"HELLO WORLD\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert send(url, b"GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n").startswith(b"HTTP/1.1 400")


def test_a_request_in_time_is_served_and_the_next_one_on_the_connection_too(url: str) -> None:
    port = url.rsplit(":", 1)[1]
    one = (f"GET /index.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").encode()
    last = (f"GET /index.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Connection: close\r\n\r\n").encode()
    answer = send(url, one + last)
    assert answer.count(b"HTTP/1.1 200") == 2, answer[:300]
