"""An arm's run-to-run spread by source (issue 36 item 6; docs/reporting.md, "Spread by
source"), and the variance between the plan's prompt variants within it. Which runs count for
which source is decided here; the figures come from `logbook.stats.sources`.

- execution: runs of identical apparatus (every field but the run's identity: seeds, times,
  retries used...) whose decode should repeat: greedy (temperature 0), or sampling with one
  fixed seed. What spread remains is the inference itself (batching, kernels, retries).
- decoding: runs of identical apparatus sampling (temperature > 0) with different seeds.
  Their spread carries the execution spread too, when there is any.
- items: the finite suite (each run's item-level standard error), as the `spread` line's.
"""

from __future__ import annotations

from typing import Any

from logbook.analysis.arm_shapes import SourceSpread, SpreadSources, VariantSpread
from logbook.analysis.view import RunView
from logbook.format.apparatus import VARIANT


def _seeds(run: RunView) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, repr(v)) for k, v in run.apparatus.items()
                        if v is not None and "seed" in k.rsplit(".", 1)[-1].lower()))


def _source(groups: list[list[float]], how: str | None, why: str) -> SourceSpread:
    from logbook.stats.sources import pooled_sd

    pooled = pooled_sd(groups)
    if pooled is None:
        return SourceSpread(sd=None, runs=0, groups=0, how=None, why=why)
    return SourceSpread(sd=pooled.sd, runs=pooled.runs, groups=pooled.groups, how=how,
                        why=None)


def _temps(ts: set[float]) -> str:
    return ", ".join(f"T={t:g}" for t in sorted(ts))


def spread_sources(runs: list[RunView], items: float | None) -> SpreadSources | None:
    """The arm's usable runs' spread by source; None with fewer than two scored runs."""
    scored = [r for r in runs if r.score is not None]
    if len(scored) < 2:
        return None
    by_system: dict[tuple[tuple[str, str], ...], list[RunView]] = {}
    for r in scored:
        by_system.setdefault(r.system, []).append(r)
    execution: list[list[float]] = []
    decoding: list[list[float]] = []
    ways: set[str] = set()
    temps: set[float] = set()
    for group in by_system.values():
        t = group[0].temperature
        if t is None:
            continue  # unrecorded decoding: neither source can be told
        if t == 0:
            if len(group) >= 2:
                execution.append([float(r.score or 0.0) for r in group])
                ways.add("greedy")
            continue
        by_seed: dict[tuple[tuple[str, str], ...], list[float]] = {}
        for r in group:
            by_seed.setdefault(_seeds(r), []).append(float(r.score or 0.0))
        for s, scores in by_seed.items():
            if s and len(scores) >= 2:
                execution.append(scores)
                ways.add("one fixed seed")
        seeded = [r for r in group if _seeds(r)]
        if len({_seeds(r) for r in seeded}) >= 2:
            decoding.append([float(r.score or 0.0) for r in seeded])
            temps.add(t)
    return SpreadSources(
        execution=_source(execution, " or ".join(sorted(ways)) or None,
                          "no two runs of one apparatus at greedy decoding or one fixed "
                          "seed"),
        decoding=_source(decoding, f"seeds at {_temps(temps)}" if temps else None,
                         "no two runs of one apparatus with different seeds at "
                         "temperature > 0"),
        items=items)


def variant_spread(runs: list[RunView], variants: list[str]) -> VariantSpread | None:
    """The variance between the plan's prompt variants over the arm's usable runs (each run's
    variant: its apparatus `prompt_hash`); None when the plan declares no variants."""
    from logbook.stats.sources import one_way_random

    if not variants:
        return None
    named = [(str(r.apparatus.get(VARIANT)), float(r.score)) for r in runs
             if r.score is not None and r.apparatus.get(VARIANT) in variants]
    fit = one_way_random([s for _v, s in named], [v for v, _s in named]) if named else None
    means: dict[str, list[float]] = {}
    for v, s in named:
        means.setdefault(v, []).append(s)
    shown: dict[str, Any] = {v: sum(xs) / len(xs) for v, xs in means.items()}
    finite = fit is not None and fit.f == fit.f and fit.f != float("inf")
    return VariantSpread(
        field=VARIANT, declared=len(variants), seen=len(means), runs=len(named),
        means=fit.means if fit is not None else shown,
        counts={v: len(xs) for v, xs in means.items()},
        between=fit.between if fit is not None else None,
        within=fit.within if fit is not None else None,
        f=fit.f if fit is not None and finite else None,
        df_between=fit.df_between if fit is not None else None,
        df_within=fit.df_within if fit is not None else None,
        p=fit.p if fit is not None else None)


def _said(name: str, src: dict[str, Any], scale: float) -> str:
    if src["sd"] is None:
        return f"{name} not estimated ({src['why']})"
    groups = f" in {src['groups']} groups" if src["groups"] > 1 else ""
    return (f"{name} (identical apparatus, {src['how']}, {src['runs']} runs{groups}) sd "
            f"{src['sd'] * scale:.2f}")


def _runs(k: int) -> str:
    return f"{k} run{'s' if k != 1 else ''}"


def source_lines(arm: dict[str, Any], scale: float) -> list[str]:
    """The arm's spread by source and the variance between its prompt variants (shared by
    the text, Markdown and HTML forms)."""
    out = []
    so = arm.get("sources")
    if so:
        items = ("" if so["items"] is None else
                 f"; items (the finite suite) sd {so['items'] * scale:.2f}")
        out.append(f"spread by source: {_said('execution', so['execution'], scale)}; "
                   f"{_said('decoding', so['decoding'], scale)}{items}")
    va = arm.get("variants")
    if va:
        head = (f"variants: {va['seen']} of {va['declared']} declared prompt variants over "
                f"{va['runs']} runs")
        if va["between"] is None:
            out.append(f"{head}: variance between variants not estimated (two variants and a "
                       "variant run twice are needed)")
        else:
            between = max(va["between"], 0.0) ** 0.5 * scale
            below = " (its estimate is below 0: no variance between variants seen)" \
                if va["between"] < 0 else ""
            test = ("" if va["f"] is None else
                    f"; F = {va['f']:.2f} on {va['df_between']} and {va['df_within']} df, "
                    f"p = {va['p']:.3g}")
            out.append(f"{head}: between variants sd {between:.2f}{below}, within a variant "
                       f"sd {va['within'] ** 0.5 * scale:.2f}{test}")
        out.append("  variant means: " + "; ".join(
            f"{v[:15]}… {m * scale:.2f} ({_runs(va['counts'].get(v, 0))})"
            for v, m in va["means"].items()))
    return out
