"""`logbook serve` in a real browser: overview -> plans -> plan -> run -> item comparison ->
power, the figures shown checked against `report --json` and `compare --items --json`; the
claims page against `claim check`; and markup planted in entries shown as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import served
from served import CLAIM, ERROR, ITEM, LOG, NOTE, REASON, SLUG

from logbook.analysis.report.text import effect_parts, score_cell

# the module's fixtures
planted, server, browser, screens = served.planted, served.server, served.browser, served.screens


def _page(browser: Any) -> tuple[Any, list[str]]:
    page = browser.new_page()
    dialogs: list[str] = []

    def refuse(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", refuse)
    return page, dialogs


def _run_of(rep: dict[str, Any], seq: int) -> dict[str, Any]:
    return next(r for a in rep["arms"] for r in a["runs"] if r["seq"] == seq)


def test_overview_to_plan_to_run(browser: Any, server: str, planted: dict[str, Any],
                                 screens: Path) -> None:
    rep = planted["report"]
    page, dialogs = _page(browser)
    page.goto(server + "/")
    assert page.locator("h1").inner_text() == "Ledger demo"
    size = len(planted["log"])
    assert page.locator("#integrity").inner_text().startswith(f"verified {size} entries")
    # results first: the plan's verdict and effect, then the latest runs
    assert page.locator(f"table.plans tr[data-plan='{SLUG}'] .badge").inner_text() == \
        rep["verdict"]["status"]
    assert effect_parts(rep["effects"][0], 100)[0] in page.locator(
        f"table.plans tr[data-plan='{SLUG}'] .effect").inner_text()
    assert page.locator("table.runs tr[data-seq]").count() == min(10, sum(
        1 for e in planted["log"] if e["kind"] == "run"))
    page.screenshot(path=str(screens / "overview.png"), full_page=True)
    page.click("nav >> text=Integrity")
    assert page.locator("table.facts tr", has_text="size").locator("td").nth(1)\
        .inner_text() == str(size)
    page.screenshot(path=str(screens / "integrity.png"), full_page=True)

    page.click("nav >> text=Plans")
    row = page.locator(f"tr[data-plan='{SLUG}']")
    assert row.locator(".badge").inner_text() == rep["verdict"]["status"]
    done = sum(min(a["completed"], a["planned_runs"]) for a in rep["arms"])
    planned = sum(a["planned_runs"] for a in rep["arms"])
    assert f"{done}/{planned}" in row.inner_text()

    row.locator(f"a:text-is('{SLUG}')").click()
    assert page.locator("h1").inner_text() == f"Plan {SLUG}"
    assert page.locator("#verdict").inner_text() == rep["verdict"]["wording"]
    review = rep["retractions"]
    assert review is not None  # @3 was retracted
    shown = page.locator("#retraction-review").inner_text()
    assert review["without"]["wording"] in shown and review["with"]["wording"] in shown
    assert page.locator("#forest svg").count() == 1
    for arm in rep["arms"]:
        for r in arm["runs"]:
            cell = page.locator(f"table.arm-runs tr[data-seq='{r['seq']}'] .score").inner_text()
            # the digits the run's interval supports, as the text report prints them
            expected = score_cell(r["score"], 100, r["interval"])
            assert cell == expected, (r["seq"], cell, r["score"])
            retracted = page.locator(f"table.arm-runs tr[data-seq='{r['seq']}']")\
                .get_attribute("class") == "retracted"
            assert retracted == r["retracted"]
    effect = rep["effects"][0]
    assert page.locator("table.effects .effect").inner_text() == effect_parts(effect, 100)[0]
    page.screenshot(path=str(screens / "plan.png"), full_page=True)

    first = rep["arms"][0]["runs"][0]
    page.locator(f"table.arm-runs tr[data-seq='{first['seq']}'] a").first.click()
    assert page.locator("h1").inner_text() == f"Run @{first['seq']}"
    assert page.locator("#score").inner_text() == f"{first['score']:.4f}"
    assert page.locator("table.apparatus code", has_text="kv_cache_precision").count() == 1
    assert page.locator("table.items tr").count() == 1 + first["missing"]
    page.screenshot(path=str(screens / "run.png"), full_page=True)

    # the run against the other arm, item by item, as `compare SLUG:q8 @2 --items` says
    items = planted["items"]
    page.locator("#compare-with a", has_text="arm q8").click()
    assert page.locator("h1").inner_text() == f"Item comparison: {SLUG}:q8 vs @{first['seq']}"
    c = items["counts"]
    assert page.locator("#n-improved").inner_text() == f"{c['improved']} improved"
    assert page.locator("#n-regressed").inner_text() == f"{c['regressed']} regressed"
    assert page.locator("#n-unchanged").inner_text() == f"{c['unchanged']} unchanged"
    assert page.locator("#n-not-comparable").inner_text() == \
        f"{c['not_comparable']} not comparable"
    shown = page.locator("table.improved tbody tr td:first-child").all_inner_texts()
    assert shown == [x["id"] for x in items["improved"]]
    shown = page.locator("table.regressed tbody tr td:first-child").all_inner_texts()
    assert shown == [x["id"] for x in items["regressed"]]
    lost = page.locator("table.not-comparable tbody tr td:first-child").all_inner_texts()
    assert lost == [x["id"] for x in items["not_comparable"]]
    assert page.locator("#discordance").inner_text().startswith(
        f"discordance {items['discordance']:.4f}")
    page.screenshot(path=str(screens / "compare.png"), full_page=True)

    power = items["power"]
    page.locator("#power").click()
    assert page.locator("h1").inner_text() == "Power with a measured discordance"
    assert page.locator("#command").inner_text() == power["command"]
    row = page.locator("table.power tr.this td")
    assert row.nth(0).inner_text() == str(power["n"])
    assert row.nth(1).inner_text() == f"{power['min_detectable_effect'] * 100:.3g} points"
    page.screenshot(path=str(screens / "power.png"), full_page=True)
    assert not dialogs


def test_plan_page_links_the_arms_item_comparison(browser: Any, server: str) -> None:
    page, _ = _page(browser)
    page.goto(f"{server}/plans/{SLUG}")
    page.locator("table.effects a.compare").first.click()
    assert page.locator("h1").inner_text() == f"Item comparison: {SLUG}:f16 vs {SLUG}:q8"
    twin = page.locator("#twin a").get_attribute("href")
    page.goto(server + str(twin))
    d = page.evaluate("() => JSON.parse(document.body.innerText)")["comparison"]
    assert d["a"]["selector"] == f"{SLUG}:f16" and d["b"]["usable"] == 2  # @3 retracted
    assert sum(d["counts"][k] for k in ("improved", "regressed", "unchanged")) == \
        d["counts"]["compared"] > 0


def test_claims_page_says_what_claim_check_says(browser: Any, server: str,
                                                planted: dict[str, Any], screens: Path) -> None:
    page, dialogs = _page(browser)
    page.goto(server + "/")
    page.click("nav >> text=Claims")
    assert page.locator("h1").inner_text() == "Claims"
    for check in planted["claims"]:
        row = page.locator(f"table.claims tr[data-seq='{check['seq']}']")
        assert row.get_attribute("data-stands") == ("yes" if check["stands"] else "no")
        assert row.locator(".badge").inner_text() == \
            ("stands" if check["stands"] else "does not stand")
        for problem in check["problems"]:
            assert problem in row.inner_text()
    fallen, audited = planted["claims"]
    assert not audited["stands"] and audited["problems"]
    assert all(p.startswith("the audit finds an error: A22") for p in audited["problems"])
    assert "1 run(s) it rests on have been retracted" in fallen["problems"]
    row = page.locator(f"table.claims tr[data-seq='{fallen['seq']}']")
    assert row.locator(".statement").inner_text() == CLAIM  # markup shown as text
    assert row.locator("a", has_text="@3").count() == 1
    assert page.locator("#planted-claim").count() == 0 and page.locator("i").count() == 0
    assert page.locator("#summary").inner_text().startswith("0 of 2 claim(s) still stand")
    page.screenshot(path=str(screens / "claims.png"), full_page=True)
    assert page.title() != "pwned" and not dialogs


def test_planted_markup_is_shown_as_text(browser: Any, server: str, planted: dict[str, Any],
                                         screens: Path) -> None:
    page, dialogs = _page(browser)
    page.goto(server + "/runs?plan=none")
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 1
    rows.locator("a").first.click()
    assert page.locator("#note").inner_text() == NOTE
    items = page.locator("table.items tbody tr")
    assert items.count() == 1
    assert items.locator("td").nth(0).inner_text() == ITEM
    assert items.locator("td").nth(2).inner_text() == ERROR
    captured = page.locator("table.apparatus tr", has_text="model").inner_text()
    assert "<u>m</u>" in captured and "<u>m2</u>" in captured
    log = page.locator("table.logs tbody tr")
    assert [log.locator("td").nth(i).inner_text() for i in range(4)] == \
        [LOG["name"], LOG["sha256"], str(LOG["size"]), LOG["excerpt"]]
    for planted_id in ("planted-note", "planted-item", "planted-error", "planted-excerpt"):
        assert page.locator(f"#{planted_id}").count() == 0
    assert page.locator("img").count() == 0 and page.locator("u").count() == 0
    assert page.locator("body script").count() == 0
    page.screenshot(path=str(screens / "planted-run.png"), full_page=True)

    page.goto(server + "/")
    assert NOTE in page.locator("#notes").inner_text()
    assert page.locator("#planted-note").count() == 0 and page.locator("img").count() == 0

    page.goto(server + "/retractions")
    row = page.locator("table.retractions tbody tr")
    assert REASON in row.inner_text() and "re-run after the fix" in row.inner_text()
    assert page.locator("#planted-reason").count() == 0
    assert page.title() != "pwned" and not dialogs


def test_audit_findings_link_to_their_entries(browser: Any, server: str,
                                              planted: dict[str, Any]) -> None:
    page, _ = _page(browser)
    page.goto(server + "/audit.json")
    findings = page.evaluate("() => JSON.parse(document.body.innerText)")["audit"]["findings"]
    assert findings
    page.goto(server + "/audit")
    rows = page.locator("table.findings tbody tr")
    assert rows.count() == len(findings)
    target = next(e for f in findings for e in f["entries"] if e["kind"] == "run")
    page.locator(f"table.findings a[href='/runs/{target['digest']}']").first.click()
    assert page.locator("h1").inner_text() == f"Run @{target['seq']}"


def test_the_run_table_filters_and_sorts(browser: Any, server: str,
                                         planted: dict[str, Any]) -> None:
    """Filtered by an apparatus field through the page's own form, then sorted by score by
    its link (twice: descending), as a user would; the rows agree with report --json."""
    page, _ = _page(browser)
    page.goto(server + "/runs")
    page.fill("form.filters input[name=where]", "kv_cache_precision=q8")
    page.click("form.filters button")
    page.wait_for_url("**/runs?**")
    seqs = [int(s) for s in page.locator("table.runs tr[data-seq]").evaluate_all(
        "rows => rows.map(r => r.dataset.seq)")]
    q8 = sorted(r["seq"] for arm in planted["report"]["arms"] if arm["name"] == "q8"
                for r in arm["runs"])
    assert sorted(seqs) == q8, (seqs, q8)
    page.click("#count >> text=score")
    page.click("#count >> text=score")  # the second click turns the order round
    page.wait_for_url("**sort=-score**")
    scores = page.locator("table.runs tr[data-seq]").evaluate_all(
        "rows => rows.map(r => r.dataset.seq)")
    by_score = {r["seq"]: r["score"] for arm in planted["report"]["arms"] for r in arm["runs"]}
    ordered = [by_score[int(s)] for s in scores if by_score.get(int(s)) is not None]
    assert ordered == sorted(ordered, reverse=True) and len(ordered) >= 2, ordered
