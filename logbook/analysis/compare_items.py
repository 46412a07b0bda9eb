"""`logbook compare A B --items`: the per-item flip list, which items B scores higher than A,
lower, the same, and which cannot be compared; with the two sides' discordance and the
`logbook power` it points at. The sides are selected and judged comparable as `logbook compare
A B` does (logbook.analysis.compare).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from logbook.analysis import display
from logbook.analysis.compare import SelectedRun, Side, check_comparable, shared_metric_kind
from logbook.analysis.selectors import select
from logbook.analysis.view import LedgerView, RunView, item_mean_arrays
from logbook.errors import InputError

TIE = 1e-12  # scores this close are the same score (means over runs carry float noise)


@dataclass(frozen=True)
class ItemPair:
    """One item both sides scored: its score on A and on B (a side's mean over its runs)."""

    id: str
    a: float
    b: float


@dataclass(frozen=True)
class NotComparable:
    """An item one side (or both) has no score for: a failed or missing item is missing,
    never a zero, so it is neither improved nor regressed."""

    id: str
    a: float | None
    b: float | None
    missing_on: str  # "a", "b" or "both"


@dataclass(frozen=True)
class PowerPointer:
    """`logbook power` with the discordance these two sides measured: the smallest effect a
    suite of ``n`` items detects at 80% power when the systems disagree as often as here."""

    p: float
    discordance: float
    n: int
    command: str
    min_detectable_effect: float | None
    why_not: str | None


@dataclass(frozen=True)
class ItemComparison:
    """`logbook compare A B --items`; ``as_json`` is what `--json` prints. Each side's runs
    that count are its completed, unretracted ones; an item's score on a side is its mean over
    those runs. ``discordance`` is the share of items a run of A and a run of B score
    differently (pooled over every pair of their runs; None unless the scores are pass/fail),
    the figure ``power`` points `logbook power --paired` at."""

    a: Side
    b: Side
    counts: dict[str, int]
    improved: list[ItemPair]
    regressed: list[ItemPair]
    unchanged: list[str]
    not_comparable: list[NotComparable]
    discordance: float | None
    power: PowerPointer | None
    metric_kind: str | None
    binary: bool

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _side_runs(view: LedgerView, selector: str) -> list[RunView]:
    """A selector's runs; a lone ``@SEQ`` or digest prefix names one run."""
    term = selector.strip()
    if term and not any(c in term for c in ":=,"):
        digest = view.ledger.resolve(term, "RUN")
        run = view.runs_by_digest.get(digest)
        if run is None:
            raise InputError(f"RUN {term}: that entry is not a run")
        return [run]
    return select(view, selector)


def _power_pointer(pa: float, discordance: float, n: int) -> PowerPointer:
    """The command, with its figures as printed, and what it gives for exactly those."""
    from logbook.analysis.power import power_table

    p_text, d_text = f"{pa:.4g}", f"{discordance:.4g}"
    command = f"logbook power --paired --p {p_text} --discordance {d_text} --n {n}"
    try:
        mde = power_table(float(p_text), None, n, 0.05, 0.8, True,
                          float(d_text))["min_detectable_effect"]
        why = None
    except ValueError as exc:
        mde, why = None, str(exc)
    return PowerPointer(pa, discordance, n, command, mde, why)


def _discordance(use_a: list[RunView], use_b: list[RunView]) -> float | None:
    """The share of items one run of A and one run of B score differently, pooled over every
    pair of their runs: the disagreement `power --paired --discordance` takes. None unless
    every item score is 0 or 1 (pass/fail), the only case that share is defined for."""
    import numpy as np

    from logbook.stats.items import align

    differ = total = 0
    for ra in use_a:
        for rb in use_b:
            _, x, y = align(*ra.item_arrays, *rb.item_arrays)
            both = ~np.isnan(x) & ~np.isnan(y)
            x, y = x[both], y[both]
            if not (np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all()):
                return None
            differ += int((x != y).sum())
            total += int(both.sum())
    return differ / total if total else None


def compare_items(view: LedgerView, sel_a: str, sel_b: str) -> ItemComparison:
    """Which items B scores higher than A (improved), lower (regressed), the same, and which
    cannot be compared because a side has no score for them."""
    import numpy as np

    runs_a, runs_b = _side_runs(view, sel_a), _side_runs(view, sel_b)
    check_comparable(view, [(f"A ({sel_a})", runs_a), (f"B ({sel_b})", runs_b)])
    use_a = [r for r in runs_a if r.usable]
    use_b = [r for r in runs_b if r.usable]
    # every item either side wrote, usable or not, so a failed side's items are listed
    ids_a, ma, _ = item_mean_arrays(use_a) if use_a else ([], np.array([]), {})
    ids_b, mb, _ = item_mean_arrays(use_b) if use_b else ([], np.array([]), {})
    from logbook.stats.items import align

    ids, a, b = align(ids_a, ma, ids_b, mb)
    written = dict.fromkeys(i for r in runs_a + runs_b for i in r.item_arrays[0])
    improved, regressed, unchanged, lost = [], [], [], []
    seen = set(ids)
    for i, x, y in zip(ids, a.tolist(), b.tolist(), strict=True):
        if x != x or y != y:  # NaN: no score on that side
            side = "both" if x != x and y != y else ("a" if x != x else "b")
            lost.append(NotComparable(i, None if x != x else x, None if y != y else y, side))
        elif y - x > TIE:
            improved.append(ItemPair(i, x, y))
        elif x - y > TIE:
            regressed.append(ItemPair(i, x, y))
        else:
            unchanged.append(i)
    lost += [NotComparable(i, None, None, "both") for i in written if i not in seen]
    plans = {r.plan for r in runs_a + runs_b if r.plan}
    kind = shared_metric_kind(view, plans)
    n = len(improved) + len(regressed) + len(unchanged)
    both = ~np.isnan(a) & ~np.isnan(b)
    binary = bool(np.isin(a[both], (0.0, 1.0)).all() and np.isin(b[both], (0.0, 1.0)).all())
    discordance = _discordance(use_a, use_b)
    pa = float(a[both].mean()) if n else 0.0
    pointer = (_power_pointer(pa, discordance, n) if discordance and 0 < pa < 1
               and kind in ("proportion", "pass_at_k", None) else None)
    counts = {"improved": len(improved), "regressed": len(regressed),
              "unchanged": len(unchanged), "not_comparable": len(lost), "compared": n}
    return ItemComparison(
        a=Side(sel_a, [SelectedRun.of(r) for r in runs_a], len(use_a)),
        b=Side(sel_b, [SelectedRun.of(r) for r in runs_b], len(use_b)),
        counts=counts, improved=improved, regressed=regressed, unchanged=unchanged,
        not_comparable=lost, discordance=discordance, power=pointer, metric_kind=kind,
        binary=binary)


def item_lines(res: ItemComparison) -> list[str]:
    """The text of `compare --items`."""
    scale = display.scale_of(res.metric_kind)
    c = res.counts
    out = [f"A = {res.a.selector}: {len(res.a.runs)} runs ({res.a.usable} usable)",
           f"B = {res.b.selector}: {len(res.b.runs)} runs ({res.b.usable} usable)",
           f"items: {c['improved']} improved, {c['regressed']} regressed, {c['unchanged']} "
           f"unchanged (of {c['compared']} compared); {c['not_comparable']} not comparable "
           "(no score on a side: missing, never zero)"]
    for title, rows in (("improved (B higher)", res.improved),
                        ("regressed (B lower)", res.regressed)):
        if rows:
            out.append(f"{title}:")
            out += [f"  {p.id}  {p.a * scale:.4g} -> {p.b * scale:.4g}" for p in rows]
    if res.not_comparable:
        out.append("not comparable:")
        where = {"a": "A", "b": "B", "both": "A and B"}
        out += [f"  {x.id}  no score on {where[x.missing_on]}" for x in res.not_comparable]
    if res.discordance is not None:
        out.append(f"discordance: {res.discordance:.4f} (share of items a run of A and a "
                   "run of B score differently, over every pair of their runs)")
    p = res.power
    if p is not None:
        found = ("" if p.min_detectable_effect is None else
                 f": {p.n} items detect {p.min_detectable_effect * scale:.3g}"
                 f"{display.unit_of(res.metric_kind)} at 80% power")
        out.append(f"power with this discordance: {p.command}{found}"
                   + (f" ({p.why_not})" if p.why_not else ""))
    return out
