"""Power: required items for a difference, the minimum detectable effect, and the warning a
plan gets when its suite cannot detect its own min_effect."""

from __future__ import annotations

import math
from typing import Any

DEFAULT_P = 0.5  # the most demanding baseline when the plan gives none


def plan_power_warning(plan: dict[str, Any]) -> str | None:
    """A sentence when the plan's suite and runs cannot detect its min_effect at 80% power."""
    metric = plan.get("metric") or {}
    suite = plan.get("suite") or {}
    min_effect = plan.get("min_effect") or 0
    n = suite.get("n_items")
    if metric.get("kind") != "proportion" or not min_effect or not n:
        return None
    from logbook import stats
    from logbook.stats.planning import working_baseline

    control: dict[str, Any] = next((a for a in plan.get("arms") or []
                                    if a.get("role") == "control"), {})
    p = working_baseline(float(control.get("expected") or DEFAULT_P))
    alpha = float(plan.get("alpha", 0.05))
    try:
        mde = stats.min_detectable_effect(int(n), p, alpha=alpha, paired=True)
    except ValueError:  # too few items to detect any effect: the strongest case for a warning
        mde = math.inf
    if mde <= min_effect:
        return None
    try:
        need = stats.sample_size(min_effect if p + min_effect < 1 else -min_effect, p,
                                 alpha=alpha, paired=True)
        would = f"; about {need} items would"
    except ValueError:
        would = ""
    if math.isinf(mde):
        return (f"plan {plan.get('slug')}: {n} items cannot detect any effect at 80% power "
                f"(paired, baseline {p * 100:g}), let alone its min_effect "
                f"{min_effect * 100:g} points{would}")
    return (f"plan {plan.get('slug')}: {n} items can detect an effect of about "
            f"{mde * 100:.3g} points at 80% power (paired, baseline {p * 100:g}), larger than "
            f"its min_effect {min_effect * 100:g} points{would}")


def power_table(p: float, delta: float | None, n: int | None, alpha: float, power: float,
                paired: bool, discordance: float | None) -> dict[str, Any]:
    from logbook import stats

    out: dict[str, Any] = {"p": p, "alpha": alpha, "power": power, "paired": paired,
                           "discordance": discordance}
    if delta is not None:
        out["delta"] = delta
        out["items_needed"] = stats.sample_size(delta, p, alpha=alpha, power=power,
                                                paired=paired, discordance=discordance)
    if n is not None:
        out["n"] = n
        out["min_detectable_effect"] = stats.min_detectable_effect(
            n, p, alpha=alpha, power=power, paired=paired, discordance=discordance)
    return out
