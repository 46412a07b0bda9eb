"""The view of the ledger a server keeps from one request to the next while the head stays
the same (logbook.web.app._Site): its pages are the pages a view read afresh gives, a new
head is read anew, and a ledger that no longer verifies is answered 409, never from what was
kept."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
import served
from conftest import run_cli
from served import get

QUERIES = [{"where": ["seed=3"], "status": ["completed"], "sort": ["-score"]},
           {"where": ["kv_cache_precision=q8"], "sort": ["-missing"]},
           {"sort": ["ts"], "per": ["3"], "page": ["2"]}, {}]


def _url(q: dict[str, list[str]]) -> str:
    from urllib.parse import urlencode

    return "/runs.json" + ("?" + urlencode(q, doseq=True) if q else "")


def _afresh(folder: Path, q: dict[str, list[str]]) -> dict[str, Any]:
    """The runs page as a view read for this request alone builds it (no view kept), as
    the served JSON twin carries it (orjson, indented)."""
    from logbook.analysis.view import LedgerView
    from logbook.ledger.read_model import checked_reading
    from logbook.ledger.service import Ledger
    from logbook.web.data import Source
    from logbook.web.runs_data import runs

    with Ledger.open(folder / ".logbook" / "ledger.db", write=False) as ledger, \
            checked_reading(ledger) as checked:
        page = runs(Source(ledger, LedgerView(ledger, checked), checked), q)
    out: dict[str, Any] = orjson.loads(orjson.dumps(page, option=orjson.OPT_INDENT_2))
    return out


def _same(served_page: dict[str, Any], fresh: dict[str, Any]) -> None:
    # the integrity line says how this request's check went (what it carried on from this
    # machine's checked copy): its head and size must agree, the rest is the request's own
    a, b = dict(served_page), dict(fresh)
    ia, ib = a.pop("integrity"), b.pop("integrity")
    assert (ia["head"], ia["entries"], ia["verified"]) == (ib["head"], ib["entries"], True)
    assert orjson.dumps(a, option=orjson.OPT_INDENT_2) == \
        orjson.dumps(b, option=orjson.OPT_INDENT_2)


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "demo"
    r = run_cli("demo", "--dir", str(folder))
    assert r.code == 0, r.err
    monkeypatch.setenv("LOGBOOK_KEY", str(folder / "demo.key"))
    monkeypatch.setenv("LOGBOOK_DIR", str(folder))
    # a seed on the exploratory runs, so a filter on it matches some and not others
    for seed in (3, 4, 3):
        run = {"kind": "run", "body": {
            "plan": None, "arm": "probe", "status": "completed",
            "apparatus": {"model": "m", "seed": seed},
            "outcomes": {"metric": "acc", "id": ["a", "b", "c"],
                         "score": [1.0, float(seed % 2), 0.0]}}}
        path = tmp_path / f"run-{seed}.json"
        path.write_bytes(orjson.dumps(run))
        assert run_cli("append", str(path)).code == 0
    return folder


def test_kept_pages_are_fresh_pages_and_a_new_head_is_read_anew(ledger: Path,
                                                               tmp_path: Path) -> None:
    with served.serving(ledger, tmp_path / "stderr.txt", env=dict(os.environ)) as url:
        for _ in range(2):  # the first reads the ledger, the second from the view kept
            for q in QUERIES:
                status, page, _ = get(url + _url(q))
                assert status == 200, page
                _same(page, _afresh(ledger, q))
        before = get(url + _url(QUERIES[0]))[1]
        run = {"kind": "run", "body": {
            "plan": None, "arm": "probe", "status": "completed",
            "apparatus": {"model": "m", "seed": 3},
            "outcomes": {"metric": "acc", "id": ["a", "b"], "score": [1.0, 1.0]}}}
        (tmp_path / "new.json").write_bytes(orjson.dumps(run))
        assert run_cli("append", str(tmp_path / "new.json")).code == 0
        status, after, _ = get(url + _url(QUERIES[0]))
        assert status == 200
        assert after["matched"] == before["matched"] + 1
        assert after["integrity"]["head"] != before["integrity"]["head"]
        assert after["runs"][0]["score"] == 1.0  # the new run leads, sorted by -score
        for q in QUERIES:
            _same(get(url + _url(q))[1], _afresh(ledger, q))


def test_a_ledger_that_no_longer_verifies_is_not_served_from_the_kept_view(
        ledger: Path, tmp_path: Path) -> None:
    with served.serving(ledger, tmp_path / "stderr.txt", env=dict(os.environ)) as url:
        for q in QUERIES:
            assert get(url + _url(q))[0] == 200
        conn = sqlite3.connect(ledger / ".logbook" / "ledger.db", isolation_level=None)
        try:  # the last run's stored bytes: its score changed, its digest left as it was
            conn.execute("DROP TRIGGER IF EXISTS entries_no_update")
            (seq, raw), = conn.execute("SELECT seq, CAST(entry AS BLOB) FROM entries "
                                       "ORDER BY seq DESC LIMIT 1").fetchall()
            body = orjson.loads(raw)
            body["body"]["outcomes"]["score"][0] = 0.0
            conn.execute("UPDATE entries SET entry = ? WHERE seq = ?", (orjson.dumps(body), seq))
        finally:
            conn.close()
        for q in QUERIES:
            status, page, _ = get(url + _url(q))
            assert status == 409, (q, status, page)
            assert set(page) == {"error", "status"}
