"""Each page's HTML, drawn from the data of its JSON twin (logbook.web.data, .runs_data) and
nothing else.

Every value from the ledger goes through `markup.tag` (escaped); the only HTML not built
here is the report's forest plot, drawn by the report's own renderer (matplotlib SVG, text as
paths). Pages carry no script: the server's Content-Security-Policy forbids any.
"""

from __future__ import annotations

from typing import Any

from logbook.web.claims_page import claims_page
from logbook.web.items_page import compare_page, power_page
from logbook.web.markup import Markup, esc, finding, href, join, link, table, tag
from logbook.web.report_page import plan_body
from logbook.web.run_items import item_page, items_page

CSS = """
body{font:15px/1.45 system-ui,sans-serif;color:#1d232a;max-width:1440px;margin:0 auto;
 padding:0 24px 48px;background:#fbfbfa}
nav{display:flex;flex-wrap:wrap;gap:4px 18px;padding:12px 0;border-bottom:1px solid #ddd;
 margin-bottom:10px}
nav a{text-decoration:none;font-weight:600}h1{font-size:1.45em;margin:14px 0 6px}
h2{font-size:1.12em;margin:24px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
.meta,.integrity{color:#5b6570;font-size:.88em}.integrity{margin:4px 0 12px}
table{border-collapse:collapse;margin:6px 0;font-size:.92em}th,td{padding:3px 8px;
 border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top;overflow-wrap:break-word}
td code{overflow-wrap:anywhere}.nowrap,.badge,.score,.interval{white-space:nowrap}
.wide{overflow-x:auto;max-width:100%}.wide table{width:100%}
th{background:#f0f0ee;overflow-wrap:normal}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.retracted td{color:#888}code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;
 font-size:.88em}pre{background:#fff;border:1px solid #ddd;padding:8px;overflow:auto;
 white-space:pre-wrap;overflow-wrap:anywhere}.box{border-radius:6px;padding:10px 14px;
 margin:12px 0;border:1px solid #ccc;background:#fff}.error{background:#fde8e8;
 border-color:#e0a0a0}.badge{border-radius:3px;padding:0 6px;font-size:.85em;color:#fff;
 background:#666}.b-completed,.b-success{background:#2e8540}.b-failed,.b-failure{background:#c0392b}
.b-aborted,.b-inconclusive{background:#b8860b}.b-incomplete{background:#777}
.v-success{border:2px solid #2e8540}.v-failure{border:2px solid #c0392b}
.v-inconclusive{border:2px solid #b8860b}.v-incomplete{border:2px solid #777}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end}form.filters label{
 display:flex;flex-direction:column;font-size:.8em;color:#5b6570}
figure{margin:10px 0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:6px}
figure svg{width:100%;height:auto}.side{display:grid;grid-template-columns:1fr 1fr 1fr;gap:8px}
.w{white-space:nowrap}/* a table wider than the window scrolls in its own box, not the page */
table{display:block;overflow-x:auto;max-width:100%}
@media (max-width:700px){body{padding:0 12px 32px}.side{grid-template-columns:1fr}}
"""

NAV = (("Overview", ""), ("Plans", "plans"), ("Runs", "runs"), ("Compare", "compare"),
       ("Claims", "claims"), ("Audit", "audit"), ("Retractions", "retractions"),
       ("Integrity", "integrity"))


def short(digest: Any) -> str:
    return "—" if not digest else str(digest)[:12]


def badge(word: Any) -> Markup:
    return tag("span", word, cls=f"badge b-{word}")


def num(x: Any, digits: int = 4) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def entry_link(ref: dict[str, Any] | None) -> Markup:
    """A link to the page of the entry ``ref`` ({digest, seq, kind}) names."""
    if not ref:
        return esc(None)
    label = f"@{ref['seq']} {ref['kind']}" if ref.get("seq") is not None else short(ref["digest"])
    if ref.get("kind") == "run":
        return link(label, "runs", ref["digest"])
    if ref.get("kind") == "plan":
        return link(label, "plans", ref["digest"])
    return link(label, "entries", ref["digest"])


def layout(title: str, twin: str, data: dict[str, Any], *body: Any) -> str:
    """The whole page: navigation, the integrity line, the body, and a link to the twin."""
    i = data.get("integrity") or {}
    line = (f"verified {i.get('entries')} entries to head {short(i.get('head'))}: "
            f"{i.get('checks')}") if i.get("verified") else ""
    page = tag("html", tag("head", tag("meta", charset="utf-8"),
                           tag("meta", name="viewport", content="width=device-width"),
                           tag("title", f"{title} · logbook"), tag("style", Markup(CSS))),
               tag("body", tag("nav", [link(name, *([p] if p else [])) for name, p in NAV]),
                   tag("h1", title), tag("div", line, cls="integrity", id="integrity"),
                   *body, tag("p", tag("a", "this page as JSON", href="/" + twin),
                              cls="meta", id="twin") if twin else ""), lang="en")
    return "<!DOCTYPE html>\n" + page


def error_page(status: int, message: str) -> str:
    return layout(f"{status}", "", {}, tag("div", message, cls="box error", id="error"))


def _effect(e: dict[str, Any] | None, scale: int) -> Any:
    if not e or e.get("point") is None:
        return "—"
    from logbook.analysis.report.text import effect_parts

    point, interval, _ = effect_parts(e, scale)
    return [tag("span", point, cls="effect"), " ", tag("span", f"[{interval}]",
                                                       cls="interval")]


def overview(d: dict[str, Any]) -> str:
    led = d["ledger"]
    plans_table = table(
        ["plan", "title", "verdict", "effect (interval)"],
        [[link(p["slug"], "plans", p["digest"]), p["title"], badge(p["verdict"]),
          _effect(p["effect"], p["scale"])] for p in d["plans"]],
        cls="plans", row_attrs=[{"data_plan": p["slug"]} for p in d["plans"]]) \
        if d["plans"] else tag("p", "no plans")
    latest = tag("div", table(RUN_HEAD, [run_cells(r) for r in d["latest_runs"]], cls="runs",
                              row_attrs=[{"data_seq": r["seq"], "cls": "retracted"
                                          if r["retracted"] else None}
                                         for r in d["latest_runs"]]), cls="wide") \
        if d["latest_runs"] else tag("p", "no runs")
    opened = table(["plan", "title", "runs done", "next arm", "due"],
                   [[link(p["slug"], "plans", p["plan"]), p["title"],
                     f"{p['runs_done']}/{p['runs_planned']}", p["next_arm"], p["due"]]
                    for p in d["open_plans"]]) if d["open_plans"] else tag("p", "none")
    claims = table(["claim", "statement", "status"],
                   [[link(f"@{c['seq']}", "entries", c["digest"]), c["statement"], c["status"]]
                    for c in d["claims"]]) if d["claims"] else tag("p", "none")
    notes = tag("ul", [tag("li", link(f"@{n['seq']}", "entries", f"@{n['seq']}"), " ",
                           tag("span", n["text"], cls="note")) for n in d["notes"]],
                id="notes") if d["notes"] else tag("p", "none")
    return layout(f"Ledger {led['name']}", "index.json", d,
                  tag("h2", "Plans"), plans_table,
                  tag("p", link(f"all {d['plans_total']} plans", "plans"), cls="meta")
                  if d["plans_total"] > len(d["plans"]) else "",
                  tag("h2", "Latest runs"), latest,
                  tag("p", link(f"all {led['size']} entries' runs", "runs"), " · ",
                      link("integrity: keys, head, checkpoints", "integrity"), cls="meta"),
                  tag("h2", "Open plans"), opened, tag("h2", "Next"),
                  tag("ul", [tag("li", s) for s in d["next"]]),
                  tag("h2", "Claims"), claims, tag("h2", "Latest notes"), notes)


def integrity(d: dict[str, Any]) -> str:
    led, cp = d["ledger"], d["latest_checkpoint"]
    facts = table(["", ""], [["name", led["name"]], ["uuid", led["uuid"]],
                             ["size", led["size"]], ["head", tag("code", led["head"])],
                             ["entries by kind", ", ".join(f"{k} {n}" for k, n in
                                                          sorted(led["kinds"].items()))]],
                  cls="facts")
    checkpoint = (tag("p", "no checkpoint is stored (`logbook checkpoint` makes one)")
                  if cp is None else
                  table(["size", "root", "created"], [[cp["size"], tag("code", cp["root"]),
                                                       cp["created"]]]))
    keys = table(["name", "fingerprint", "added", "revoked"],
                 [[k["name"], tag("code", k["fingerprint"]), f"@{k['added']}",
                   "—" if k["revoked"] is None else f"@{k['revoked']}"] for k in d["keys"]])
    return layout("Integrity", "integrity.json", d, facts, tag("h2", "Latest checkpoint"),
                  checkpoint, tag("h2", "Signing keys"), keys)


def plans(d: dict[str, Any]) -> str:
    rows, attrs = [], []
    for p in d["plans"]:
        arms = join([f"{a['name']} ({a['role']}) {a['completed']}/{a['planned']}"
                     + (f", {a['failed']} failed" if a["failed"] else "")
                     + (f", {a['retracted']} retracted" if a["retracted"] else "")
                     + (f", {a['refused']} refused" if a.get("refused") else "")
                     for a in p["arms"]], "; ")
        rows.append([link(p["slug"], "plans", p["digest"]), p["title"], badge(p["verdict"]),
                     arms, f"{p['runs_done']}/{p['runs_planned']}", p["due"],
                     link(p["findings"], "audit") if p["findings"] else "0"])
        attrs.append({"data_plan": p["slug"], "cls": "retracted" if p["retracted"] else None})
    return layout("Plans", "plans.json", d, table(
        ["plan", "title", "verdict", "arms (completed/planned)", "runs done", "due",
         "findings"], rows, cls="plans", row_attrs=attrs) if rows else tag("p", "no plans"))


def plan(d: dict[str, Any]) -> str:
    rep = d["report"]
    p = rep["plan"]
    return layout(f"Plan {p['slug']}", f"plans/{p['digest']}.json", d, *plan_body(rep))


RUN_HEAD = ["run", "time", "plan / arm", "model", "suite", "metric", "score (95% interval)",
            "missing", "status", "harness", "note or reason"]


def _score(r: dict[str, Any]) -> Any:
    from logbook.analysis.report.text import interval_cell, score_cell

    scale = r.get("scale") or 1
    if r["score"] is None:
        return tag("span", "—", cls="score")
    iv = r.get("interval")
    return [tag("span", score_cell(r["score"], scale, iv), cls="score"), " ",
            tag("span", "" if not iv else f"[{interval_cell(iv, scale).split(' (')[0]}]",
                cls="interval")]


def run_cells(r: dict[str, Any]) -> list[Any]:
    plan_cell = tag("span", [link(r["plan"]["slug"], "plans", r["plan"]["digest"]), " / ",
                             r["arm"]], cls="nowrap") \
        if r["plan"] else tag("span", "exploratory", cls="meta")
    suite = r.get("suite") or "—"
    if r.get("split"):
        suite = f"{suite} ({r['split']})"
    return [link(f"@{r['seq']}", "runs", r["digest"]),
            tag("span", str(r.get("ts") or "")[:16].replace("T", " "), cls="nowrap"),
            plan_cell, r.get("model") or "—", suite, r.get("metric") or "—", _score(r),
            "—" if r["missing_rate"] is None else f"{r['missing']} ({r['missing_rate']:.1%})",
            [badge(r["status"])] + ([" ", badge("retracted")] if r["retracted"] else []),
            r.get("harness") or "—", r["note"] or r["reason"]]


def _field(name: str, label: str, value: Any) -> Markup:
    return tag("label", label, tag("input", name=name, value=value or ""))


def runs(d: dict[str, Any]) -> str:
    f = d["filters"]
    form = tag("form", [_field(n, n, f.get(n)) for n in ("plan", "arm", "status", "session",
                                                         "since", "until")],
               _field("where", "where FIELD=VALUE", (f.get("where") or [""])[0]),
               _field("sort", "sort", d["sort"]), tag("button", "filter", type="submit"),
               cls="filters", method="get", action="/runs")
    sorts = join([link(k, "runs", query={**f, "sort": k if d["sort"] != k else f"-{k}"})
                  for k in ("seq", "plan", "arm", "status", "session", "score", "missing")],
                 " · ")
    here = {**f, "sort": d["sort"], **({"per": d["per"]} if d["per"] != 100 else {})}
    twin = href("runs.json", query={**here, **({"page": d["page"]} if d["page"] > 1
                                               else {})}).lstrip("/")
    rows = [run_cells(r) for r in d["runs"]]
    attrs = [{"data_seq": r["seq"], "cls": "retracted" if r["retracted"] else None}
             for r in d["runs"]]
    first = (d["page"] - 1) * d["per"] + 1
    shown = (f"runs {first}–{first + len(rows) - 1} of {d['matched']}" if rows else
             f"0 of {d['matched']}") + (f" (of {d['total']} in all)" if d["matched"] !=
                                         d["total"] else "")
    pager = [link("previous", "runs", query={**here, "page": d["page"] - 1})
             if d["page"] > 1 else "",
             f" page {d['page']} of {d['pages']} ",
             link("next", "runs", query={**here, "page": d["page"] + 1})
             if d["page"] < d["pages"] else ""]
    return layout("Runs", twin, d, form, tag("p", f"{shown}; sort by ", sorts, cls="meta",
                                             id="count"),
                  tag("div", table(RUN_HEAD, rows, cls="runs", row_attrs=attrs), cls="wide"),
                  tag("p", pager, cls="meta", id="pager"))


def _value(v: Any, is_set: bool) -> Any:
    return tag("code", "null" if v is None else v) if is_set else "—"


def run(d: dict[str, Any]) -> str:
    r = d["run"]
    facts = table(["", ""], [
        ["digest", tag("code", r["digest"])], ["appended", r["ts"]],
        ["signer", tag("code", d["signer"])],
        ["plan", link(r["plan"]["slug"], "plans", r["plan"]["digest"]) if r["plan"]
         else "exploratory (no plan)"],
        ["arm", r["arm"]], ["status", badge(r["status"])], ["session", r["session"]],
        ["started / finished", f"{d['started'] or '—'} / {d['finished'] or '—'}"],
        ["metric", d["metric"]], ["score", tag("span", num(r["score"]), id="score")],
        ["items", r["items"] if r["records"] == r["items"]
         else f"{r['items']} ({r['records']} records: samples or epochs)"],
        ["missing", "—" if r["missing_rate"] is None
         else f"{r['missing']} ({r['missing_rate']:.1%})"],
        ["note", tag("span", r["note"], id="note")], ["reason", r["reason"]]], cls="facts")
    body: list[Any] = [facts]
    if d["compare_with"]:
        body.append(tag("p", "Compare its items with ", join(
            [link(f"arm {c['arm']}", "compare", query={"a": c["a"], "b": c["b"]},
                  cls="compare") for c in d["compare_with"]], ", "), id="compare-with"))
    for x in d["retractions"]:
        body.append(tag("div", "Retracted by ", link(f"@{x['seq']}", "entries", x["digest"]),
                        f" ({x['category']}): {x['reason']}",
                        f"; correction: {x['correction']}" if x["correction"] else "",
                        cls="box error"))
    body += [tag("h2", "Apparatus: declared and captured"),
             table(["field", "declared", "captured"],
                   [[tag("code", a["field"]), _value(a["declared"], a["declared_set"]),
                     _value(a["captured"], a["captured_set"])] for a in d["apparatus"]],
                   cls="apparatus",
                   row_attrs=[{"cls": "differs"} if a["declared_set"] and a["captured_set"]
                              and a["declared"] != a["captured"] else {}
                              for a in d["apparatus"]]),
             tag("h2", "Logs")]
    body.append(table(["name", "sha256", "size", "excerpt"],
                      [[x.get("name"), tag("code", x.get("sha256")), x.get("size"),
                        tag("pre", x.get("excerpt")) if x.get("excerpt") else "—"]
                       for x in d["logs"]], cls="logs") if d["logs"] else tag("p", "no logs"))
    shown = "all items" if d["items_shown"] == "all" else "items with an error or no score"
    other = (link("show only those with errors", "runs", r["digest"])
             if d["items_shown"] == "all" else
             link("show all items", "runs", r["digest"], query={"items": "all"}))
    traces = link("every item, filtered and with its trace", "runs", r["digest"], "items",
                  id="items-page")
    body += [tag("h2", f"Items: {shown} ({len(d['items'])}; {d['items_with_errors']} with "
                 "an error)"), tag("p", other, "; ", traces, cls="meta"),
             table(["id", "score", "error", "cluster", "sample"],
                   [[tag("code", i["id"]), "missing" if i["score"] is None else i["score"],
                     i["error"], i["cluster"], i["sample"]] for i in d["items"]], cls="items")]
    return layout(f"Run @{r['seq']}", f"runs/{r['digest']}.json", d, *body)


def audit(d: dict[str, Any]) -> str:
    a = d["audit"]
    rows = [[f["check"], badge(f["severity"]), f"@{f['seq']}" if f["seq"] is not None else "—",
             finding(f["message"]), join([entry_link(e) for e in f["entries"]], ", ")]
            for f in a["findings"]]
    summary = (f"{len(rows)} finding(s) from {len(a['rules_run'])} rules over {a['entries']} "
               f"entries; {'no error' if a['ok'] else 'an error-level finding stands'}")
    return layout("Audit", "audit.json", d, tag("p", summary, id="summary"),
                  table(["rule", "severity", "at", "finding", "entries"], rows, cls="findings")
                  if rows else tag("p", "no findings"))


def _original(o: dict[str, Any] | None) -> Any:
    if o is None:
        return "—"
    if o["kind"] == "run":
        return (f"run of {o['plan'] or 'no plan'}, arm {o['arm']}, {o['status']}, score "
                f"{num(o['score'])}" + (f"; note: {o['note']}" if o["note"] else ""))
    if o["kind"] == "plan":
        return f"plan {o['slug']}: {o['title']}"
    return o["kind"]


def retractions(d: dict[str, Any]) -> str:
    rows = [[link(f"@{x['seq']}", "entries", x["digest"]), entry_link(x["target"]),
             _original(x["original"]), x["category"], x["reason"], x["correction"]]
            for x in d["retractions"]]
    return layout("Retractions", "retractions.json", d, table(
        ["retraction", "withdraws", "the original", "category", "reason", "correction"], rows,
        cls="retractions") if rows else tag("p", "nothing has been retracted"))


def entry(d: dict[str, Any]) -> str:
    import json

    kind, digest = d["kind"], d["digest"]
    page = {"run": ("runs", "the run's page"), "plan": ("plans", "the plan's page")}.get(kind)
    body: list[Any] = [table(["", ""], [["kind", kind], ["seq", d["seq"]],
                                        ["digest", tag("code", digest)],
                                        ["signature", tag("code", d["signature"])]])]
    if page:
        body.append(tag("p", link(page[1], page[0], digest)))
    if d["retracted_by"]:
        body.append(tag("div", "Retracted by ", join([entry_link(x) for x in d["retracted_by"]],
                                                     ", "), cls="box error"))
    body += [tag("h2", "Envelope"), tag("pre", json.dumps(d["envelope"], indent=2,
                                                          ensure_ascii=False), id="envelope")]
    return layout(f"Entry @{d['seq']} ({kind})", f"entries/{digest}.json", d, *body)


def claims(d: dict[str, Any]) -> str:
    return layout("Claims", "claims.json", d, *claims_page(d))


def compare(d: dict[str, Any]) -> str:
    show = d.get("show") if d.get("show") != "all" else None
    twin = href("compare.json", query={"a": d["a"], "b": d["b"], "show": show}).lstrip("/")
    title = "Item comparison" + (f": {d['a']} vs {d['b']}" if d["comparison"] else "")
    return layout(title, twin, d, *compare_page(d))


def power(d: dict[str, Any]) -> str:
    twin = href("power.json", query={"p": d["p"], "discordance": d["discordance"],
                                     "n": d["n"]}).lstrip("/")
    return layout("Power with a measured discordance", twin, d, *power_page(d))


def items_html(d: dict[str, Any]) -> str:
    twin = href("runs", d["run"]["digest"], "items.json",
                query={"where": d["where"], "page": d["page"], "per": d["per"]})
    return layout(f"Items of run @{d['run']['seq']}", twin.lstrip("/"), d, *items_page(d))


def item_html(d: dict[str, Any]) -> str:
    twin = href("runs", d["run"]["digest"], "items", f"{d['item']}.json",
                query={"sample": d["sample"]})
    return layout(f"Item {d['item']} of run @{d['run']['seq']}", twin.lstrip("/"), d,
                  *item_page(d))
