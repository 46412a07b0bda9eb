"""`logbook report PLAN --html FILE`: one self-contained HTML page with a forest plot.

The plot is drawn by matplotlib (the optional ``html`` extra, Agg backend) and embedded as
inline SVG, so the file opens offline: no scripts, no remote fonts, no external resources.
Every string taken from the ledger is escaped. Numbers use the text report's rounding
(``format_estimate`` for the headline). Plot artists carry ids a test can count:
``lb-run-SEQ`` (``-retracted`` appended for a retracted run), ``lb-nonscore-SEQ``,
``lb-arm-I-run-level``, ``lb-arm-I-item-level``, ``lb-effect-I`` and ``lb-min-effect-band``.
"""

from __future__ import annotations

import io
from html import escape
from typing import TYPE_CHECKING, Any

from logbook.analysis import display
from logbook.analysis.report.text import (
    arm_summary,
    component_lines,
    interval_cell,
    review_lines,
    score_cell,
)
from logbook.errors import EnvironmentProblem

if TYPE_CHECKING:
    from logbook.analysis.schemas import Report

ARM_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
GREY = "#9a9a9a"

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
.card .n{font-size:1.6em;font-weight:600}.card .l{color:#5b6570;font-size:.85em}
table{border-collapse:collapse;margin:6px 0;font-size:.92em}th,td{padding:3px 10px;
 border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top}th{background:#f0f0ee}
td.num{text-align:right;font-variant-numeric:tabular-nums}
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


def _scale(rep: dict[str, Any]) -> float:
    return display.scale_of(rep["plan"]["metric"]["kind"])


def _mpl(s: str) -> str:
    """A ledger string as literal matplotlib text (no mathtext)."""
    return s.replace("$", r"\$")


def _short(s: Any, n: int = 60) -> str:
    s = "" if s is None else str(s)
    return s if len(s) <= n else s[: n - 1] + "…"


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


def forest_svg(rep: dict[str, Any]) -> str:
    """The forest plot (runs and arm intervals above, effects against ±min_effect below)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    scale = _scale(rep)
    unit = "points" if scale == 100 else rep["plan"]["metric"]["name"]
    rows: list[tuple[str, int | None]] = []  # y label, arm index for a header row
    draws: list[tuple[str, int, dict[str, Any]]] = []  # what, row, details
    for ai, arm in enumerate(rep["arms"]):
        none = "" if arm["runs"] else ": no runs yet"
        rows.append((f"{arm['name']} ({arm['role']}){none}", ai))
        for r in arm["runs"]:
            status = "retracted" if r["retracted"] else r["status"]
            rows.append((f"@{r['seq']} {status}", None))
            draws.append(("run", len(rows) - 1, {"arm": ai, "run": r}))
        for kind in ("run_level", "item_level"):
            iv = arm[kind]
            if iv:
                n = f"{iv['k']} runs" if kind == "run_level" else f"n={iv['n']}"
                used = " (line)" if arm["wider"] == kind else ""
                rows.append((f"{kind.replace('_', '-')}, {n}{used}", None))
                draws.append((kind, len(rows) - 1, {"arm": ai, "iv": iv}))
    effects = rep["effects"]
    fig = Figure(figsize=(9.5, 1.9 + 0.27 * len(rows) + 0.45 * max(len(effects), 1)),
                 layout="constrained")
    FigureCanvasAgg(fig)
    gs = fig.add_gridspec(2, 1, height_ratios=[max(len(rows), 1), 1.6 * max(len(effects), 1)
                                               + 0.8])
    ax = fig.add_subplot(gs[0])
    for what, y, d in draws:
        colour = ARM_COLOURS[d["arm"] % len(ARM_COLOURS)]
        if what == "run":
            r = d["run"]
            iv = r["interval"]
            face, col = ("white", GREY) if r["retracted"] else (colour, colour)
            if r["score"] is None:
                ax.text(0.01, y, _mpl(_short(f"{r['status']}: {r.get('reason') or 'no score'}")),
                        transform=ax.get_yaxis_transform(), va="center", fontsize=8,
                        style="italic", color="#c0392b", gid=f"lb-nonscore-{r['seq']}")
                continue
            if iv and iv.get("low") is not None:
                ax.plot([iv["low"] * scale, iv["high"] * scale], [y, y], color=col, lw=1.4,
                        ls="--" if r["retracted"] else "-", gid=f"lb-ci-{r['seq']}")
            gid = f"lb-run-{r['seq']}" + ("-retracted" if r["retracted"] else "")
            ax.plot([r["score"] * scale], [y], marker="o", ms=6, color=col, mfc=face, ls="",
                    gid=gid)
        else:
            iv = d["iv"]
            point = iv["mean"] if what == "run_level" else iv["point"]
            ax.plot([iv["low"] * scale, iv["high"] * scale], [y, y], color=colour,
                    lw=5 if what == "run_level" else 2.5, alpha=0.55, solid_capstyle="butt",
                    gid=f"lb-arm-{d['arm']}-{what.replace('_', '-')}-bar")
            ax.plot([point * scale], [y], marker="D" if what == "run_level" else "s", ms=7,
                    color=colour, mec="black", ls="", gid=f"lb-arm-{d['arm']}-"
                    f"{what.replace('_', '-')}")
    ax.set_yticks(range(len(rows)), [_mpl(label) for label, _ in rows])
    for tick, (_, head) in zip(ax.get_yticklabels(), rows, strict=True):
        tick.set_fontweight("normal" if head is None else "bold")
        tick.set_fontsize(8 if head is None else 9)
        if head is not None:
            tick.set_color(ARM_COLOURS[head % len(ARM_COLOURS)])
    for y, (_, head) in enumerate(rows):
        if head is not None and y:
            ax.axhline(y - 0.5, color="#cccccc", lw=0.8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.grid(axis="x", color="#eeeeee")
    if scale == 100.0:  # a proportion's axis never runs past its range
        lo, hi = ax.get_xlim()
        ax.set_xlim(max(lo, 0.0), min(hi, 100.0))
    ax.set_xlabel(f"{_mpl(rep['plan']['metric']['name'])} ({unit})", fontsize=9)
    ax.set_title("Score per run (item-level interval) and per arm", fontsize=10, loc="left")
    fig.legend(handles=[
        Line2D([], [], marker="o", color="#444", label="run, item-level interval"),
        Line2D([], [], marker="o", color=GREY, mfc="white", ls="--",
               label="retracted (excluded)"),
        Line2D([], [], marker="D", color="#444", mec="black", lw=5, alpha=0.6,
               label="arm run-level interval"),
        Line2D([], [], marker="s", color="#444", mec="black", lw=2.5, alpha=0.6,
               label="arm item-level interval")],
        fontsize=7.5, loc="outside upper center", ncol=4, frameon=False)
    ex = fig.add_subplot(gs[1])
    m = rep["plan"].get("min_effect")
    if m:
        ex.axvspan(-m * scale, m * scale, color="#2ca02c", alpha=0.13, gid="lb-min-effect-band",
                   label=f"±min_effect ({m * scale:g} {unit})")
    ex.axvline(0, color="#555555", lw=0.9)
    for i, e in enumerate(effects):
        if e.get("point") is None:
            ex.text(0.01, i, _mpl(_short(f"not computable: {e.get('reason')}")), va="center",
                    transform=ex.get_yaxis_transform(), fontsize=8, style="italic",
                    color="#c0392b", gid=f"lb-effect-{i}-none")
            continue
        ex.plot([e["low"] * scale, e["high"] * scale], [i, i], color="black", lw=2.2,
                gid=f"lb-effect-{i}-bar")
        ex.plot([e["point"] * scale], [i], marker="D", ms=8, color="black", ls="",
                gid=f"lb-effect-{i}")
    labels = [_mpl(f"{e['treatment']} − {e['control']}") for e in effects] or ["(no effect)"]
    ex.set_yticks(range(len(labels)), labels, fontsize=9)
    ex.set_ylim(len(labels) - 0.5, -0.5)
    lim = max([abs(v) * scale for e in effects if e.get("point") is not None
               for v in (e["low"], e["high"])] + [(m or 0) * scale * 1.5, 1e-9])
    ex.set_xlim(-lim * 1.15, lim * 1.15)
    ex.grid(axis="x", color="#eeeeee")
    ex.set_xlabel(f"effect, treatment − control ({unit})", fontsize=9)
    ex.set_title("Paired effect against the plan's minimum-effect band", fontsize=10,
                 loc="left")
    ex.legend(handles=[Patch(color="#2ca02c", alpha=0.25, label=f"±min_effect "
                             f"({(m or 0) * scale:g} {unit})"),
                       Line2D([], [], marker="D", color="black", label="effect, interval")],
              fontsize=7.5, loc="upper right", frameon=False)
    for a in (ax, ex):
        a.tick_params(axis="x", labelsize=8)
        a.spines[["top", "right"]].set_visible(False)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "logbook", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]


def _estimate(point: float, low: float, high: float, scale: float, signed: bool) -> str:
    from logbook import stats

    f = stats.format_estimate(point, low, high, scale=scale)
    sign = "+" if signed and not f.point.startswith("-") and float(f.point) != 0 else ""
    sep = " to " if f.low.startswith("-") or f.high.startswith("-") else "–"
    return f"{sign}{f.point} <span class='l'>({_e(f.low)}{sep}{_e(f.high)})</span>"


def _table(head: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    """A table; cells are already HTML (escape before passing)."""
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
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
                     f"<td class='num'>{_e(score_cell(r['score'], scale))}</td>",
                     f"<td>{_e(interval_cell(r['interval'], scale))}</td>",
                     f"<td class='num'>{_e(miss)}</td>", f"<td>{_e(r['session'])}</td>",
                     f"<td>{_e(r.get('reason') or '')}</td>"])
        classes.append("retracted" if r["retracted"] else "")
    unit = " (points)" if scale == 100 else ""
    parts = [f"<h3>Arm {_e(arm['name'])} ({_e(arm['role'])}): {arm['completed']}/"
             f"{arm['planned_runs']} completed, {arm['failed']} failed, {arm['aborted']} "
             f"aborted, {arm['retracted']} retracted</h3>",
             _table(["run", "status", f"score{unit}", "item-level interval", "missing",
                     "session", "reason"], rows, classes) if rows else "<div>no runs yet</div>"]
    parts += [f"<div>{_e(line)}</div>" for line in arm_summary(arm, scale)]
    return "\n".join(parts)


def _apparatus(rep: dict[str, Any]) -> str:
    rows = []
    for arm in rep["arms"]:
        diff = arm["differing_apparatus"]
        what = ("; ".join(f"<b>{_e(k)}</b> ({_e(', '.join(map(str, v)))})"
                          for k, v in diff.items()) if diff else "identical across its runs")
        rows.append([f"<td>{_e(arm['name'])}</td>", f"<td>{what}</td>",
                     f"<td><span class='line'>{_e(arm['line'])}</span></td>"])
    return _table(["arm", "apparatus fields that differ between runs", "reporting line"], rows)


def _effects(rep: dict[str, Any], scale: float) -> str:
    rows, notes = [], []
    for e in rep["effects"]:
        name = f"<td>{_e(e['treatment'])} − {_e(e['control'])}</td>"
        if e.get("point") is None:
            rows.append([name, f"<td colspan='6'>{_e(e.get('reason'))}</td>"])
            continue
        wc = e.get("worst_case")
        rows.append([name, f"<td class='num'>{e['point'] * scale:+.2f}</td>",
                     f"<td>{e['low'] * scale:+.2f} to {e['high'] * scale:+.2f}</td>",
                     f"<td>{_e(e['method'])}</td>",
                     f"<td class='num'>{_e(display.pvalue(e['pvalue'], e.get('n_resamples')))}"
                     "</td>", f"<td>{_e(display.effect_basis(e))}</td>",
                     "<td>" + ("—" if not wc else f"{wc['low'] * scale:+.2f} to "
                               f"{wc['high'] * scale:+.2f} ({wc['missing']} missing "
                               "item-runs)") + "</td>"])
        if e.get("mcnemar"):
            mc = e["mcnemar"]
            notes.append(f"<p>Secondary — exact McNemar ({_e(e['treatment'])} vs "
                         f"{_e(e['control'])}): {mc['treatment_better']} items better, "
                         f"{mc['control_better']} worse, {_e(display.pvalue(mc['pvalue']))}</p>")
    unit = " (points)" if scale == 100 else ""
    return _table(["effect", f"point{unit}", "interval", "method", "p", "rests on",
                   "worst case for the missing"], rows) + "".join(notes)


def _verdict(rep: dict[str, Any]) -> str:
    v = rep["verdict"]
    scale = _scale(rep)
    rows = []
    for label in ("success", "failure"):
        for c in v[label]:
            obs = "n/a" if c["observed"] is None else f"{c['observed'] * scale:.2f}"
            arm = f"[{c['arm']}]" if c.get("arm") else ""
            rows.append([f"<td>{label}</td>", f"<td>{_e(c['stat'] + arm)} {_e(c['op'])} "
                         f"{c['value'] * scale:g}</td>", f"<td class='num'>{obs}</td>",
                         f"<td>{'holds' if c['holds'] else 'does not hold'}</td>"])
    line = f"<p><span class='line'>{_e(rep['line'])}</span></p>" if rep["line"] else ""
    return (f"<div class='box verdict v-{_e(v['status'])}'><div class='w'>Verdict: "
            f"{_e(v['wording'])}</div>{line}"
            + _table(["criterion", "condition", "observed", ""], rows) + "</div>")


def render_html(rep: dict[str, Any]) -> str:
    """The whole page as a string, from the report's JSON form (``Report.as_json()``)."""
    plan, scale = rep["plan"], _scale(rep)
    title = f"Report: {plan['slug']} — {plan['title']}"
    body = [f"<h1>{_e(title)}</h1>",
            f"<div class='meta'>plan {_e(plan['digest'][:12])} @{_e(plan['seq'])}; metric "
            f"{_e(plan['metric']['name'])} ({_e(plan['metric']['kind'])}); suite "
            f"{_e(plan['suite']['name'])} n={_e(plan['suite'].get('n_items'))}; "
            f"{_e(plan['runs_per_arm'])} runs per arm; min_effect {_e(plan['min_effect'])}; "
            f"alpha {_e(0.05 if plan.get('alpha') is None else plan['alpha'])}; "
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
    for f in rep.get("findings") or []:
        body.append(f"<div class='box finding'><b>AUDIT {_e(f.get('check'))} "
                    f"[{_e(f.get('severity'))}]:</b> {_e(f.get('message'))}</div>")
    body.append(_verdict(rep))
    cards = []
    for arm in rep["arms"]:
        if arm["mean"] is not None and arm["interval"]:
            iv = arm["interval"]
            cards.append(f"<div class='card'><div class='l'>{_e(arm['name'])} "
                         f"({_e(arm['role'])}), {_e(iv['kind'])}</div><div class='n'>"
                         f"{_estimate(arm['mean'], iv['low'], iv['high'], scale, False)}"
                         "</div></div>")
    for e in rep["effects"]:
        if e.get("point") is not None:
            cards.append(f"<div class='card'><div class='l'>effect {_e(e['treatment'])} − "
                         f"{_e(e['control'])}</div><div class='n'>"
                         f"{_estimate(e['point'], e['low'], e['high'], scale, True)}"
                         "</div></div>")
    body.append(f"<div class='headline'>{''.join(cards)}</div>")
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
    if rep["excluded"]:
        body.append("<h2>Excluded from the figures (retracted)</h2>" + _table(
            ["run", "digest", "arm", "reason", "correction"],
            [[f"<td>@{_e(x['seq'])}</td>", f"<td>{_e(x['digest'][:12])}</td>",
              f"<td>{_e(x['arm'])}</td>", f"<td>{_e(x['reason'])}</td>",
              f"<td>{_e(x.get('correction') or '')}</td>"]
             for x in rep["excluded"]]))
        body.extend(f"<p>{_e(line.strip())}</p>" for line in review_lines(rep.get("retractions")))
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{_e(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
