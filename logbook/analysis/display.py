"""How figures read for people: one display scale (points for proportions), p-values that
never read 0, and the unit a comparison rests on. Shared by every text form (report text,
Markdown and HTML, compare, the verdict lines); JSON keeps fractions."""

from __future__ import annotations

from typing import Any

from logbook.format.metrics import BOUNDED_KINDS


def scale_of(kind: str | None) -> float:
    """100 for metrics whose scores lie in [0, 1] (printed as points), else 1."""
    return 100.0 if kind in BOUNDED_KINDS else 1.0


def unit_of(kind: str | None) -> str:
    """The unit named after a figure on the display scale."""
    return " points" if kind in BOUNDED_KINDS else ""


def alpha_of(plan: dict[str, Any]) -> float:
    """The plan's alpha as the analysis uses it: 0.05 when the plan leaves it out."""
    alpha = plan.get("alpha")
    return 0.05 if alpha is None else float(alpha)


def pvalue(p: float, n_resamples: int | None = None) -> str:
    """``p=0.78``; a resampling p-value below what B resamples can resolve is ``p < 1/B``."""
    if n_resamples and p < 1.0 / n_resamples:
        return f"p < {1.0 / n_resamples:g}"
    if p <= 0.0:  # an exact p-value below what a float holds: it underflowed, it is not 0
        return "p < 1e-300"
    return f"p={p:.3g}"


def effect_basis(e: dict[str, Any]) -> str:
    """What an effect rests on: paired items (and how many were dropped), or runs."""
    if e.get("unit") == "runs":
        return f"over {e['n']} runs (Welch, unpaired)"
    text = f"n={e['n']} paired items, {e['n_dropped']} dropped (complete-case)"
    if e.get("design_effect") is not None:
        text += f"; {e['clusters']} clusters, design effect {e['design_effect']:.2f}"
    return text


def condition(c: dict[str, Any], scale: float, digits: int = 2) -> str:
    """A verdict criterion and what was observed, on the display scale (at ``digits``
    decimals: the report passes those the observed figure's interval supports)."""
    unit = " points" if scale == 100.0 else ""
    arm = f"[{c['arm']}]" if c.get("arm") else ""
    obs = "n/a" if c["observed"] is None else f"{c['observed'] * scale:.{digits}f}"
    state = "holds" if c["holds"] else "does not hold"
    return f"{c['stat']}{arm} {c['op']} {c['value'] * scale:g}{unit} — observed {obs} — {state}"
