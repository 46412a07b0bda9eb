"""The comparison page's paired table: every item of `compare A B --items` in one category,
each linked to its page in the runs of both sides, with the paired effect `logbook compare`
computes (logbook.analysis.compare.paired_effect) on top.

The categories: improved (B scores the item higher than A), regressed (lower), both wrong
(the same score, 0, on both sides: every counted run of A and of B failed it; only when every
score of those runs is 0 or 1), unchanged (the same score otherwise) and not comparable (a side
has no score for it). compare_items's own "unchanged" holds both wrong and unchanged.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from logbook.analysis.compare_items import ItemComparison
from logbook.analysis.view import RunView
from logbook.errors import InputError
from logbook.web.data import Source
from logbook.web.markup import Markup, join, link, table, tag
from logbook.web.run_items import item_href

CATEGORIES = ("improved", "regressed", "both-wrong", "unchanged", "not-comparable")
TITLES = {"improved": "Improved (B higher)", "regressed": "Regressed (B lower)",
          "both-wrong": "Both wrong (0 on both sides)",
          "unchanged": "Unchanged (the same score, not both wrong)",
          "not-comparable": "Not comparable (no score on a side)"}
CONFIDENCE = 0.95  # `logbook compare`'s default


def _runs(src: Source, side: Any) -> list[RunView]:
    return [src.view.runs_by_digest[r.digest] for r in side.runs]


def _pass_fail(runs: list[RunView]) -> bool:
    """Every score the runs gave is 0 or 1 (missing ones aside)."""
    import numpy as np

    for r in runs:
        values = r.item_arrays[1]
        values = values[~np.isnan(values)]
        if not np.isin(values, (0.0, 1.0)).all():
            return False
    return bool(runs)


def paired_view(src: Source, res: ItemComparison, show: str) -> dict[str, Any]:
    """The paired table's rows (those of category ``show``, or all), the effect and verdict
    `logbook compare` gives for the same sides, and which items both sides got wrong."""
    from logbook.analysis.compare import paired_effect
    from logbook.analysis.view import item_mean_arrays

    if show != "all" and show not in CATEGORIES:
        raise InputError(f"show must be all or one of {', '.join(CATEGORIES)}, not {show!r}")
    runs_a, runs_b = _runs(src, res.a), _runs(src, res.b)
    use_a, use_b = [r for r in runs_a if r.usable], [r for r in runs_b if r.usable]
    effect, verdict = paired_effect(use_a, use_b, CONFIDENCE)
    pass_fail = _pass_fail(use_a + use_b)
    means_a = dict(zip(*item_mean_arrays(use_a)[:2], strict=True)) if use_a else {}
    means_b = dict(zip(*item_mean_arrays(use_b)[:2], strict=True)) if use_b else {}
    wrong = [i for i in res.unchanged if pass_fail and means_a.get(i) == 0.0
             and means_b.get(i) == 0.0]
    lists = {"a": [(r, set(r.item_arrays[0])) for r in runs_a],
             "b": [(r, set(r.item_arrays[0])) for r in runs_b]}

    def row(item: str, category: str, a: float | None, b: float | None) -> dict[str, Any]:
        pages = {side: [{"seq": r.seq, "page": item_href(r.digest, item)}
                        for r, ids in lists[side] if item in ids] for side in ("a", "b")}
        return {"id": item, "category": category, "a": a, "b": b,
                "a_runs": pages["a"], "b_runs": pages["b"]}

    rows: list[dict[str, Any]] = []
    if show in ("all", "improved"):
        rows += [row(p.id, "improved", p.a, p.b) for p in res.improved]
    if show in ("all", "regressed"):
        rows += [row(p.id, "regressed", p.a, p.b) for p in res.regressed]
    both = set(wrong)
    for category in ("both-wrong", "unchanged"):
        if show in ("all", category):
            rows += [row(i, category, float(means_a[i]), float(means_b[i]))
                     for i in res.unchanged if (i in both) == (category == "both-wrong")]
    if show in ("all", "not-comparable"):
        rows += [row(x.id, "not-comparable", x.a, x.b) for x in res.not_comparable]
    return {"show": show, "effect": None if effect is None else asdict(effect),
            "confidence": CONFIDENCE, "verdict": verdict, "pass_fail": pass_fail,
            "both_wrong": wrong, "rows": rows}


def effect_line(d: dict[str, Any], scale: float, unit: str) -> Markup:
    """The effect of B over A and its interval, as `logbook compare` prints it."""
    from logbook.analysis import display

    e = d["effect"]
    if e is None:
        return tag("p", f"No paired effect: {d['verdict']}.", id="effect", cls="box")
    return tag("p", tag("b", f"effect B − A{unit}: {e['point'] * scale:+.2f}"),
               f" ({e['low'] * scale:+.2f} to {e['high'] * scale:+.2f}, "
               f"{d['confidence']:.0%} interval, {e['method']}, "
               f"{display.pvalue(e['pvalue'], e['n_resamples'])}), n={e['n']} shared items, "
               f"{e['n_dropped']} dropped; verdict: {d['verdict']} (as `logbook compare A B` "
               "gives it)", id="effect", cls="box")


def _score(x: float | None, scale: float) -> str:
    return "—" if x is None else f"{x * scale:.4g}"


def _pages(runs: list[dict[str, Any]]) -> Markup:
    return join([tag("a", f"@{r['seq']}", href=r["page"]) for r in runs], " ")


def paired_tables(d: dict[str, Any], scale: float) -> list[Any]:
    """The category links (show=…), then a table a category: item, A, B, and the item's page
    in each run of A and of B that lists it."""
    res, show = d["comparison"], d["show"]
    counts = {"improved": res["counts"]["improved"], "regressed": res["counts"]["regressed"],
              "both-wrong": len(d["both_wrong"]),
              "unchanged": res["counts"]["unchanged"] - len(d["both_wrong"]),
              "not-comparable": res["counts"]["not_comparable"]}
    query = {"a": d["a"], "b": d["b"]}
    tabs = [tag("b", "all") if show == "all" else link("all", "compare", query=query)]
    for c in CATEGORIES:
        label = f"{c.replace('-', ' ')} ({counts[c]})"
        tabs.append(tag("b", label) if show == c else
                    link(label, "compare", query={**query, "show": c}, data_show=c))
    out: list[Any] = [tag("p", "Show: ", join(tabs, " · "), id="show", cls="meta"),
                      tag("p", "Both wrong: an item every counted run of A and of B scored 0 "
                          "(pass/fail scores only"
                          + ("" if d["pass_fail"] else "; these scores are not all 0 or 1, so "
                             "no item is counted as both wrong") + "); compare's "
                          "“unchanged” holds both wrong and the rest of the same scores.",
                          cls="meta", id="both-wrong-defined")]
    for c in CATEGORIES if show == "all" else (show,):
        rows = [r for r in d["rows"] if r["category"] == c]
        out += [tag("h2", f"{TITLES[c]}: {len(rows)}"),
                table(["item", "A", "B", "A's item pages", "B's item pages"],
                      [[tag("code", r["id"]), _score(r["a"], scale), _score(r["b"], scale),
                        _pages(r["a_runs"]), _pages(r["b_runs"])] for r in rows], cls=c,
                      row_attrs=[{"data_item": r["id"]} for r in rows])
                if rows else tag("p", "none")]
    return out
