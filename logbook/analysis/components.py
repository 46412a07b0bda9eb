"""The components of a composite suite (an lm-eval group's subtasks), each beside the roll-up:
per arm, the figure over the component's items; between arms, the paired effect on them.

A run's items name their component in the outcome's `component` column; an item's component is
the one its runs give it. Figures follow the report's own rules: each item is averaged over the
arm's usable runs, and items are paired by id, complete-case, with the plan's method.
"""

from __future__ import annotations

from typing import Any, Literal

from logbook.analysis.report_shapes import Component, ComponentArm
from logbook.analysis.view import PlanView, RunView, item_mean_arrays, paired_arrays

SEED = 0  # the report's seed: the same ledger gives the same figures


def component_of(runs: list[RunView]) -> dict[str, str]:
    """Item id -> component, from the runs' `component` columns (first run that names one)."""
    out: dict[str, str] = {}
    for r in runs:
        oc = r.body.get("outcomes") or {}
        for i, c in zip(oc.get("id") or [], oc.get("component") or [], strict=False):
            if c is not None:
                out.setdefault(i, c)
    return out


def _arm_figure(runs: list[RunView], members: set[str]) -> dict[str, Any]:
    import numpy as np

    ids, means, _ = item_mean_arrays(runs)
    mask = np.array([i in members for i in ids], dtype=bool)
    vals = means[mask] if len(ids) else means
    vals = vals[~np.isnan(vals)]
    return {"figure": float(vals.mean()) if vals.size else None, "n": int(vals.size)}


def _effect(c_runs: list[RunView], t_runs: list[RunView], members: set[str],
            method: Literal["normal", "bootstrap"], confidence: float) -> dict[str, Any]:
    import numpy as np

    from logbook import stats
    from logbook.stats.items import complete

    ids, a, b = paired_arrays(c_runs, t_runs)
    mask = np.array([i in members for i in ids], dtype=bool)
    a, b = a[mask], b[mask]
    if int(complete(a, b).sum()) < 2:
        return {"point": None, "reason": "fewer than two items scored in both arms"}
    est = stats.paired(a, b, method=method, confidence=confidence, seed=SEED)
    return {"point": est.point, "low": est.low, "high": est.high, "pvalue": est.pvalue,
            "method": est.method, "n": est.n, "n_dropped": est.n_dropped}


def components(plan: PlanView, confidence: float) -> list[Component]:
    """One row per component: its figure per arm, and effects [{control, treatment, point,
    low, high, ...}]; empty when no run of the plan names components."""
    arms = plan.arms()
    usable = {a["name"]: [r for r in plan.arm_runs(a["name"]) if r.usable] for a in arms}
    where = component_of([r for runs in usable.values() for r in runs])
    if not where:
        return []
    names = list(dict.fromkeys(where.values()))
    controls = [a["name"] for a in arms if a["role"] == "control"]
    treatments = [a["name"] for a in arms if a["role"] == "treatment"]
    analysis = plan.body.get("analysis", "paired_bootstrap")
    method: Literal["normal", "bootstrap"] = ("normal" if analysis == "paired_normal"
                                              else "bootstrap")
    rows = []
    for name in names:
        members = {i for i, c in where.items() if c == name}
        effects = []
        for t in treatments if controls else []:
            c_runs, t_runs = usable[controls[0]], usable[t]
            eff = (_effect(c_runs, t_runs, members, method, confidence) if c_runs and t_runs
                   else {"point": None, "reason": "an arm has no completed runs"})
            effects.append({"control": controls[0], "treatment": t, **eff})
        rows.append(Component(
            name=name, n_items=len(members),
            arms=[ComponentArm(name=a["name"],
                                               **_arm_figure(usable[a["name"]], members))
                  for a in arms],
            effects=effects))
    return rows
