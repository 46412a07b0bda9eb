"""`logbook serve` over plain HTTP: the JSON twins against the commands' own output, the
filters, the errors (one sentence naming the field), read-only, loopback and its headers."""

from __future__ import annotations

import hashlib
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
import served
from served import SLUG, get, serve_command

planted, server = served.planted, served.server  # the module's fixtures


def test_the_plan_twin_is_report_json(server: str, planted: dict[str, Any]) -> None:
    status, d, _ = get(f"{server}/plans/{SLUG}.json")
    assert status == 200
    assert d["report"] == planted["report"]
    assert d["integrity"]["verified"] is True
    assert d["integrity"]["entries"] == len(planted["log"])


def test_the_overview_twin_leads_with_results(server: str, planted: dict[str, Any]) -> None:
    status, d, _ = get(f"{server}/index.json")
    log = planted["log"]
    rep = planted["report"]
    assert status == 200
    assert d["ledger"] == {"name": "demo", "size": len(log)}
    [plan] = d["plans"]
    assert plan["slug"] == SLUG and plan["verdict"] == rep["verdict"]["status"]
    effect = rep["effects"][0]
    assert (plan["effect"]["point"], plan["effect"]["low"], plan["effect"]["high"]) == \
        (effect["point"], effect["low"], effect["high"])
    runs = [e for e in log if e["kind"] == "run"]
    assert [r["seq"] for r in d["latest_runs"]] == [e["seq"] for e in runs][::-1][:10]
    by_seq = {r["seq"]: r for a in rep["arms"] for r in a["runs"]}
    for row in d["latest_runs"]:  # the interval report computes for each of the plan's runs
        if row["seq"] in by_seq and by_seq[row["seq"]]["interval"]:
            want = by_seq[row["seq"]]["interval"]
            assert (row["interval"]["low"], row["interval"]["high"]) == \
                (want["low"], want["high"]), row["seq"]
    assert "keys" not in d and "latest_checkpoint" not in d


def test_the_integrity_twin(server: str, planted: dict[str, Any]) -> None:
    status, d, _ = get(f"{server}/integrity.json")
    log = planted["log"]
    assert status == 200
    assert d["ledger"]["size"] == len(log) and d["ledger"]["name"] == "demo"
    assert d["ledger"]["head"] == log[-1]["digest"]
    assert d["latest_checkpoint"]["size"] == 2  # the demo anchors its plan with one
    assert [k["name"] for k in d["keys"]] == ["default"]
    assert d["ledger"]["kinds"]["run"] == sum(1 for e in log if e["kind"] == "run")


def test_runs_are_paged(server: str, planted: dict[str, Any]) -> None:
    runs = [e["seq"] for e in planted["log"] if e["kind"] == "run"]
    _, first, _ = get(f"{server}/runs.json?per=2")
    assert first["matched"] == len(runs) and first["pages"] == -(-len(runs) // 2)
    seen = []
    for page in range(1, first["pages"] + 1):
        _, d, _ = get(f"{server}/runs.json?per=2&page={page}")
        assert d["page"] == page and len(d["runs"]) <= 2
        seen += [r["seq"] for r in d["runs"]]
    assert seen == runs
    for query, field in (("page=0", "page"), ("per=1001", "per"), ("per=x", "per"),
                         (f"page={first['pages'] * 2 + 9}", "past the last page")):
        status, bad, _ = get(f"{server}/runs.json?{query}")
        assert status == 400 and field in bad["error"], (query, bad)
    row = first["runs"][0]
    assert {"model", "suite", "metric", "harness", "interval", "ts"} <= set(row)


def test_pages_carry_the_check_on_from_the_checked_copy(server: str,
                                                      planted: dict[str, Any]) -> None:
    """The web reads as every analysis does: its check is carried on from this machine's
    checked copy, not made in full for each page."""
    get(f"{server}/index.json")
    _, again, _ = get(f"{server}/index.json")
    checked = again["integrity"]
    assert checked["resumed_from"] == checked["entries"] > 0, checked


def test_runs_filters_and_sorting(server: str, planted: dict[str, Any]) -> None:
    _, everything, _ = get(f"{server}/runs.json")
    runs = [e for e in planted["log"] if e["kind"] == "run"]
    assert [r["seq"] for r in everything["runs"]] == [e["seq"] for e in runs]
    _, q8, _ = get(f"{server}/runs.json?where=kv_cache_precision%3Dq8&sort=-score")
    assert q8["runs"] and {r["arm"] for r in q8["runs"]} == {"q8"}
    scores = [r["score"] for r in q8["runs"]]
    present = [s for s in scores if s is not None]
    assert present == sorted(present, reverse=True) and scores[len(present):] == \
        [None] * (len(scores) - len(present))
    _, failed, _ = get(f"{server}/runs.json?status=failed")
    assert [r["status"] for r in failed["runs"]] == ["failed"]
    _, gone, _ = get(f"{server}/runs.json?plan={SLUG}&retracted=yes")
    assert [r["seq"] for r in gone["runs"]] == [3]
    _, session, _ = get(f"{server}/runs.json?session=demo-session-1&arm=f16")
    assert {(r["arm"], r["session"]) for r in session["runs"]} == {("f16", "demo-session-1")}
    _, exploratory, _ = get(f"{server}/runs.json?plan=none")
    assert [r["arm"] for r in exploratory["runs"]] == ["probe"]


@pytest.mark.parametrize(("query", "field"), [
    ("status=bogus", "status"), ("sort=bogus", "sort"), ("since=yesterday", "since"),
    ("plan=no-such-plan", "PLAN"), ("where=engine", "where"), ("retracted=maybe", "retracted"),
])
def test_a_bad_filter_is_one_sentence_naming_it(server: str, query: str, field: str) -> None:
    status, d, _ = get(f"{server}/runs.json?{query}")
    assert status == 400 and d["error"].startswith(field), d
    status, page, _ = get(f"{server}/runs?{query}")
    assert status == 400 and 'id="error"' in page


def test_unknown_pages_and_entries_are_404(server: str) -> None:
    assert get(f"{server}/runs/@999.json")[0] == 404
    status, d, _ = get(f"{server}/plans/@2.json")  # @2 is a run
    assert status == 404 and d["error"] == "PLAN @2: that entry is not a plan"
    assert get(f"{server}/no-such-page")[0] == 404
    status, d, _ = get(f"{server}/entries/@1.json")
    assert status == 200 and d["kind"] == "plan"


def test_read_only_loopback_and_no_scripts(server: str, planted: dict[str, Any]) -> None:
    db = Path(planted["folder"]) / ".logbook" / "ledger.db"
    before = hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns
    for path in ("/", "/plans", f"/plans/{SLUG}", "/runs", "/audit", "/retractions"):
        status, page, headers = get(server + path)
        assert status == 200, path
        assert "script-src" not in headers["content-security-policy"]
        assert headers["content-security-policy"].startswith("default-src 'none'")
        assert "<script" not in page
    status, _, _ = get(f"{server}/runs", method="POST")
    assert status == 405
    status, _, _ = get(f"{server}/", host="attacker.example")
    assert status == 400  # a rebound name is refused: only loopback names are served
    assert (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns) == before


def test_the_full_html_report_is_served(server: str) -> None:
    status, page, _ = get(f"{server}/plans/{SLUG}/report.html")
    assert status == 200 and page.startswith("<!DOCTYPE html>") and "Verdict:" in page


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(serve_command(*args), capture_output=True, text=True, timeout=60)


def test_serve_without_a_ledger_exits_3() -> None:
    r = _serve("serve", "--port", "0")
    assert r.returncode == 3 and "no ledger" in r.stderr


def test_serve_on_a_taken_port_exits_3(planted: dict[str, Any]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = _serve("--ledger", str(planted["folder"]), "serve", "--port", str(port))
    assert r.returncode == 3 and f"cannot listen on 127.0.0.1:{port}" in r.stderr


def test_serve_refuses_a_bad_port_and_host(planted: dict[str, Any]) -> None:
    r = _serve("--ledger", str(planted["folder"]), "serve", "--port", "70000")
    assert r.returncode == 2 and "--port" in r.stderr
    r = _serve("--ledger", str(planted["folder"]), "serve", "--host", "no-such-host.invalid")
    assert r.returncode == 2 and "--host no-such-host.invalid" in r.stderr


def test_the_compare_twin_is_compare_items_json(server: str, planted: dict[str, Any]) -> None:
    status, d, _ = get(f"{server}/compare.json?a={SLUG}:q8&b=%402")
    assert status == 200 and d["comparison"] == planted["items"]
    p = d["comparison"]["power"]
    assert d["power_page"] == (f"/power?p={p['p']:.4g}&discordance={p['discordance']:.4g}"
                               f"&n={p['n']}")
    status, pw, _ = get(server + d["power_page"].replace("/power", "/power.json"))
    assert status == 200 and pw["command"] == p["command"]
    row = next(r for r in pw["sizes"] if r["n"] == p["n"])
    assert row["min_detectable_effect"] == p["min_detectable_effect"]
    status, empty, _ = get(f"{server}/compare.json")
    assert status == 200 and empty["comparison"] is None  # the form alone


def test_the_claims_twin_is_claim_check(server: str, planted: dict[str, Any]) -> None:
    status, d, _ = get(f"{server}/claims.json")
    assert status == 200 and d["standing"] == 0  # the audit fails the second (A22)
    for shown, check in zip(d["claims"], planted["claims"], strict=True):
        assert shown["claim"] == check["claim"] and shown["stands"] == check["stands"]
        assert shown["problems"] == check["problems"]
        assert [r["digest"] for r in shown["retracted_runs"]] == check["retracted_runs"]


@pytest.mark.parametrize(("query", "field"), [
    ("compare.json?a=%402", "b"), ("compare.json?b=%402", "a"),
    (f"compare.json?a={SLUG}:bf16&b=%402", "selector"), ("compare.json?a=%400&b=%402", "RUN"),
    ("power.json?p=0.7&n=10", "discordance"), ("power.json?p=x&discordance=0.2&n=10", "p"),
    ("power.json?p=0.7&discordance=0.2&n=1.5", "n"),
    ("power.json?p=0.7&discordance=0.9&n=100", "discordance"),
])
def test_a_bad_comparison_is_one_sentence_naming_it(server: str, query: str,
                                                     field: str) -> None:
    status, d, _ = get(f"{server}/{query}")
    assert status == 400 and d["error"].startswith(field), d
