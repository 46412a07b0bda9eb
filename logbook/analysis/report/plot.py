"""The report's forest plot, drawn by matplotlib (the optional ``html`` extra, Agg backend)
as inline SVG with its text as paths: runs and arm intervals above, the paired effect against
±min_effect below, its legend beside the axes so it never covers an interval. Artists carry
ids a test can count: ``lb-run-SEQ`` (``-retracted`` appended for a retracted run),
``lb-nonscore-SEQ``, ``lb-arm-I-run-level``, ``lb-arm-I-item-level``, ``lb-effect-I`` (its
bar ``lb-effect-I-bar``), ``lb-min-effect-band`` and ``lb-effect-legend``.
"""

from __future__ import annotations

import io
from typing import Any

from logbook.analysis import display

ARM_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
GREY = "#9a9a9a"


def report_scale(rep: dict[str, Any]) -> float:
    """The display scale of the report's metric (100 for a proportion: points)."""
    return display.scale_of(rep["plan"]["metric"]["kind"])


def _mpl(s: str) -> str:
    """A ledger string as literal matplotlib text (no mathtext)."""
    return s.replace("$", r"\$")


def _short(s: Any, n: int = 60) -> str:
    s = "" if s is None else str(s)
    return s if len(s) <= n else s[: n - 1] + "…"


def forest_svg(rep: dict[str, Any]) -> str:
    """The forest plot (runs and arm intervals above, effects against ±min_effect below)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    scale = report_scale(rep)
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
            if r["score"] is None or r["status"] != "completed":
                # a run that did not complete is no point among the scores, whatever part of
                # its items it scored: it is said, as its own page says it
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
    # beside the axes, not on them: an interval may run anywhere across the plot
    ex.legend(handles=[Patch(color="#2ca02c", alpha=0.25, label=f"±min_effect "
                             f"({(m or 0) * scale:g} {unit})"),
                       Line2D([], [], marker="D", color="black", label="effect, interval")],
              fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
              borderaxespad=0.0).set_gid("lb-effect-legend")
    for a in (ax, ex):
        a.tick_params(axis="x", labelsize=8)
        a.spines[["top", "right"]].set_visible(False)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "logbook", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]
