"""The pages look right at the widths they are read at (issue 37): at 1280 and 1920 pixels
and on a phone (390), no page is wider than the window (a wide table scrolls inside its own
box, `.wide`, never the page), and no word is broken across two lines. A full-page
screenshot of each page at each width is kept with the test's files.

What "a word" is: each run of non-space characters of a text node, measured with a Range
(`getClientRects`: a word on two lines has rects at two heights). Text inside <pre> and
<code> is not held to it: a <pre> keeps a log excerpt's own lines, and <code> holds hashes,
digests and item ids, which the style lets wrap anywhere (`td code{overflow-wrap:anywhere}`)
because a 71-character digest cannot fit a phone's width whole.

The docs' screenshots of the main pages (docs/images/, named in docs/web.md) are made here
too: written to the test's files, or over the docs' own with UPDATE_DOC_IMAGES=1."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
import served
from conftest import run_cli

server, browser, screens = served.server, served.browser, served.screens  # the module's fixtures

FIXTURES = Path(__file__).parents[1] / "fixtures"
DOCS = Path(__file__).resolve().parents[2] / "docs"
SLUG = "kv-q8-vs-f16"
WIDTHS = (1280, 1920, 390)
PAGES = {"overview": "/", "runs": "/runs", "plans": "/plans", "plan": f"/plans/{SLUG}",
         "run": "/runs/%402", "lm-eval-run": "/runs/%40{lm_eval}",
         "inspect-run": "/runs/%40{inspect}", "integrity": "/integrity", "audit": "/audit",
         "compare": f"/compare?a={SLUG}:f16&b={SLUG}:q8", "compare-runs": "/compare?a=%402&b=%405",
         "claims": "/claims",
         "retractions": "/retractions", "lm-eval-items": "/runs/%40{lm_eval}/items",
         "lm-eval-item": "/runs/%40{lm_eval}/items/0",
         "inspect-item": "/runs/%40{inspect}/items/arith-059"}
# the docs' screenshots: the window's first screen of each (not the whole page), 1280 wide
DOC_IMAGES = {"overview": "web-overview.png", "runs": "web-runs.png", "plan": "web-plan.png",
              "run": "web-run.png"}
DOC_IMAGE_BYTES = 300_000

# what the page's own script measures: the page's width against the window's, what sticks
# out past the window's right edge, and each word that is laid out on more than one line
MEASURE = """() => {
  const out = {scroll: document.documentElement.scrollWidth, window: window.innerWidth,
               past: [], broken: []};
  if (out.scroll > out.window) {
    for (const el of document.body.querySelectorAll('*')) {
      const box = el.getBoundingClientRect();
      if (box.right > out.window + 0.5 && !el.parentElement.closest('.wide')) {
        out.past.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '')
                      + ' ' + Math.round(box.right) + 'px');
      }
    }
  }
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest('pre, code, svg, style, script')) continue;
    const words = /\\S+/g;
    for (let m = words.exec(node.data); m; m = words.exec(node.data)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const lines = [];
      for (const r of range.getClientRects()) {
        if (r.width === 0 || r.height === 0) continue;
        if (!lines.some(top => Math.abs(top - r.top) < r.height / 2)) lines.push(r.top);
      }
      if (lines.length > 1) out.broken.push(m[0]);
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo ledger, a retraction and a claim, and two exploratory runs read from real
    harness outputs (lm-eval and Inspect, tests/fixtures), with their long task and model
    names and log paths."""
    base = tmp_path_factory.mktemp("layout")
    folder = base / "demo"
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(base / "config"))
    mp.chdir(base)
    try:
        assert run_cli("demo", "--dir", str(folder)).code == 0
        mp.setenv("LOGBOOK_KEY", str(folder / "demo.key"))
        mp.setenv("LOGBOOK_DIR", str(folder))
        r = run_cli("claim", SLUG, "--statement", "q8 costs at most a point of accuracy")
        assert r.code == 0, r.err
        r = run_cli("retract", "@3", "--reason", "the judge prompt had a bug",
                    "--category", "harness_defect", "--correction", "re-run after the fix")
        assert r.code == 0, r.err
        seqs = {}
        for name, harness, path in (("lm_eval", "lm-eval", "lm_eval/run-seed1"),
                                    ("inspect", "inspect", "inspect/run-errors")):
            r = run_cli("append", "--from", harness, str(FIXTURES / path), "--json")
            assert r.code == 0, r.err
            seqs[name] = orjson.loads(r.out)["seq"] if r.out.strip().startswith("{") \
                else int(r.out.split()[0])
    finally:
        mp.undo()
    return {"folder": folder, **seqs}


def _measure(browser: Any, url: str, width: int, shot: Path | None) -> dict[str, Any]:
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    try:
        answer = page.goto(url)
        assert answer is not None and answer.status == 200, (url, answer and answer.status)
        if shot is not None:
            page.screenshot(path=str(shot), full_page=True)
        found: dict[str, Any] = page.evaluate(MEASURE)
        return found
    finally:
        page.close()


def test_no_page_overflows_or_breaks_a_word(browser: Any, server: str,
                                            planted: dict[str, Any], screens: Path) -> None:
    problems = []
    for width in WIDTHS:
        for name, path in PAGES.items():
            found = _measure(browser, server + path.format(**planted), width,
                             screens / f"{name}-{width}.png")
            if found["scroll"] > found["window"]:
                problems.append(f"{name} at {width}px: the page is {found['scroll']}px wide "
                                f"(past the window: {', '.join(found['past'][:4])})")
            for word in sorted(set(found["broken"])):
                problems.append(f"{name} at {width}px: {word!r} is broken across lines")
    assert not problems, "\n".join(problems)


def test_the_measure_sees_an_overflow_and_a_broken_word(browser: Any, server: str) -> None:
    """The check itself: a page made too wide, and a word made to break, are found."""
    page = browser.new_page()
    page.set_viewport_size({"width": 390, "height": 900})
    try:
        page.goto(server + "/")
        page.add_style_tag(content="nav{width:900px}h1{width:60px;overflow-wrap:anywhere}")
        found = page.evaluate(MEASURE)
    finally:
        page.close()
    assert found["scroll"] > found["window"] and any(p.startswith("nav") for p in found["past"])
    assert "demo" in found["broken"] or "Ledger" in found["broken"], found["broken"]


def _doc_images() -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", (DOCS / "web.md").read_text())


def test_the_docs_screenshots_are_made_from_the_pages(browser: Any, server: str,
                                                      planted: dict[str, Any],
                                                      tmp_path: Path) -> None:
    """Each screenshot docs/web.md shows is made here from its page, at 1280 pixels: over
    the docs' own with UPDATE_DOC_IMAGES=1, else into the test's files."""
    folder = DOCS / "images" if os.environ.get("UPDATE_DOC_IMAGES") == "1" else tmp_path
    folder.mkdir(exist_ok=True)
    for name, file in DOC_IMAGES.items():
        page = browser.new_page()
        page.set_viewport_size({"width": 1280, "height": 800})
        try:
            answer = page.goto(server + PAGES[name].format(**planted))
            assert answer is not None and answer.status == 200
            page.screenshot(path=str(folder / file))
        finally:
            page.close()
        size = (folder / file).stat().st_size
        assert 0 < size <= DOC_IMAGE_BYTES, (file, size)
    assert {f"images/{f}" for f in DOC_IMAGES.values()} <= set(_doc_images())


def test_every_image_the_web_doc_names_exists() -> None:
    named = _doc_images()
    assert named, "docs/web.md shows no screenshot"
    missing = [n for n in named if not (DOCS / n).is_file()]
    assert not missing, f"docs/web.md names images that do not exist: {missing}"
    large = [n for n in named if (DOCS / n).stat().st_size > DOC_IMAGE_BYTES]
    assert not large, f"docs/web.md names images over {DOC_IMAGE_BYTES} bytes: {large}"


def test_a_real_harness_run_shows_its_traces(browser: Any, server: str,
                                             planted: dict[str, Any]) -> None:
    """The lm-eval run appended from a real samples file: its items page lists each item's
    output and target, and an item's page shows the prompt lm-eval sent; the Inspect run's
    failed sample shows its error beside the target it was asked."""
    samples = next((FIXTURES / "lm_eval/run-seed1").glob("samples_*.jsonl"))
    first = orjson.loads(samples.read_bytes().splitlines()[0])
    prompt = first["arguments"]["gen_args_0"]["arg_0"]
    page = browser.new_page()
    try:
        page.goto(server + f"/runs/%40{planted['lm_eval']}/items")
        listed = page.inner_text("body")
        assert "(choice " in listed and "acc = " in listed, listed[:2000]
        page.goto(server + f"/runs/%40{planted['lm_eval']}/items/{first['doc_id']}")
        shown = page.inner_text("body")
        assert " ".join(prompt.split()) in " ".join(shown.split()), shown[:2000]
        page.goto(server + f"/runs/%40{planted['inspect']}/items/arith-059")
        failed = page.inner_text("body")
        assert "simulated backend failure" in failed and "786" in failed, failed[:2000]
    finally:
        page.close()
