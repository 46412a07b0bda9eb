"""Text and Markdown forms of a report; the lines shared with the HTML form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logbook.analysis import display
from logbook.analysis.report.sources import source_lines

if TYPE_CHECKING:
    from logbook.analysis.report_shapes import Report


def digits_of(iv: dict[str, Any] | None, scale: float, default: int = 1) -> int:
    """The decimals an interval supports on the display scale (stats.decimals_supported,
    the rule the audit's A13 holds a quoted figure to); ``default`` without one."""
    from logbook.stats import decimals_supported

    if not iv or iv.get("low") is None or iv.get("high") is None:
        return default
    return decimals_supported(iv["low"], iv["high"], scale)


def fixed(x: float, digits: int) -> str:
    """``x`` at ``digits`` decimals, never "-0"."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def signed(x: float, digits: int) -> str:
    text = fixed(x, digits)
    return text if text.startswith("-") or float(text) == 0.0 else "+" + text


def score_cell(x: float | None, scale: float, iv: dict[str, Any] | None = None) -> str:
    """A run's score with the digits its item-level interval ``iv`` supports."""
    return "—" if x is None else fixed(x * scale, digits_of(iv, scale))


def interval_cell(iv: dict[str, Any] | None, scale: float) -> str:
    if not iv or iv.get("low") is None:
        return "—"
    d = digits_of(iv, scale)
    return f"{fixed(iv['low'] * scale, d)}–{fixed(iv['high'] * scale, d)} ({iv.get('method', '')})"


def effect_parts(e: dict[str, Any], scale: float) -> tuple[str, str, str]:
    """(point, interval, worst case) of an effect as every form prints them: at the digits
    its interval supports."""
    d = digits_of(e, scale)
    wc = e.get("worst_case")
    worst = ("—" if not wc else f"{signed(wc['low'] * scale, d)} to "
             f"{signed(wc['high'] * scale, d)}")
    return (signed(e["point"] * scale, d),
            f"{signed(e['low'] * scale, d)} to {signed(e['high'] * scale, d)}", worst)


def observed_cell(c: dict[str, Any], rep: dict[str, Any], scale: float) -> str:
    """A criterion's observed value at the digits its interval supports."""
    if c["observed"] is None:
        return "n/a"
    return fixed(c["observed"] * scale, condition_digits(c, rep, scale))


def effect_figures(e: dict[str, Any], scale: float) -> str:
    """"+0.5, -4.4 to +3.3": an effect and its interval rounded by the rule of the arm's line
    (the digits the interval supports)."""
    d = digits_of(e, scale)
    return (f"{signed(e['point'] * scale, d)}, {signed(e['low'] * scale, d)} to "
            f"{signed(e['high'] * scale, d)}")


def arm_summary(arm: dict[str, Any], scale: float) -> list[str]:
    """An arm's two intervals side by side, and which one the reporting line uses (shared by
    the text, Markdown and HTML forms)."""
    out = []
    rl, il = arm["run_level"], arm["item_level"]
    if rl:
        d = digits_of(rl, scale)
        out.append(f"run-level: mean {fixed(rl['mean'] * scale, d)}, sd "
                   f"{rl['sd'] * scale:.2f}, {rl['method']}-interval "
                   f"{fixed(rl['low'] * scale, d)}–{fixed(rl['high'] * scale, d)}"
                   f" over {rl['k']} runs")
    if il:
        d = digits_of(il, scale)
        deff = ("" if il.get("design_effect") is None else
                f", {il['clusters']} clusters, design effect {il['design_effect']:.2f}")
        out.append(f"item-level: {fixed(il['point'] * scale, d)}, "
                   f"{fixed(il['low'] * scale, d)}–{fixed(il['high'] * scale, d)} "
                   f"({il['method']}, n={il['n']}{deff})")
    if arm["wider"]:
        out.append(f"the {arm['wider'].replace('_', '-')} interval is wider; the line uses it")
    sc = arm.get("samples")
    if sc:
        out.append(f"samples: k={sc['k']:.3g} per item over {sc['n_items']} items: sd between "
                   f"items {sc['between'] ** 0.5 * scale:.2f}, sd within an item "
                   f"{sc['within'] ** 0.5 * scale:.2f} ({sc['dominant']} dominates); the "
                   "item-level interval resamples items with their sample means, so it "
                   "carries both")
    sp = arm.get("spread")
    if sp:
        total = ("" if sp["total"] is None else
                 f"; in quadrature {sp['total'] * scale:.2f} (one run on a fresh sample of "
                 "items)")
        out.append(f"spread: between runs sd {sp['seeds'] * scale:.2f}, between items "
                   f"(the finite suite) sd {sp['items'] * scale:.2f}{total}")
    out += source_lines(arm, scale)
    b = arm.get("band")
    if b:
        where = ("every run lies within it" if not b["outside"] else
                 "outside it: " + ", ".join(f"@{s}" for s in b["outside"]))
        out.append(f"band of this apparatus: {b['mean'] * scale:.2f} ± {b['band'] * scale:.2f} "
                   f"(sd {b['sd'] * scale:.2f} over {b['k']} runs, @{b['seq']}); {where}")
    return out


def report_lines(rep: dict[str, Any], markdown: bool = False) -> list[str]:
    plan = rep["plan"]
    kind = plan["metric"]["kind"]
    scale = display.scale_of(kind)
    unit = " (points)" if scale == 100 else ""
    h = "## " if markdown else ""
    out: list[str] = []
    out.append(f"{'# ' if markdown else ''}Report: {plan['slug']} — {plan['title']}")
    out.append(f"plan {plan['digest'][:12]} @{plan['seq']}; metric {plan['metric']['name']} "
               f"({kind}); suite {plan['suite']['name']} n={plan['suite'].get('n_items')}; "
               f"ledger size {rep['ledger']['size']}")
    if plan["amendments"]:
        out.append(f"amended {len(plan['amendments'])} time(s): " + "; ".join(
            f"@{a['seq']} {', '.join(a['changes'])} ({a['reason']})" for a in plan["amendments"]))
    for s in rep["verdict"].get("suspect", []):
        out.append(f"WARNING: {s}")
    for e in rep["effects"]:
        if e.get("cluster_warning"):
            out.append(f"WARNING: {e['treatment']} − {e['control']}: {e['cluster_warning']}")
    for f in rep.get("findings", []):
        out.append(f"AUDIT {f['check']} [{f['severity']}]: {f['message']}")
    out.append("")
    out.append(f"{h}Verdict: {rep['verdict']['wording']}")
    for label in ("success", "failure"):
        for c in rep["verdict"][label]:
            out.append(f"  {label}: {display.condition(c, scale, condition_digits(c, rep, scale))}")
    if rep["line"]:
        out.append(f"  {rep['line']}")
    out += review_lines(rep.get("retractions"))
    out += reproduction_lines(rep.get("reproductions"), scale, unit)
    out += check_lines(rep.get("checks"))
    out += cost_lines(rep.get("cost"))
    out.append("")
    for arm in rep["arms"]:
        out.append(f"{h}Arm {arm['name']} ({arm['role']}): {arm['completed']}/"
                   f"{arm['planned_runs']} completed, {arm['failed']} failed, {arm['aborted']} "
                   f"aborted, {arm['retracted']} retracted")
        if markdown:
            out.append("")
            out.append(f"| seq | status | score{unit} | item-level interval | missing | reason |")
            out.append("|---|---|---|---|---|---|")
        for r in arm["runs"]:
            status = (r["status"] + (" RETRACTED" if r["retracted"] else "")
                      + (" admitted" if r.get("admitted_by") else ""))
            miss = "—" if r["missing_rate"] is None else f"{r['missing_rate'] * 100:.1f}%"
            cells = [f"@{r['seq']}", status, score_cell(r["score"], scale, r["interval"]),
                     interval_cell(r["interval"], scale), miss]
            if markdown:  # a failed run's reason is kept, its pipes and newlines made safe
                reason = " ".join(str(r.get("reason") or "").split()).replace("|", "\\|")
                out.append("| " + " | ".join([*cells, reason]) + " |")
            else:
                out.append("  " + "  ".join(f"{c:<12}" for c in cells).rstrip()
                           + (f"  ({r['reason']})" if r.get("reason") else ""))
        if markdown:
            out.append("")
        refused = [x for x in rep.get("refused", []) if x["arm"] == arm["name"]]
        if refused:
            out.append(f"  {len(refused)} run(s) meant for this arm were refused, not counted "
                       "(fix the plan with `logbook amend`, then `logbook admit`):")
            out += [f"    @{x['seq']} {x['status']}{' RETRACTED' if x.get('retracted') else ''}"
                    f": {x['reason']}" for x in refused]
        out += [f"  {line}" for line in arm_summary(arm, scale)]
        if arm["differing_apparatus"]:
            out.append("  apparatus differs between runs: " + "; ".join(
                f"{k} ({', '.join(v)})" for k, v in arm["differing_apparatus"].items()))
        if arm["line"]:
            out.append(f"  line: {arm['line']}")
        out.append("")
    if rep["effects"]:
        out.append(f"{h}Effect: treatment − control{unit}")
        for e in rep["effects"]:
            if e.get("point") is None:
                out.append(f"  {e['treatment']} − {e['control']}: {e.get('reason')}")
                continue
            p = display.pvalue(e["pvalue"], e.get("n_resamples"))
            df = f"df {e['df']:.1f}, " if e.get("df") is not None else ""
            out.append(f"  {e['treatment']} − {e['control']}: {effect_figures(e, scale)} "
                       f"({e['method']}, {df}{p}), {display.effect_basis(e)}")
            if e.get("se_runs") is not None:
                out.append(f"    se {(e['se_items'] ** 2 + e['se_runs'] ** 2) ** 0.5 * scale:.2f}"
                           f": items {e['se_items'] * scale:.2f}, runs {e['se_runs'] * scale:.2f}"
                           " (in quadrature)")
            if e.get("runs_note"):
                out.append(f"    {e['runs_note']}")
            if e.get("worst_case"):
                wc = e["worst_case"]
                d = digits_of(e, scale)
                out.append(f"    worst case for the {wc['missing']} missing item-runs: "
                           f"{signed(wc['low'] * scale, d)} to {signed(wc['high'] * scale, d)}")
            if e.get("mcnemar"):
                m = e["mcnemar"]
                out.append(f"    secondary — exact McNemar: {m['treatment_better']} items "
                           f"better, {m['control_better']} worse, {display.pvalue(m['pvalue'])}")
        out.append("")
    if rep.get("components"):
        out += [(h + line if i == 0 else line)
                for i, line in enumerate(component_lines(rep, scale))]
    if rep["excluded"]:
        out.append(f"{h}Excluded from the figures (retracted)")
        for x in rep["excluded"]:
            out.append(f"  @{x['seq']} {x['digest'][:12]} arm {x['arm']}: {x['reason']}"
                       + (f" ({x['category']})" if x.get("category") else "")
                       + (f"; correction: {x['correction']}" if x.get("correction") else ""))
    return out


def condition_digits(c: dict[str, Any], rep: dict[str, Any], scale: float) -> int:
    """The digits a criterion's observed value is printed with: those its interval supports
    (the effect's for an effect_* stat, the arm's line for a mean_* stat)."""
    if c["stat"].startswith("effect"):
        e = next((e for e in rep["effects"] if c.get("arm") in (None, e["treatment"])
                  and e.get("point") is not None), None)
        return digits_of(e, scale, 2)
    arm = next((a for a in rep["arms"] if (c.get("arm") is None
                                          and a["role"] != "negative_control")
                or a["name"] == c.get("arm")), None)
    return digits_of(arm and arm.get("interval"), scale, 2)


def _shown(x: float | None, scale: float) -> str:
    return "—" if x is None else f"{x * scale:.1f}"


def component_lines(rep: dict[str, Any], scale: float) -> list[str]:
    """The report's text section: each component's figure per arm and its paired effect."""
    rows = rep.get("components") or []
    if not rows:
        return []
    out = ["Components (beside the roll-up above)"]
    for row in rows:
        figures = ", ".join(f"{a['name']} {_shown(a['figure'], scale)} (n={a['n']})"
                            for a in row["arms"])
        out.append(f"  {row['name']}: {figures}")
        for e in row["effects"]:
            if e.get("point") is None:
                out.append(f"    {e['treatment']} − {e['control']}: {e.get('reason')}")
            else:
                out.append(f"    {e['treatment']} − {e['control']}: "
                           f"{effect_figures(e, scale)} ({e['method']}), n={e['n']} paired "
                           "items")
    out.append("")
    return out


def reproduction_lines(rows: list[dict[str, Any]] | None, scale: float,
                       unit: str) -> list[str]:
    """The report's lines for the plan's reproduced runs (logbook.analysis.reproductions)."""
    if not rows:
        return []
    out = []
    for r in rows:
        who = "independent" if r["independent"] else "same signer"
        head = f"  @{r['run']} reproduced by @{r['by']} ({who}, {r['signer'][:12]})"
        d = r["difference"]
        if d is None:
            out.append(f"{head}: no agreement figure (the runs share fewer than two scored "
                       "items, or one did not complete)")
            continue
        said = "agrees" if r["agrees"] else "DISAGREES"
        out.append(f"{head}: {said}: difference{unit} {d['point'] * scale:+.3g} "
                   f"({d['low'] * scale:+.3g} to {d['high'] * scale:+.3g}), n={d['n']} paired "
                   f"items, {r['higher']} higher, {r['lower']} lower")
    independent = {r["signer"] for r in rows if r["independent"] and r["agrees"]}
    out.append(f"  reproduced by {len(independent)} independent signer(s) in agreement")
    return out


def review_lines(review: dict[str, Any] | None) -> list[str]:
    """The report's lines for a review: both verdicts side by side."""
    if not review:
        return []
    n = len(review["runs"])
    which = ", ".join(f"@{r['seq']}" for r in review["runs"])
    tail = ("the retraction(s) change the verdict" if review["changes_verdict"]
            else "the retraction(s) leave the verdict as it is")
    return [f"  without the {n} retracted run(s): {review['without']['status']} | with them "
            f"({which}): {review['with']['status']} — {tail}"]


@dataclass(frozen=True)
class TextRenderer:
    """The plain-text form, or with ``markdown`` the Markdown form (headings and tables)."""

    name: str
    markdown: bool

    def render(self, rep: Report) -> str:
        # the lines read the report's JSON form, so every form shows what --json prints
        lines = report_lines(rep.as_json(), markdown=self.markdown)
        return "\n".join(commonmark(lines) if self.markdown else lines) + "\n"


_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<"})


def commonmark(lines: list[str]) -> list[str]:
    """The Markdown form's lines as CommonMark renders them one by one: each line that is not
    a heading, a table row or blank becomes a list item, nested by its indent (two spaces a
    level), its text escaped where Markdown would read it as markup; tables (a GitHub
    extension of CommonMark) and headings stay as they are."""
    out: list[str] = []
    for line in lines:
        text = line.strip()
        if not text or line.startswith(("#", "|")):
            out.append(line)
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        out.append("  " * max(depth - 1, 0) + "- " + text.translate(_SPECIAL))
    return out


TEXT = TextRenderer("text", markdown=False)
MARKDOWN = TextRenderer("markdown", markdown=True)


def check_lines(checks: dict[str, Any] | None) -> list[str]:
    """The report's lines on contamination and hand spot-checks (logbook.analysis.checks)."""
    if not checks:
        return []
    out = []
    budget = checks.get("search_budget")
    if budget and budget["configurations"]:
        out.append(f"  search budget: {budget['configurations']} configuration(s) tried on suite "
                   f"{budget['suite']} in {budget['runs']} run(s), @{budget['first']}–"
                   f"@{budget['last']}; {budget['before_plan']} before the plan")
    if checks.get("holdout"):
        out.append(f"  {checks['holdout']['line']}")
    for c in checks.get("contamination") or []:
        if not c["checks"]:
            out.append(f"  contamination: {c['model']}: not checked")
            continue
        said = "; ".join(
            f"{x['method']}: {x['verdict']}"
            + (f", rate {100 * x['rate']:.3g}%" if x.get("rate") is not None else "")
            + (f", split {x['split']}" if x.get("split") else "") + f", @{x['seq']}"
            for x in c["checks"])
        out.append(f"  contamination: {c['model']}: checked ({said})")
    spot = checks.get("spot_checks")
    if spot is None:
        out.append("  scorer not spot-checked by hand (logbook spot-check RUN)")
    elif spot["interval"] is None:
        out.append(f"  hand spot-checks: {spot['unsure']} unsure, none decided")
    else:
        lo, hi = spot["interval"]
        decided = spot["agree"] + spot["disagree"]
        out.append(f"  scorer agrees with hand checks on {spot['agree']} of {decided}, "
                   f"{100 * lo:.0f}–{100 * hi:.0f}% (Wilson {100 * spot['confidence']:.0f}%)"
                   + (f"; {spot['unsure']} unsure" if spot["unsure"] else ""))
    return out


def cost_lines(cost: dict[str, Any] | None) -> list[str]:
    """The report's lines on what the plan's runs used and its budget (logbook.analysis.cost):
    the plan's sums, each arm's, each quantity of the budget."""
    if not cost:
        return []
    from logbook.analysis.cost import budget_text, usage_text

    out = [f"  cost: {usage_text(cost['plan'])}"]
    out += [f"    arm {a['arm']}: {usage_text(a['usage'])}" for a in cost["arms"]]
    out += [f"  budget: {budget_text(b)}" for b in cost["budget"]]
    return out
