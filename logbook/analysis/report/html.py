"""`logbook report PLAN --html FILE`: one self-contained HTML page with a forest plot.

The plot is drawn by matplotlib (the optional ``html`` extra, Agg backend) and embedded as
inline SVG, so the file opens offline: no scripts, no remote fonts, no external resources.
Every string taken from the ledger is escaped. Numbers use the text report's rounding
(``format_estimate`` for the headline). The plot is `report.plot.forest_svg` (the ids its
artists carry are listed there). Long texts (a failure reason, a reporting line) wrap inside
their cells; the other columns keep their words whole, so no table is squeezed at 1200 px.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from logbook.analysis import display
from logbook.analysis.report.plot import forest_svg, report_scale
from logbook.analysis.report.text import (
    arm_summary,
    component_lines,
    effect_parts,
    interval_cell,
    observed_cell,
    review_lines,
    score_cell,
)
from logbook.errors import EnvironmentProblem

if TYPE_CHECKING:
    from logbook.analysis.report_shapes import Report

CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d232a;
 max-width:1100px;margin:0 auto;padding:24px 28px 60px;background:#fbfbfa}
h1{font-size:1.5em;margin:0 0 4px}h2{font-size:1.15em;margin:28px 0 8px;
 border-bottom:1px solid #ddd;padding-bottom:3px}h3{font-size:1em;margin:18px 0 6px}
.meta{color:#5b6570;font-size:.9em}.box{border-radius:6px;padding:10px 14px;margin:12px 0}
.suspect{background:#fde8e8;border:1px solid #e0a0a0}.finding{background:#fff5e0;
 border:1px solid #e8c880}.verdict{border:2px solid #888}.v-success{border-color:#2e8540;
 background:#eef8f0}.v-failure{border-color:#c0392b;background:#fcefed}
.v-inconclusive{border-color:#b8860b;background:#fdf8e8}.v-incomplete{border-color:#777;
 background:#f1f1f1}.verdict .w{font-size:1.15em;font-weight:600}
.headline{display:flex;gap:14px;flex-wrap:wrap;margin:14px 0}.card{background:#fff;
 border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:180px}
.card .n{font-size:1.6em;font-weight:600}.card .l,.note{color:#5b6570;font-size:.85em}
table{border-collapse:collapse;margin:6px 0;font-size:.92em}th,td{padding:3px 10px;
 border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top;white-space:nowrap}
th{background:#f0f0ee}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.text,.finding td,td.wrap{white-space:normal;overflow-wrap:anywhere}td.text{min-width:16em;
 width:100%}table.wide{width:100%}.finding table{background:#fff;font-size:.88em}
tr.retracted td{color:#888;text-decoration:line-through}tr.retracted td.st{text-decoration:none}
.badge{display:inline-block;border-radius:3px;padding:0 6px;font-size:.85em;color:#fff}
.b-completed{background:#2e8540}.b-failed{background:#c0392b}.b-aborted{background:#b8860b}
.b-retracted{background:#666}.line{font-family:ui-monospace,Menlo,Consolas,monospace;
 background:#fff;border:1px solid #ddd;padding:4px 8px;display:inline-block}
figure{margin:10px 0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:6px}
figure svg{width:100%;height:auto}figcaption{color:#5b6570;font-size:.85em;padding:4px 8px}
"""


def _e(x: Any) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return escape("—" if x is None else str(x), quote=True)


class HtmlRenderer:
    """One self-contained page (needs matplotlib, the ``html`` extra)."""

    name = "html"

    def render(self, rep: Report) -> str:
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise EnvironmentProblem(
                "the HTML report needs matplotlib: pip install 'logbook[html]'") from exc
        return render_html(rep.as_json())  # the page reads the JSON form, as text does


HTML = HtmlRenderer()


def _estimate(point: float, low: float, high: float, scale: float, signed: bool) -> str:
    from logbook import stats

    f = stats.format_estimate(point, low, high, scale=scale)
    sign = "+" if signed and not f.point.startswith("-") and float(f.point) != 0 else ""
    sep = " to " if f.low.startswith("-") or f.high.startswith("-") else "–"
    return f"{sign}{f.point} <span class='l'>({_e(f.low)}{sep}{_e(f.high)})</span>"


def _table(head: list[str], rows: list[list[str]], classes: list[str] | None = None,
           cls: str = "") -> str:
    """A table; cells are already HTML (escape before passing)."""
    out = [f"<table class='{cls}'><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for i, row in enumerate(rows):
        cls = f" class='{classes[i]}'" if classes and classes[i] else ""
        out.append(f"<tr{cls}>" + "".join(row) + "</tr>")
    return "".join(out) + "</table>"


def _arm_section(arm: dict[str, Any], scale: float) -> str:
    rows, classes = [], []
    for r in arm["runs"]:
        badges = f"<span class='badge b-{_e(r['status'])}'>{_e(r['status'])}</span>"
        if r["retracted"]:
            badges += " <span class='badge b-retracted'>retracted</span>"
        miss = "—" if r["missing_rate"] is None else f"{r['missing_rate'] * 100:.1f}%"
        rows.append([f"<td>@{_e(r['seq'])}</td>", f"<td class='st'>{badges}</td>",
                     f"<td class='num'>{_e(score_cell(r['score'], scale, r['interval']))}</td>",
                     f"<td>{_e(interval_cell(r['interval'], scale))}</td>",
                     f"<td class='num'>{_e(miss)}</td>", f"<td>{_e(r['session'])}</td>",
                     f"<td class='text'>{_e(r.get('reason') or '')}</td>"])
        classes.append("retracted" if r["retracted"] else "")
    unit = " (points)" if scale == 100 else ""
    parts = [f"<h3>Arm {_e(arm['name'])} ({_e(arm['role'])}): {arm['completed']}/"
             f"{arm['planned_runs']} completed, {arm['failed']} failed, {arm['aborted']} "
             f"aborted, {arm['retracted']} retracted</h3>",
             _table(["run", "status", f"score{unit}", "item-level interval", "missing",
                     "session", "reason"], rows, classes, "wide runs")
             if rows else "<div>no runs yet</div>"]
    parts += [f"<div>{_e(line)}</div>" for line in arm_summary(arm, scale)]
    return "\n".join(parts)


def _apparatus(rep: dict[str, Any]) -> str:
    rows = []
    for arm in rep["arms"]:
        diff = arm["differing_apparatus"]
        what = ("; ".join(f"<b>{_e(k)}</b> ({_e(', '.join(map(str, v)))})"
                          for k, v in diff.items()) if diff else "identical across its runs")
        rows.append([f"<td>{_e(arm['name'])}</td>",
                     f"<td class='text'><span class='line'>{_e(arm['line'])}</span></td>",
                     f"<td class='text'>{what}</td>"])
    return _table(["arm", "reporting line", "apparatus fields that differ between its runs"],
                  rows, cls="wide apparatus")


def _effects(rep: dict[str, Any], scale: float) -> str:
    rows, notes = [], []
    for e in rep["effects"]:
        name = f"<td>{_e(e['treatment'])} − {_e(e['control'])}</td>"
        if e.get("point") is None:
            rows.append([name, f"<td colspan='6' class='wrap'>{_e(e.get('reason'))}</td>"])
            continue
        wc = e.get("worst_case")
        point, interval, worst = effect_parts(e, scale)
        rows.append([name, f"<td class='num'>{point}</td>",
                     f"<td>{interval}</td>",
                     f"<td>{_e(e['method'])}</td>",
                     f"<td class='num'>{_e(display.pvalue(e['pvalue'], e.get('n_resamples')))}"
                     "</td>", f"<td class='wrap'>{_e(display.effect_basis(e))}</td>",
                     "<td class='wrap'>" + ("—" if not wc else f"{worst} ({wc['missing']} "
                                            "missing item-runs)") + "</td>"])
        if e.get("mcnemar"):
            mc = e["mcnemar"]
            notes.append(f"<p>Secondary — exact McNemar ({_e(e['treatment'])} vs "
                         f"{_e(e['control'])}): {mc['treatment_better']} items better, "
                         f"{mc['control_better']} worse, {_e(display.pvalue(mc['pvalue']))}</p>")
    unit = " (points)" if scale == 100 else ""
    return _table(["effect", f"point{unit}", "interval", "method", "p", "rests on",
                   "worst case for the missing"], rows, cls="wide effects") + "".join(notes)


def _verdict(rep: dict[str, Any]) -> str:
    v = rep["verdict"]
    scale = report_scale(rep)
    rows = []
    for label in ("success", "failure"):
        for c in v[label]:
            obs = observed_cell(c, rep, scale)
            arm = f"[{c['arm']}]" if c.get("arm") else ""
            rows.append([f"<td>{label}</td>", f"<td>{_e(c['stat'] + arm)} {_e(c['op'])} "
                         f"{c['value'] * scale:g}</td>", f"<td class='num'>{obs}</td>",
                         f"<td>{'holds' if c['holds'] else 'does not hold'}</td>"])
    line = f"<p><span class='line'>{_e(rep['line'])}</span></p>" if rep["line"] else ""
    return (f"<div class='box verdict v-{_e(v['status'])}'><div class='w'>Verdict: "
            f"{_e(v['wording'])}</div>{line}"
            + _table(["criterion", "condition", "observed", ""], rows) + "</div>")


def _cell(value: str) -> str:
    """A value of a finding's table: a repr'd string without its quotes; None (recorded
    empty) said in words rather than compared."""
    v = value.strip()
    if v in ("None", "null"):
        return "<td class='none'>recorded empty</td>"
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        v = v[1:-1]
    return f"<td>{_e(v)}</td>"


def _finding(f: dict[str, Any]) -> str:
    """An audit finding's box: its sentence, and the table its message carries (lines of
    ``a | b | c`` under the first line, as A06 gives the fields that differ) as a table."""
    head, *rest = str(f.get("message")).split("\n")
    rows = [ln.split(" | ") for ln in rest if " | " in ln]
    notes = [ln.strip() for ln in rest if " | " not in ln and ln.strip()]
    table = ""
    if len(rows) > 1:
        table = _table([_e(h.strip()) for h in rows[0]],
                       [[_cell(c) for c in row] for row in rows[1:]], cls="finding-table")
    elif rows:
        notes = [" | ".join(rows[0]).strip(), *notes]
    return (f"<div class='box finding' data-check='{_e(f.get('check'))}'><b>AUDIT "
            f"{_e(f.get('check'))} [{_e(f.get('severity'))}]:</b> {_e(head)}{table}"
            + "".join(f"<div>{_e(n)}</div>" for n in notes) + "</div>")


def render_html(rep: dict[str, Any]) -> str:
    """The whole page as a string, from the report's JSON form (``Report.as_json()``)."""
    plan, scale = rep["plan"], report_scale(rep)
    title = f"Report: {plan['slug']} — {plan['title']}"
    body = [f"<h1>{_e(title)}</h1>",
            f"<div class='meta'>plan {_e(plan['digest'][:12])} @{_e(plan['seq'])}; metric "
            f"{_e(plan['metric']['name'])} ({_e(plan['metric']['kind'])}); suite "
            f"{_e(plan['suite']['name'])} n={_e(plan['suite'].get('n_items'))}; "
            f"{_e(plan['runs_per_arm'])} runs per arm; min_effect {_e(plan['min_effect'])}; "
            f"alpha {_e(display.alpha_of(plan))}; "
            f"ledger size {_e(rep['ledger']['size'])}</div>"]
    if plan.get("decision"):
        body.append(f"<div class='meta'>decision: {_e(plan['decision'])}</div>")
    if plan.get("retracted"):
        body.append("<div class='box suspect'>This plan has been retracted.</div>")
    for a in plan["amendments"]:
        body.append(f"<div class='meta'>amended @{_e(a['seq'])}: "
                    f"{_e(', '.join(map(str, a['changes'] or [])))} ({_e(a['reason'])})</div>")
    for s in rep["verdict"].get("suspect", []):
        body.append(f"<div class='box suspect'><b>WARNING:</b> {_e(s)}</div>")
    body += [_finding(f) for f in rep.get("findings") or []]
    body.append(_verdict(rep))
    cards = []
    for arm in rep["arms"]:
        if arm["mean"] is not None and arm["interval"]:
            iv = arm["interval"]
            basis = (f"{arm['run_level']['k']} runs" if arm["wider"] == "run_level"
                     else f"n={(arm['item_level'] or {}).get('n')} items")
            cards.append(f"<div class='card'><div class='l'>{_e(arm['name'])} "
                         f"({_e(arm['role'])}): {_e(iv['kind'])} interval, {_e(basis)}"
                         f"</div><div class='n'>"
                         f"{_estimate(arm['mean'], iv['low'], iv['high'], scale, False)}"
                         "</div></div>")
    for e in rep["effects"]:
        if e.get("point") is not None:
            basis = (f"run-level, {e['n']} runs" if e.get("unit") == "runs" else
                     f"item-level, paired, n={e.get('n')} items")
            cards.append(f"<div class='card'><div class='l'>effect {_e(e['treatment'])} − "
                         f"{_e(e['control'])}: {_e(basis)}</div><div class='n'>"
                         f"{_estimate(e['point'], e['low'], e['high'], scale, True)}"
                         "</div></div>")
    body.append(f"<div class='headline'>{''.join(cards)}</div>")
    if cards:
        body.append("<p class='note' id='cards-note'>An arm's card gives the wider of "
                    "its two intervals, the one its line uses: run-level (the spread between "
                    "its runs: what a rerun would show) or item-level (the sampling of the "
                    "suite's items: what a new suite would show). An effect is item-level "
                    "when both arms scored the same items (the paired difference cancels what "
                    "the items share), run-level (Welch, over runs) when they did not.</p>")
    body.append(f"<figure id='forest'>{forest_svg(rep)}<figcaption>Forest plot: each run's "
                "score with its item-level interval; each arm's run-level and item-level "
                "intervals; the paired effect with its interval against ±min_effect."
                "</figcaption></figure>")
    body.append("<h2>Runs</h2>")
    body.extend(_arm_section(a, scale) for a in rep["arms"])
    body.append("<h2>Apparatus</h2>" + _apparatus(rep))
    if rep["effects"]:
        unit = " (points)" if scale == 100 else ""
        body.append(f"<h2>Effect (treatment − control{unit})</h2>" + _effects(rep, scale))
    if rep.get("components"):
        lines = component_lines(rep, scale)
        body.append(f"<h2>{_e(lines[0])}</h2><pre>{_e(chr(10).join(lines[1:]))}</pre>")
    if rep.get("cost"):
        from logbook.analysis.report.text import cost_lines

        body.append("<h2>Cost</h2><pre>" + _e("\n".join(line[2:] for line in cost_lines(
            rep["cost"]))) + "</pre>")
    if rep["excluded"]:
        body.append("<h2>Excluded from the figures (retracted)</h2>" + _table(
            ["run", "digest", "arm", "reason", "correction"],
            [[f"<td>@{_e(x['seq'])}</td>", f"<td>{_e(x['digest'][:12])}</td>",
              f"<td>{_e(x['arm'])}</td>", f"<td class='text'>{_e(x['reason'])}</td>",
              f"<td class='text'>{_e(x.get('correction') or '')}</td>"]
             for x in rep["excluded"]]))
        body.extend(f"<p>{_e(line.strip())}</p>" for line in review_lines(rep.get("retractions")))
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{_e(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
