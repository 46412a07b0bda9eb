"""The plan page's body: the report (`report --json`, through `data.report_json`) as HTML.

Numbers are printed the way the text report prints them (its `score_cell`, `interval_cell`
and `arm_summary`), the plot is the HTML report's own forest plot (`forest_svg`, matplotlib),
and the whole self-contained HTML report is one link away (`/plans/PLAN/report.html`).
"""

from __future__ import annotations

from typing import Any

from logbook.web.markup import Markup, finding, join, link, table, tag


def _scale(rep: dict[str, Any]) -> float:
    from logbook.analysis import display

    return display.scale_of(rep["plan"]["metric"]["kind"])


def forest(rep: dict[str, Any]) -> Markup:
    """The report's forest plot, or one sentence saying why it is not drawn."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return tag("p", "The plots need matplotlib (pip install 'logbook[web]').", cls="meta")
    from logbook.analysis.report.html import forest_svg

    # matplotlib's SVG with text drawn as paths: made by the report's renderer from numbers
    # and escaped labels, the one piece of HTML on these pages not built by markup.tag
    return tag("figure", Markup(forest_svg(rep)),
               tag("figcaption", "Each run's score with its item-level interval; each arm's "
                   "run-level and item-level intervals; the paired effect against "
                   "±min_effect."), id="forest")


def _verdict(rep: dict[str, Any], scale: float) -> list[Markup]:
    from logbook.analysis.report.text import observed_cell

    v = rep["verdict"]
    rows = []
    for label in ("success", "failure"):
        for c in v[label]:
            arm = f"[{c['arm']}]" if c.get("arm") else ""
            rows.append([label, f"{c['stat']}{arm} {c['op']} {c['value'] * scale:g}",
                         observed_cell(c, rep, scale),
                         "holds" if c["holds"] else "does not hold"])
    out = [tag("div", tag("b", "Verdict: "), tag("span", v["wording"], id="verdict"),
               tag("div", tag("code", rep["line"]), id="line") if rep["line"] else "",
               table(["criterion", "condition", "observed", ""], rows),
               cls=f"box verdict v-{v['status']}", data_status=v["status"])]
    out += [tag("div", "WARNING: ", s, cls="box error") for s in v.get("suspect") or []]
    review = rep.get("retractions")
    if review:
        which = ", ".join(f"@{r['seq']}" for r in review["runs"])
        out.append(tag("div", table(
            ["", "verdict"],
            [[f"without the retracted runs ({which}), as reported", review["without"]["wording"]],
             ["with them, as they stood", review["with"]["wording"]]]),
            tag("p", "The retractions change the verdict." if review["changes_verdict"]
                else "The retractions leave the verdict as it is."),
            cls="box", id="retraction-review"))
    else:
        out.append(tag("p", "No run of this plan is retracted: the verdict is the same with "
                       "and without retracted runs.", cls="meta", id="retraction-review"))
    return out


def _arm(arm: dict[str, Any], scale: float,
         refused: list[dict[str, Any]] | None = None) -> list[Markup]:
    from logbook.analysis.report.text import arm_summary, interval_cell, score_cell

    rows, attrs = [], []
    for r in arm["runs"]:
        miss = "—" if r["missing_rate"] is None else f"{r['missing_rate'] * 100:.1f}%"
        rows.append([link(f"@{r['seq']}", "runs", r["digest"]), r["status"]
                     + (", retracted" if r["retracted"] else "")
                     + (", admitted" if r.get("admitted_by") else ""),
                     tag("span", score_cell(r["score"], scale, r["interval"]), cls="score"),
                     interval_cell(r["interval"], scale), miss, r["session"], r.get("reason")])
        attrs.append({"data_seq": r["seq"], "cls": "retracted" if r["retracted"] else None})
    unit = " (points)" if scale == 100 else ""
    head = (f"Arm {arm['name']} ({arm['role']}): {arm['completed']}/{arm['planned_runs']} "
            f"completed, {arm['failed']} failed, {arm['aborted']} aborted, "
            f"{arm['retracted']} retracted")
    return [tag("h3", head),
            table(["run", "status", f"score{unit}", "item-level interval", "missing",
                   "session", "reason"], rows, cls="arm-runs", row_attrs=attrs)
            if rows else tag("p", "no runs counted yet" if refused else "no runs yet"),
            *_refused(refused or []),
            tag("ul", [tag("li", line) for line in arm_summary(arm, scale)])]


def _refused(refused: list[dict[str, Any]]) -> list[Markup]:
    """The runs meant for the arm that the plan refused (not counted, not admitted)."""
    if not refused:
        return []
    return [tag("p", f"{len(refused)} run(s) meant for this arm were refused and are not "
                "counted: fix the plan (", tag("code", "logbook amend"), "), then count them ("
                , tag("code", "logbook admit"), ").", cls="box error"),
            table(["run", "status", "refused because"],
                  [[link(f"@{x['seq']}", "runs", x["digest"]),
                    x["status"] + (", retracted" if x.get("retracted") else ""), x["reason"]]
                   for x in refused], cls="refused")]


def _effects(rep: dict[str, Any], scale: float) -> Markup:
    from logbook.analysis import display
    from logbook.analysis.report.text import effect_parts

    rows = []
    slug = rep["plan"]["slug"]
    for e in rep["effects"]:
        name = f"{e['treatment']} − {e['control']}"
        items = link("improved, regressed", "compare", query={
            "a": f"{slug}:{e['control']}", "b": f"{slug}:{e['treatment']}"}, cls="compare")
        if e.get("point") is None:
            rows.append([name, "—", e.get("reason"), "", "", "", items])
            continue
        point, interval, _ = effect_parts(e, scale)
        rows.append([name, tag("span", point, cls="effect"), interval, e["method"],
                     display.pvalue(e["pvalue"], e.get("n_resamples")),
                     display.effect_basis(e), items])
    unit = " (points)" if scale == 100 else ""
    return table(["effect", f"point{unit}", "interval", "method", "p", "rests on", "items"],
                 rows, cls="effects")


def plan_body(rep: dict[str, Any]) -> list[Markup]:
    from logbook.analysis.display import alpha_of
    from logbook.analysis.report.text import component_lines

    p, scale = rep["plan"], _scale(rep)
    suite = p.get("suite") or {}
    out = [tag("p", p["title"], cls="title"),
           tag("div", f"plan @{p['seq']} {p['digest'][:12]}; metric {p['metric']['name']} "
               f"({p['metric']['kind']}); suite {suite.get('name')} n={suite.get('n_items')}; "
               f"{p['runs_per_arm']} runs per arm; min_effect {p['min_effect']}; alpha "
               f"{alpha_of(p):g}; ledger size {rep['ledger']['size']}", cls="meta"),
           tag("div", "decision: ", p.get("decision"), cls="meta")]
    if p.get("retracted"):
        out.append(tag("div", "This plan has been retracted.", cls="box error"))
    out += [tag("div", f"amended @{a['seq']}: {', '.join(map(str, a['changes'] or []))} "
                f"({a['reason']})", cls="meta") for a in p["amendments"]]
    out += _verdict(rep, scale)
    out.append(tag("p", link("the full report as one HTML file", "plans", p["digest"],
                             "report.html"), cls="meta"))
    out.append(forest(rep))
    out.append(tag("h2", "Runs"))
    for arm in rep["arms"]:
        out += _arm(arm, scale, [x for x in rep.get("refused") or []
                                 if x["arm"] == arm["name"]])
    arms = {a["name"] for a in rep["arms"]}
    out += _refused([x for x in rep.get("refused") or [] if x["arm"] not in arms])
    if rep["effects"]:
        out += [tag("h2", "Effect (treatment − control)"), _effects(rep, scale)]
    lines = component_lines(rep, scale)
    if lines:
        out += [tag("h2", lines[0]), tag("pre", "\n".join(lines[1:]))]
    if rep["excluded"]:
        out += [tag("h2", "Excluded from the figures (retracted)"), table(
            ["run", "arm", "reason", "correction"],
            [[link(f"@{x['seq']}", "runs", x["digest"]), x["arm"], x["reason"],
              x.get("correction")] for x in rep["excluded"]], cls="excluded")]
    findings = rep.get("findings") or []
    out.append(tag("h2", f"Audit findings on this plan ({len(findings)})"))
    out.append(table(["rule", "severity", "finding", "entries"],
                     [[f["check"], f["severity"], finding(f["message"]),
                       join([link(d[:12], "entries", d) for d in f["entries"]], ", ")]
                      for f in findings], cls="findings") if findings else tag("p", "none"))
    return out
