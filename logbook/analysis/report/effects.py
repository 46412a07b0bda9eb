"""Treatment minus control: items paired by id (each item averaged over the arm's runs), or
runs with Welch's t when the plan says so; with a cluster field, whole clusters of paired
differences are resampled."""

from __future__ import annotations

from typing import Any, Literal

from logbook.analysis.report.arms import SEED, ArmMeans
from logbook.analysis.schemas import Effect, WorstCase
from logbook.analysis.view import PlanView, RunView, clusters_of, item_stack
from logbook.format.metrics import BOUNDED_KINDS

PAIRED_RESAMPLES = 10_000  # the paired bootstrap's resamples (a p-value below 1/B prints so)


def effect(plan: PlanView, control: str, treatment: str, confidence: float,
           means_of: ArmMeans | None = None) -> Effect:
    """The effect of ``treatment`` over ``control`` with its interval and p-value, or its
    ``point`` None and the ``reason`` it cannot be computed."""
    from logbook import stats
    from logbook.stats.items import align, binary_pairs, complete

    body = plan.body
    c_runs = [r for r in plan.arm_runs(control) if r.usable]
    t_runs = [r for r in plan.arm_runs(treatment) if r.usable]
    out: dict[str, Any] = {"control": control, "treatment": treatment}
    if not c_runs or not t_runs:
        return Effect(**out, point=None, reason="an arm has no completed runs")
    analysis = body.get("analysis", "paired_bootstrap")
    if analysis == "welch":
        ra = [r.score for r in c_runs if r.score is not None]
        rb = [r.score for r in t_runs if r.score is not None]
        if len(ra) < 2 or len(rb) < 2:
            return Effect(**out, point=None,
                                          reason="welch needs two runs per arm")
        w = stats.welch(ra, rb, confidence=confidence)
        return Effect(**out, point=w.point, low=w.low, high=w.high,
                                      pvalue=w.pvalue, method=w.method, n=w.n, unit="runs",
                                      n_dropped=0)
    # items of both arms on one id axis (as view.paired_arrays), from the arms' item means
    means_of = means_of or ArmMeans()
    ids_c, mc, _ = means_of.of(c_runs)
    ids_t, mt, _ = means_of.of(t_runs)
    ids, a, b = align(ids_c, mc, ids_t, mt)
    keep = complete(a, b)
    if int(keep.sum()) < 2:
        return Effect(**out, point=None,
                                      reason="fewer than two items scored in both arms")
    method: Literal["normal", "bootstrap"] = ("normal" if analysis == "paired_normal"
                                              else "bootstrap")
    labels = _cluster_labels(body, [*c_runs, *t_runs], ids) if method == "bootstrap" else None
    # a and b are already on one id axis (paired_arrays): pairing by position is pairing by id
    est = stats.paired(a, b, method=method, confidence=confidence, seed=SEED,
                       n_resamples=PAIRED_RESAMPLES, clusters=labels)
    hib = body["metric"].get("higher_is_better", True)
    res = {**out, "point": est.point, "low": est.low, "high": est.high, "pvalue": est.pvalue,
           "method": est.method, "n": est.n, "unit": "items", "n_dropped": est.n_dropped,
           "n_resamples": PAIRED_RESAMPLES if method == "bootstrap" else None,
           "higher_is_better": hib, "worst_case": _worst_case(body, c_runs, t_runs, ids,
                                                              est.point)}
    if labels is not None:
        cl = stats.clustered_se((b - a)[keep], [x for x, k in zip(labels, keep.tolist(),
                                                                  strict=True) if k])
        res.update(design_effect=cl.design_effect, clusters=cl.n_clusters)
    if len(c_runs) == 1 and len(t_runs) == 1 and body["metric"]["kind"] == "proportion":
        pairs = binary_pairs(a, b)
        if pairs is not None:
            m = stats.mcnemar_exact(*pairs)
            res["mcnemar"] = {"statistic": m.statistic, "pvalue": m.pvalue, "n": m.n,
                              "treatment_better": m.b_better, "control_better": m.a_better,
                              "note": "secondary: exact McNemar over one run per arm"}
    return Effect(**res)


def _cluster_labels(body: dict[str, Any], runs: list[RunView],
                    ids: list[str]) -> list[str] | None:
    """Each item's cluster (an unclustered item is its own), or None without a cluster field
    or when fewer than two clusters were recorded."""
    if not body["suite"].get("cluster_field"):
        return None
    clusters = clusters_of(runs)
    labels = [clusters.get(i, f"_item:{i}") for i in ids]
    return labels if len(set(labels)) >= 2 and clusters else None


def _worst_case(body: dict[str, Any], c_runs: list[RunView], t_runs: list[RunView],
                ids: list[str], point: float) -> WorstCase | None:
    """Bounds on the effect with every missing item-run imputed against and for the claim
    (items missing in some runs of an arm count too); only for scores in [0, 1] (logbook
    refuses others for such metrics, but a ledger written around it may hold them)."""
    from logbook import stats
    from logbook.stats.items import in_unit

    if body["metric"]["kind"] not in BOUNDED_KINDS:
        return None
    sa, sb = item_stack(c_runs, ids), item_stack(t_runs, ids)
    if not (in_unit(sa) and in_unit(sb)):
        return None
    wc = stats.worst_case_bounds(sa, sb, direction=1 if point >= 0 else -1, low=0.0, high=1.0)
    return WorstCase(low=wc.low, high=wc.high, missing=wc.n_dropped)
