"""`logbook serve`'s item pages and the comparison's categories, on a ledger made with the
public commands (`init`, `append` of runs with and without traces): the JSON twins against
`show --items` and `compare`, the filters, paging and errors, markup in a trace shown as text;
and in Chromium, an item's trace and the "both wrong" items of a comparison."""

from __future__ import annotations

import html
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
import pytest
import served
from conftest import isolate, run_cli
from served import get, serve_command

browser = served.browser  # the module's fixtures

SCRIPT = "<script id=planted-trace>document.title='pwned'</script>"
ODD = "x/y?#<b>"  # an id a path must encode, holding markup
LONG = "\n".join(f"line {i}: the answer is still being worked out" for i in range(40))
IDS = ["paris", "sum", "late", ODD, "blank"]


def _run(model: str, scores: list[Any], errors: list[Any] | None = None,
         traces: list[dict[str, Any]] | None = None, suite: str = "s", metric: str = "acc",
         ids: list[str] | None = None, samples: list[int] | None = None) -> dict[str, Any]:
    ids = ids or IDS
    outcomes: dict[str, Any] = {"metric": metric, "id": ids, "score": scores,
                                "error": errors or [None] * len(ids)}
    if samples is not None:
        outcomes["sample"] = samples
    body: dict[str, Any] = {"plan": None, "status": "completed",
                            "apparatus": {"model": model, "suite": suite}, "outcomes": outcomes}
    if traces is not None:
        body["traces"] = traces
    return {"kind": "run", "body": body}


RUNS = [  # @1 .. @6
    _run("m-a", [1, 0, 0, None, 1], [None, None, None, "<i>timeout</i>", None], traces=[
        {"id": "paris", "prompt": "Capital of France?", "output": "Paris", "target": "Paris",
         "verdict": "C", "explanation": "exact match"},
        {"id": "sum", "prompt": "2+2", "output": SCRIPT, "target": "4", "verdict": "I"},
        {"id": "late", "prompt": "Think long", "output": LONG, "target": "42", "verdict": "I"}]),
    _run("m-b", [0, 0, 1, 1, 1], traces=[
        {"id": "paris", "prompt": "Capital of France?", "output": "Lyon", "target": "Paris",
         "verdict": "I"}]),
    _run("m-c", [1, 0, 1, 0, 1]),  # no traces
    _run("m-d", [1, 1, 1, 1, 1], suite="t"),  # another suite
    _run("m-e", [1, 1, 1, 1, 1], metric="f1"),  # another metric
    _run("m-f", [1, 0, 0, 0], ids=["paris", "paris", "sum", "sum"], samples=[0, 1, 0, 1],
         traces=[{"id": "paris", "sample": 0, "output": "Paris"},
                 {"id": "paris", "sample": 1, "output": "Marseille"}]),
]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The ledger, and what the commands print of it."""
    base = tmp_path_factory.mktemp("items")
    mp = pytest.MonkeyPatch()
    isolate(mp, base / "home", base / "work")
    try:
        assert run_cli("init", "--name", "items").code == 0
        for n, draft in enumerate(RUNS, 1):
            path = base / f"run{n}.json"
            path.write_bytes(orjson.dumps(draft))
            r = run_cli("append", str(path))
            assert r.code == 0, r.err
        shown = {seq: run_cli("show", f"@{seq}", "--items", "--json").json
                 for seq in (1, 2, 3)}
        where = {expr: run_cli("show", "@1", "--items", "--where", expr, "--json").json
                 for expr in ("score=0", "output~Par", "error!=null", "score=null")}
        items = run_cli("compare", "@1", "@2", "--items", "--json")
        assert items.code == 0, items.err
        effect = run_cli("compare", "model=m-a", "model=m-b", "--json")
        assert effect.code == 0, effect.err
    finally:
        mp.undo()
    return {"folder": base / "work", "shown": shown, "where": where, "items": items.json,
            "effect": effect.json}


@pytest.fixture(scope="module")
def url(made: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`logbook --ledger D serve --port 0` on that ledger, stopped with Ctrl-C."""
    logs = tmp_path_factory.mktemp("items-server") / "stderr.txt"
    with logs.open("w") as err:
        proc = subprocess.Popen(serve_command("--ledger", str(made["folder"]), "serve",
                                              "--port", "0"), stderr=err)
    found = None
    deadline = time.monotonic() + 30
    while found is None and time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"http://127\.0\.0\.1:\d+/", logs.read_text())
        time.sleep(0.1)
    try:
        assert found is not None, logs.read_text()
        yield found.group(0).rstrip("/")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)


def _seg(item: str) -> str:
    return quote(item, safe="")


def test_the_items_twin_is_show_items(url: str, made: dict[str, Any]) -> None:
    for seq in (1, 2, 3):
        status, d, _ = get(f"{url}/runs/%40{seq}/items.json")
        want = made["shown"][seq]
        assert status == 200 and d["traces_kept"] == want["traces_kept"] == (seq != 3)
        assert d["total"] == d["matched"] == len(IDS) and d["pages"] == 1
        assert [(i["id"], i["score"], i["error"]) for i in d["items"]] == \
            [(i["id"], i["score"], i["error"]) for i in want["items"]]
        for got, full in zip(d["items"], want["items"], strict=True):
            # the table's texts: output, target and verdict, not the prompt
            assert got["trace"] == (None if full["trace"] is None else {
                k: v for k, v in full["trace"].items() if k in ("output", "target", "verdict")})
            assert got["page"] == f"/runs/{d['run']['digest']}/items/{_seg(got['id'])}"
    status, d, _ = get(f"{url}/runs/%401/items.json")
    assert d["run"]["suite"]["name"] == "s" and d["run"]["model"] == "m-a"
    assert d["items"][1]["trace"]["output"] == SCRIPT


@pytest.mark.parametrize("expr", ["score=0", "output~Par", "error!=null", "score=null"])
def test_where_keeps_what_show_where_keeps(url: str, made: dict[str, Any], expr: str) -> None:
    status, d, _ = get(f"{url}/runs/%401/items.json?where={quote(expr)}")
    want = [i["id"] for i in made["where"][expr]["items"]]
    assert status == 200 and want and [i["id"] for i in d["items"]] == want
    assert d["matched"] == len(want) and d["where"] == [expr]


def test_where_is_repeatable_and_pages_like_the_runs_table(url: str) -> None:
    _, d, _ = get(f"{url}/runs/%401/items.json?where=score%3D0&where=output~%3Cscript")
    assert [i["id"] for i in d["items"]] == ["sum"]
    _, d, _ = get(f"{url}/runs/%401/items.json?per=2&page=2")
    assert (d["pages"], d["page"], d["matched"]) == (3, 2, 5)
    assert [i["id"] for i in d["items"]] == IDS[2:4]
    _, d, _ = get(f"{url}/runs/%401/items.json?per=2&page=3")
    assert [i["id"] for i in d["items"]] == IDS[4:]


def test_an_item_page_has_every_text_and_the_other_runs_of_its_suite(url: str) -> None:
    status, d, _ = get(f"{url}/runs/%401/items/paris.json")
    assert status == 200 and d["item"] == "paris" and d["traces_kept"]
    [row] = d["rows"]
    assert row["score"] == 1 and row["trace"] == {
        "prompt": "Capital of France?", "output": "Paris", "target": "Paris", "verdict": "C",
        "explanation": "exact match"}
    # @4 is of suite t, @5 scores f1: neither is listed
    others = {o["seq"]: o for o in d["elsewhere"]}
    assert sorted(others) == [2, 3, 6]
    assert (others[2]["score"], others[3]["score"], others[6]["score"]) == (0, 1, 0.5)
    assert others[6]["samples"] == 2
    status, there, _ = get(url + others[2]["item_page"].replace("/paris", "/paris.json"))
    assert status == 200 and there["rows"][0]["trace"]["output"] == "Lyon"
    assert [o["seq"] for o in there["elsewhere"]] == [1, 3, 6]


def test_an_item_page_takes_an_encoded_id_and_a_sample(url: str) -> None:
    status, d, _ = get(f"{url}/runs/%401/items/{_seg(ODD)}.json")
    assert status == 200 and d["item"] == ODD
    assert d["rows"][0]["error"] == "<i>timeout</i>" and d["rows"][0]["score"] is None
    assert d["rows"][0]["trace"] is None
    assert [(o["seq"], o["score"]) for o in d["elsewhere"]] == [(2, 1), (3, 0)]
    _, d, _ = get(f"{url}/runs/%406/items/paris.json")
    assert [(r["sample"], r["trace"]["output"]) for r in d["rows"]] == \
        [(0, "Paris"), (1, "Marseille")]
    _, d, _ = get(f"{url}/runs/%406/items/paris.json?sample=1")
    assert [r["sample"] for r in d["rows"]] == [1] and d["sample"] == 1
    _, d, _ = get(f"{url}/runs/%403/items/sum.json")  # a run without traces
    assert d["traces_kept"] is False and d["rows"][0]["trace"] is None


@pytest.mark.parametrize(("path", "status", "start"), [
    ("runs/%4099/items.json", 404, "RUN"), ("runs/%400/items.json", 404, "entry @0"),
    ("runs/%401/items/nope.json", 404, "run @1 has no item 'nope'"),
    ("runs/%406/items/paris.json?sample=7", 404, "run @6 has no item 'paris' sample 7"),
    ("runs/%401/items.json?where=colour%3Dred", 400, "where 'colour=red'"),
    ("runs/%401/items.json?where=score%3Cx", 400, "where"),
    ("runs/%401/items/paris.json?sample=one", 400, "sample"),
    ("runs/%401/items.json?page=9", 400, "page 9"), ("runs/%401/items.json?per=0", 400, "per"),
])
def test_bad_input_is_one_sentence(url: str, path: str, status: int, start: str) -> None:
    got, d, _ = get(f"{url}/{path}")
    assert got == status and d["error"].startswith(start), d
    got, page, _ = get(f"{url}/{path.replace('.json', '')}")
    assert got == status and 'id="error"' in page


def test_markup_in_a_trace_is_text(url: str) -> None:
    for path in ("runs/%401/items/sum", "runs/%401/items", f"runs/%401/items/{_seg(ODD)}"):
        status, page, _ = get(f"{url}/{path}")
        assert status == 200
        assert "<script" not in page and "<i>timeout" not in page and "<b>" not in page, path
    _, page, _ = get(f"{url}/runs/%401/items/sum")
    assert "&lt;script id=planted-trace&gt;" in page
    _, page, _ = get(f"{url}/runs/%401")  # the run page links to its items
    assert 'id="items-page"' in page and "/items\"" in page


def test_the_comparison_sorts_items_into_categories(url: str, made: dict[str, Any]) -> None:
    status, d, _ = get(f"{url}/compare.json?a=%401&b=%402")
    assert status == 200 and d["comparison"] == made["items"]
    assert d["pass_fail"] is True and d["both_wrong"] == ["sum"]
    cats = {r["id"]: r["category"] for r in d["rows"]}
    assert cats == {"late": "improved", "paris": "regressed", "sum": "both-wrong",
                    "blank": "unchanged", ODD: "not-comparable"}
    row = next(r for r in d["rows"] if r["id"] == "sum")
    assert [p["seq"] for p in row["a_runs"]] == [1] and [p["seq"] for p in row["b_runs"]] == [2]
    status, there, _ = get(url + row["b_runs"][0]["page"] + ".json")
    assert status == 200 and there["run"]["seq"] == 2 and there["item"] == "sum"
    _, d, _ = get(f"{url}/compare.json?a=%401&b=%402&show=both-wrong")
    assert [(r["id"], r["a"], r["b"]) for r in d["rows"]] == [("sum", 0.0, 0.0)]
    _, d, _ = get(f"{url}/compare.json?a=%401&b=%402&show=not-comparable")
    assert [r["id"] for r in d["rows"]] == [ODD]


def test_the_effect_is_the_one_compare_gives(url: str, made: dict[str, Any]) -> None:
    _, d, _ = get(f"{url}/compare.json?a=model%3Dm-a&b=model%3Dm-b")
    assert d["effect"] == made["effect"]["effect"] and d["verdict"] == made["effect"]["verdict"]
    _, page, _ = get(f"{url}/compare?a=model%3Dm-a&b=model%3Dm-b")
    e = made["effect"]["effect"]
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert f"{e['point']:+.2f} ({e['low']:+.2f} to {e['high']:+.2f}, 95% interval" in text


@pytest.mark.parametrize(("query", "words"), [
    ("a=%401&b=%404", "items of two suites are never paired"),
    ("a=%401&b=%405", "items of two metrics are never paired"),
    ("a=%401&b=%402&show=wrong", "show must be all or one of"),
])
def test_never_across_suites_or_metrics(url: str, query: str, words: str) -> None:
    status, d, _ = get(f"{url}/compare.json?{query}")
    assert status == 400 and words in d["error"], d


def test_in_a_browser_an_item_shows_its_trace_and_compare_its_both_wrong(
        browser: Any, url: str, tmp_path: Path) -> None:
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{url}/runs/%401")
    page.locator("#items-page").click()
    assert page.locator("h1").inner_text() == "Items of run @1"
    assert page.locator("table.run-items tbody tr").count() == len(IDS)
    page.locator("table.run-items tr[data-item='sum'] a").click()
    assert page.locator("h1").inner_text() == "Item sum of run @1"
    assert page.locator("pre.trace-output").inner_text() == SCRIPT  # shown, not run
    assert page.locator("#planted-trace").count() == 0 and "pwned" not in page.title()
    page.goto(f"{url}/runs/%401/items/late")
    long = page.locator("section[data-field='output'] details")
    assert long.count() == 1 and not long.locator("pre").is_visible()
    long.locator("summary").click()
    assert long.locator("pre").inner_text() == LONG
    page.screenshot(path=str(tmp_path / "item.png"), full_page=True)

    page.goto(f"{url}/compare?a=%401&b=%402")
    assert page.locator("#n-both-wrong").inner_text() == "1 both wrong"
    page.locator("#show a[data-show='both-wrong']").click()
    assert page.locator("table.both-wrong tbody tr td:first-child").all_inner_texts() == ["sum"]
    assert page.locator("table.improved").count() == 0
    assert page.locator("#effect").inner_text().startswith("effect B − A")
    page.locator("table.both-wrong tr[data-item='sum'] td:nth-child(5) a").click()
    assert page.locator("h1").inner_text() == "Item sum of run @2"
    assert not dialogs
