"""Treatment minus control: items paired by id (each item averaged over the arm's runs), or
runs with Welch's t when the plan says so.

With two or more runs in an arm the interval carries items and runs together (and clusters
when the suite names a cluster field): stats.paired_runs' variance-components t-interval.
With one run per arm it is item-level only (the paired bootstrap, clusters resampled when
named) and says that run-to-run noise is unmeasured; binary pairs with fewer than 20
discordant items take Newcombe's paired score interval instead of a bootstrap that cannot
cover there. A cluster column the plan does not name is warned when it matters."""

from __future__ import annotations

from typing import Any, Literal

from logbook.analysis.report.arms import SEED, ArmMeans
from logbook.analysis.report_shapes import Effect, WorstCase
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
    kind = body["metric"]["kind"]
    labels = _cluster_labels(body, [*c_runs, *t_runs], ids)
    hib = body["metric"].get("higher_is_better", True)
    res: dict[str, Any] = {**out, "unit": "items", "higher_is_better": hib}
    pairs = binary_pairs(a, b) if kind == "proportion" else None
    single = [arm for arm, runs in ((control, c_runs), (treatment, t_runs)) if len(runs) < 2]
    if pairs is not None and _few_discordant(*pairs):
        # binary pairs (one run per arm, or runs that agree on every item) with too few
        # discordant items for the bootstrap to cover: Newcombe's paired score interval
        est = _newcombe(*pairs, confidence)
        res.update(n_resamples=None)
    elif len(single) < 2:
        # runs to measure run-to-run noise in: items and runs (and named clusters) together
        from logbook.stats.paired_runs import paired_over_runs

        est = paired_over_runs(item_stack(c_runs, ids), item_stack(t_runs, ids), confidence,
                               labels)
        res.update(n_resamples=None, df=est.df, se_items=est.se_items, se_runs=est.se_runs)
    else:
        method: Literal["normal", "bootstrap"] = ("normal" if analysis == "paired_normal"
                                                  else "bootstrap")
        # a and b are already on one id axis (paired_arrays): pairing by position is by id
        est = stats.paired(a, b, method=method, confidence=confidence, seed=SEED,
                           n_resamples=PAIRED_RESAMPLES, clusters=labels if method ==
                           "bootstrap" else None)
        res.update(n_resamples=PAIRED_RESAMPLES if method == "bootstrap" else None)
    if single:
        res["runs_note"] = (
            "one run per arm: run-to-run noise is unmeasured, the interval is item-level only"
            if len(single) == 2 else
            f"one run in {single[0]}: its run-to-run noise is unmeasured")
    res.update(point=est.point, low=est.low, high=est.high, pvalue=est.pvalue,
               method=est.method, n=est.n, n_dropped=int(a.size - int(keep.sum())),
               worst_case=_worst_case(body, c_runs, t_runs, ids, est.point))
    if labels is not None:
        cl = stats.clustered_se((b - a)[keep], [x for x, k in zip(labels, keep.tolist(),
                                                                  strict=True) if k])
        res.update(design_effect=cl.design_effect, clusters=cl.n_clusters)
    if len(c_runs) == 1 and len(t_runs) == 1 and pairs is not None:
        m = stats.mcnemar_exact(*pairs)
        res["mcnemar"] = {"statistic": m.statistic, "pvalue": m.pvalue, "n": m.n,
                          "treatment_better": m.b_better, "control_better": m.a_better,
                          "note": "secondary: exact McNemar over one run per arm"}
    warning = unnamed_cluster_warning(body, c_runs, t_runs, ids, a, b)
    if warning:
        res["cluster_warning"] = warning
    if pairs is not None:
        res["discordance"] = sum(x != y for x, y in zip(*pairs, strict=True)) / len(pairs[0])
    return Effect(**res)


DISCORDANT_MIN = 20  # below this many discordant pairs the paired bootstrap undercovers


def _few_discordant(a: list[float], b: list[float]) -> bool:
    return sum(x != y for x, y in zip(a, b, strict=True)) < DISCORDANT_MIN


def _newcombe(a: list[float], b: list[float], confidence: float) -> Any:
    from logbook.stats.paired_runs import newcombe_paired

    both = sum(1 for x, y in zip(a, b, strict=True) if x == 1 and y == 1)
    b_only = sum(1 for x, y in zip(a, b, strict=True) if x == 0 and y == 1)
    a_only = sum(1 for x, y in zip(a, b, strict=True) if x == 1 and y == 0)
    return newcombe_paired(both, b_only, a_only, len(a) - both - b_only - a_only, confidence)


def _cluster_labels(body: dict[str, Any], runs: list[RunView],
                    ids: list[str], named: bool = True) -> list[str] | None:
    """Each item's cluster (an unclustered item is its own), or None without a cluster field
    (unless ``named`` is False: the recorded column whatever the plan names) or when fewer
    than two clusters were recorded."""
    if named and not body["suite"].get("cluster_field"):
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


def unnamed_cluster_warning(body: dict[str, Any], c_runs: list[RunView],
                            t_runs: list[RunView], ids: list[str], a: Any,
                            b: Any) -> str | None:
    """A sentence when the runs record a cluster column the plan does not name and its
    intra-class correlation (of the paired differences, or of either arm's item means) gives
    a design effect above 1.2 (stats.clustered.cluster_check): the intervals above treat
    the items as independent, and are too narrow."""
    import numpy as np

    from logbook.stats.clustered import DEFF_WARN, cluster_check

    if body["suite"].get("cluster_field"):
        return None
    labels = _cluster_labels(body, [*c_runs, *t_runs], ids, named=False)
    if labels is None:
        return None
    worst = None
    for what, values in (("the paired differences", b - a), ("the control's items", a),
                         ("the treatment's items", b)):
        keep = ~np.isnan(values)
        check = cluster_check(values[keep], [x for x, k in zip(labels, keep.tolist(),
                                                              strict=True) if k])
        if check is not None and check.warn and (worst is None
                                                 or check.design_effect > worst[1]):
            worst = (what, check.design_effect, check.icc, check.n_clusters)
    if worst is None:
        return None
    what, deff, icc, g = worst
    return (f"the runs record a cluster column ({g} clusters) that the plan does not name "
            f"as its cluster_field: the intra-class correlation of {what} is {icc:.2f}, a "
            f"design effect of {deff:.2f} (above {DEFF_WARN:g}), so the intervals, which "
            "treat items as independent, are too narrow; name the cluster_field in the plan "
            "(an amendment) to analyse by cluster")
