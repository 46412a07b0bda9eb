"""The item-level comparison page (`compare A B --items`) and the power page it links to
(`power --paired` with the discordance the comparison measured): their data (the JSON twins)
and their HTML, drawn from that data only."""

from __future__ import annotations

from typing import Any

from logbook.errors import InputError
from logbook.web.data import Source, integrity
from logbook.web.markup import Markup, href, link, table, tag
from logbook.web.paired import effect_line, paired_tables, paired_view


def _one(q: dict[str, list[str]], name: str) -> str | None:
    values = [v for v in q.get(name, []) if v.strip()]
    if len(values) > 1:
        raise InputError(f"{name} is given {len(values)} times (give it once)")
    return values[0].strip() if values else None


def compare_data(src: Source, q: dict[str, list[str]]) -> dict[str, Any]:
    """``a`` and ``b``: a run (``@SEQ``, a digest prefix) or a selector (``PLAN:ARM``,
    ``session:ID``, ``FIELD=VALUE``), as `compare --items` takes them. Without both, the
    page is only its form."""
    from logbook.analysis.compare_items import compare_items

    a, b = _one(q, "a"), _one(q, "b")
    out: dict[str, Any] = {"integrity": integrity(src), "a": a, "b": b, "comparison": None,
                           "power_page": None}
    if a is None and b is None:
        return out
    if a is None or b is None:
        raise InputError(f"{'a' if a is None else 'b'} is required: a run (@SEQ) or a "
                         "selector (PLAN:ARM), as `compare --items` takes")
    found = compare_items(src.view, a, b)
    res = found.as_json()
    out["comparison"] = res
    out.update(paired_view(src, found, _one(q, "show") or "all"))
    p = res["power"]
    if p is not None:
        out["power_page"] = href("power", query={"p": f"{p['p']:.4g}",
                                                 "discordance": f"{p['discordance']:.4g}",
                                                 "n": p["n"]})
    return out


def _number(q: dict[str, list[str]], name: str, kind: type) -> Any:
    text = _one(q, name)
    if text is None:
        raise InputError(f"{name} is required (a number)")
    try:
        return kind(text)
    except ValueError:
        raise InputError(f"{name} must be {'a whole number' if kind is int else 'a number'}, "
                         f"not {text!r}") from None


def power_data(src: Source, q: dict[str, list[str]]) -> dict[str, Any]:
    """`logbook power --paired --p P --discordance D --n N`, and the same at other suite
    sizes (N/2, 2N, 4N): what a bigger suite would detect at this discordance."""
    from logbook.analysis.power import power_table

    p, disc, n = _number(q, "p", float), _number(q, "discordance", float), _number(q, "n", int)
    if n < 1:
        raise InputError(f"n must be at least 1, not {n}")
    rows = []
    for size in sorted({max(1, n // 2), n, 2 * n, 4 * n}):
        try:
            mde = power_table(p, None, size, 0.05, 0.8, True, disc)["min_detectable_effect"]
            rows.append({"n": size, "min_detectable_effect": mde, "why_not": None})
        except ValueError as exc:
            rows.append({"n": size, "min_detectable_effect": None, "why_not": str(exc)})
    here = next(r for r in rows if r["n"] == n)
    if here["why_not"] and str(here["why_not"]).split(":")[0] in ("p", "discordance"):
        raise InputError(str(here["why_not"]))  # the figures themselves cannot be read
    return {"integrity": integrity(src), "p": p, "discordance": disc, "n": n, "alpha": 0.05,
            "power": 0.8, "command": f"logbook power --paired --p {p:g} --discordance "
            f"{disc:g} --n {n}", "sizes": rows}


def _field(name: str, label: str, value: Any) -> Markup:
    return tag("label", label, tag("input", name=name, value=value or ""))


def _score(x: float | None, scale: float) -> str:
    return "—" if x is None else f"{x * scale:.4g}"


def compare_page(d: dict[str, Any]) -> list[Any]:
    from logbook.analysis import display

    form = tag("form", _field("a", "A: run (@SEQ) or PLAN:ARM", d["a"]),
               _field("b", "B: run (@SEQ) or PLAN:ARM", d["b"]),
               tag("button", "compare", type="submit"), cls="filters", method="get",
               action="/compare")
    res = d["comparison"]
    if res is None:
        return [form, tag("p", "Give two runs (@SEQ) or two arms (PLAN:ARM): the page lists "
                          "the items B scores higher, lower or the same as A.", cls="meta")]
    scale = display.scale_of(res["metric_kind"])
    c = res["counts"]
    sides = table(["side", "selector", "runs", "usable"],
                  [[name, tag("code", s["selector"]),
                    [[link(f"@{r['seq']}", "runs", r["digest"]), " "] for r in s["runs"]],
                    s["usable"]] for name, s in (("A", res["a"]), ("B", res["b"]))],
                  cls="sides")
    counts = tag("p", tag("b", f"{c['improved']} improved", id="n-improved"), ", ",
                 tag("b", f"{c['regressed']} regressed", id="n-regressed"), ", ",
                 tag("span", f"{c['unchanged']} unchanged", id="n-unchanged"),
                 " (", tag("span", f"{len(d['both_wrong'])} both wrong", id="n-both-wrong"),
                 ")",
                 f" of {c['compared']} compared; ",
                 tag("span", f"{c['not_comparable']} not comparable", id="n-not-comparable"),
                 " (no score on a side: a failed or missing item is missing, never a zero)",
                 id="counts")
    out: list[Any] = [form, sides, counts]
    if res["discordance"] is not None:
        out.append(tag("p", f"discordance {res['discordance']:.4f}: the share of items a run "
                       "of A and a run of B score differently, over every pair of their runs",
                       cls="meta", id="discordance"))
    p = res["power"]
    if p is not None:
        mde = ("" if p["min_detectable_effect"] is None else
               f": {p['n']} items detect {p['min_detectable_effect'] * scale:.3g}"
               f"{display.unit_of(res['metric_kind'])} at 80% power")
        out.append(tag("p", "Power with this discordance: ",
                       tag("a", tag("code", p["command"]), href=d["power_page"], id="power"),
                       mde, f" ({p['why_not']})" if p["why_not"] else ""))
    return [form, effect_line(d, scale, display.unit_of(res["metric_kind"])), *out[1:],
            *paired_tables(d, scale)]


def power_page(d: dict[str, Any]) -> list[Any]:
    rows = [[r["n"], "—" if r["min_detectable_effect"] is None
             else f"{r['min_detectable_effect'] * 100:.3g} points", r["why_not"] or ""]
            for r in d["sizes"]]
    attrs = [{"cls": "this"} if r["n"] == d["n"] else {} for r in d["sizes"]]
    return [tag("p", tag("code", d["command"], id="command")),
            tag("p", f"Paired (both systems on the same items), baseline {d['p']:g}, "
                f"discordance {d['discordance']:g} (the share of items the two systems score "
                f"differently), two-sided alpha {d['alpha']:g}, power {d['power']:g}: the "
                "smallest difference each suite size detects.", cls="meta"),
            table(["items", "minimum detectable effect", ""], rows, cls="power",
                  row_attrs=attrs)]
