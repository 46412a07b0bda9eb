"""`logbook report PLAN`: every run of a plan, the right error bars, the effect and the verdict.

The report reads the whole ledger for the plan: failed, aborted and retracted runs are listed;
retracted ones are excluded from the figures, with the retraction's reason. The verdict, the
interval and any p-value printed together come from one method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logbook.analysis.components import components
from logbook.analysis.verdict import judge
from logbook.analysis.view import LedgerView, PlanView, RunView, is_identity
from logbook.format.metrics import BOUNDED_KINDS

SEED = 0  # explicit: the same ledger gives the same report
PAIRED_RESAMPLES = 10_000  # the paired bootstrap's resamples (a p-value below 1/B prints so)


def run_interval(run: RunView, kind: str, confidence: float,
                 cluster_field: str | None) -> dict[str, Any] | None:
    """A run's item-level interval: Wilson for a binary proportion, BCa bootstrap otherwise,
    the cluster bootstrap when the suite names a cluster field."""
    import numpy as np

    ids, values = run.item_arrays
    keep = ~np.isnan(values)
    clusters = None
    if cluster_field and run.clusters:
        clusters = [run.clusters.get(i, f"_item:{i}") for i, k in zip(ids, keep.tolist(),
                                                                       strict=True) if k]
    return _interval(values[keep], kind, confidence, clusters, 2000)


def _interval(vals: Any, kind: str, confidence: float, clusters: list[str] | None,
              n_resamples: int) -> dict[str, Any] | None:
    import numpy as np

    from logbook import stats

    if vals.size == 0:
        return None
    lo, hi = float(vals.min()), float(vals.max())
    binary = bool(np.isin(vals, (0.0, 1.0)).all())
    if kind == "proportion" and binary and clusters is None:
        # Wilson, also at 0 or 100%: 200 of 200 is 98.1-100, not a point
        est = stats.wilson(int(vals.sum()), int(vals.size), confidence)
    elif lo == hi:
        return {"point": lo, "low": lo, "high": hi, "method": "degenerate", "n": int(vals.size)}
    else:
        est = stats.bootstrap(vals, method="bca", confidence=confidence, seed=SEED,
                              clusters=clusters, n_resamples=n_resamples)
    return {"point": est.point, "low": est.low, "high": est.high, "method": est.method,
            "n": est.n}


def arm_item_level(runs: list[RunView], kind: str, confidence: float,
                   cluster_field: str | None) -> dict[str, Any] | None:
    """Interval over items, each item averaged over the arm's usable runs."""
    import numpy as np

    ids, means, clusters = item_mean_arrays(runs)
    keep = ~np.isnan(means)
    if int(keep.sum()) < 2:
        return None
    cl = None
    if cluster_field and clusters:
        cl = [clusters.get(i, f"_item:{i}") for i, k in zip(ids, keep.tolist(), strict=True)
              if k]
        if len(set(cl)) < 2:
            cl = None
    iv = _interval(means[keep], kind, confidence, cl, 2000)
    if iv is not None and cl is not None:
        from logbook import stats

        deff = stats.clustered_se(means[keep], cl)
        iv.update(clusters=deff.n_clusters, design_effect=deff.design_effect)
    return iv


def item_mean_arrays(runs: list[RunView]) -> tuple[list[str], Any, dict[str, str]]:
    """(ids, each item's mean over the runs that scored it (NaN if none did), clusters)."""
    import numpy as np

    clusters: dict[str, str] = {}
    for r in runs:
        clusters.update(r.clusters)
    if not runs:
        return [], np.zeros(0), clusters
    first_ids = runs[0].item_arrays[0]
    if all(r.item_arrays[0] == first_ids for r in runs[1:]):
        ids = first_ids
        stack = np.vstack([r.item_arrays[1] for r in runs])
    else:  # runs wrote different item sets: align on the union of ids
        ids = list(dict.fromkeys(i for r in runs for i in r.item_arrays[0]))
        index = {i: k for k, i in enumerate(ids)}
        stack = np.full((len(runs), len(ids)), np.nan)
        for row, r in enumerate(runs):
            rids, vals = r.item_arrays
            stack[row, [index[i] for i in rids]] = vals
    present = ~np.isnan(stack)
    counts = present.sum(axis=0)
    from logbook.stats._exact import column_sums

    sums = column_sums(np.where(present, stack, 0.0))  # the same digits on any numpy
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return list(ids), means, clusters


def item_means(runs: list[RunView]) -> tuple[dict[str, float | None], dict[str, str]]:
    """Each item's mean over the runs (None when no run scored it), and item clusters."""
    ids, means, clusters = item_mean_arrays(runs)
    return ({i: (None if v != v else float(v)) for i, v in zip(ids, means.tolist(),
                                                               strict=True)}, clusters)


def run_level(runs: list[RunView], confidence: float,
              kind: str = "mean") -> dict[str, Any] | None:
    """Mean over runs with its interval: the t-interval, or for a proportion or pass@k the
    t-interval on the runs' logits (stats.logit_t_interval), which stays inside [0, 1]."""
    from logbook import stats

    scored = [r for r in runs if r.score is not None]
    if len(scored) < 2:
        return None
    scores = [float(r.score) for r in scored if r.score is not None]
    if kind in BOUNDED_KINDS and all(0.0 <= x <= 1.0 for x in scores):
        est = stats.logit_t_interval(scores, confidence)
    else:
        est = stats.t_interval(scores, confidence)
    return {"mean": est.point, "sd": est.sd, "low": est.low, "high": est.high,
            "method": est.method, "k": len(scores)}


def differing_fields(runs: list[RunView]) -> dict[str, list[Any]]:
    """Apparatus fields whose value differs between runs (per-run identity excluded)."""
    keys = set().union(*(r.apparatus.keys() for r in runs)) if runs else set()
    out = {}
    for k in sorted(keys):
        if is_identity(k):
            continue
        present = {repr(r.apparatus.get(k)) for r in runs}
        if len(present) > 1:
            out[k] = sorted(present)
    return out


def describe_apparatus(runs: list[RunView]) -> str:
    """The apparatus part of the reporting line: decoding, engine build, KV, hardware."""
    if not runs:
        return ""
    a = runs[0].apparatus
    parts = []
    temp = a.get("decoding.temperature")
    if temp is not None:
        parts.append("greedy" if temp == 0 else f"T={temp:g}" + (
            f", top-p {a['decoding.top_p']:g}" if a.get("decoding.top_p") is not None else ""))
    engine = a.get("engine_build") or a.get("engine")
    kv = a.get("kv_cache_precision")
    eng = " + ".join(x for x in (f"engine {engine}" if engine else "",
                                 f"{kv} KV" if kv else "") if x)
    if eng:
        parts.append(eng)
    hw = a.get("hardware.gpu") or a.get("placement") or a.get("hardware.name")
    if hw:
        parts.append(str(hw))
    return ", ".join(parts)


def reporting_line(point: float, chosen: dict[str, Any], label: str, k: int, n: int | None,
                   runs: list[RunView], scale: float) -> str:
    from logbook import stats

    f = stats.format_estimate(point, chosen["low"], chosen["high"], scale=scale)
    sep = " to " if f.low.startswith("-") or f.high.startswith("-") else "–"
    bits = [f"{f.point}, {label} {f.low}{sep}{f.high} over {k} run{'s' if k != 1 else ''}"]
    if n:
        bits.append(f"n={n}")
    app = describe_apparatus(runs)
    if app:
        bits.append(app)
    return ", ".join(bits)


def arm_report(plan: PlanView, arm: dict[str, Any], confidence: float,
               band: Callable[[list[RunView]], dict[str, Any] | None] | None = None
               ) -> dict[str, Any]:
    body = plan.body
    kind = body["metric"]["kind"]
    n_items = body["suite"].get("n_items")
    cluster_field = body["suite"].get("cluster_field")
    scale = 100.0 if kind in BOUNDED_KINDS else 1.0
    runs = plan.arm_runs(arm["name"])
    usable = [r for r in runs if r.usable]
    rows = []
    for r in runs:
        m, total = r.missing(n_items)
        row: dict[str, Any] = {
            "seq": r.seq, "digest": r.digest, "status": r.status, "session": r.session,
            "score": r.score, "missing": m, "missing_rate": (m / total) if total else None,
            "retracted": r.retracted,
            "retracted_by": [e.digest for e in r.retracted_by],
            "reason": r.body.get("reason"),
            "interval": (run_interval(r, kind, confidence, cluster_field)
                         if r.status == "completed" else None),
        }
        rows.append(row)
    rl = run_level(usable, confidence, kind)
    il = arm_item_level(usable, kind, confidence, cluster_field)
    wider, chosen, label = None, None, ""
    if rl and il:
        wider = "run_level" if rl["high"] - rl["low"] >= il["high"] - il["low"] else "item_level"
    elif rl or il:
        wider = "run_level" if rl else "item_level"
    if wider:
        chosen = rl if wider == "run_level" else il
        label = "run-level" if wider == "run_level" else "item-level"
    point = rl["mean"] if rl else (il["point"] if il else None)
    line = None
    if chosen is not None and point is not None:
        line = reporting_line(point, chosen, label, len(usable), n_items, usable, scale)
    return {
        "name": arm["name"], "role": arm["role"], "expected": arm.get("expected"),
        "tolerance": arm.get("tolerance"),
        "planned_runs": body["runs_per_arm"], "completed": len(usable),
        "failed": sum(1 for r in runs if r.status == "failed"),
        "aborted": sum(1 for r in runs if r.status == "aborted"),
        "retracted": sum(1 for r in runs if r.retracted),
        "runs": rows, "run_level": rl, "item_level": il, "wider": wider,
        "mean": point, "interval": None if chosen is None else
        {"low": chosen["low"], "high": chosen["high"], "kind": label},
        "differing_apparatus": differing_fields(usable),
        "band": band(usable) if band is not None and usable else None,
        "samples": sample_components(usable),
        "spread": spread_over_runs(usable, rl, bool(body.get("total_spread"))),
        "line": line,
    }


def sample_components(runs: list[RunView]) -> dict[str, Any] | None:
    """Items scored several times (the `sample` column): the between-item and within-item
    variance of single scores (stats.variance_components, over the arm's runs' samples)."""
    import numpy as np

    from logbook import stats

    ids: list[str] = []
    scores: list[float] = []
    if any(r.pass_k for r in runs):
        return None  # components of single samples are not those of the pass@k figure
    for r in runs:
        oc = r.body.get("outcomes") or {}
        if not oc.get("sample"):
            continue
        for i, s in zip(oc.get("id") or [], oc.get("score") or [], strict=False):
            if s is not None:
                ids.append(i)
                scores.append(float(s))
    if not scores:
        return None
    codes, counts = np.unique(np.asarray(ids, dtype=object), return_counts=True)
    repeated = set(codes[counts >= 2].tolist())
    keep = [k for k, i in enumerate(ids) if i in repeated]
    if len(repeated) < 2:
        return None
    vc = stats.variance_components([scores[k] for k in keep], [ids[k] for k in keep])
    return {"k": vc.k_mean, "n_items": vc.n_items, "between": vc.between,
            "within": vc.within, "se_mean": vc.se_mean, "dominant": vc.dominant}


def spread_over_runs(runs: list[RunView], rl: dict[str, Any] | None,
                     total: bool) -> dict[str, Any] | None:
    """Seed (run-to-run) spread beside item spread (the finite suite: each run's item-level
    standard error, root mean square over runs), and with ``total`` their sum in quadrature,
    the spread of a single run on a fresh sample of items (003)."""
    import math

    import numpy as np

    from logbook.stats._exact import xvar

    if rl is None:
        return None
    item_var = []
    for r in runs:
        _, values = r.item_arrays
        v = values[~np.isnan(values)]
        if v.size >= 2:
            item_var.append(xvar(v) / v.size)
    if not item_var:
        return None
    items = math.sqrt(sum(item_var) / len(item_var))
    seeds = float(rl["sd"])
    return {"seeds": seeds, "items": items,
            "total": math.sqrt(seeds**2 + items**2) if total else None}


def effect(plan: PlanView, control: str, treatment: str, confidence: float) -> dict[str, Any]:
    """Treatment minus control, items paired by id (each item averaged over the arm's runs);
    with a cluster field, whole clusters of paired differences are resampled."""
    from logbook import stats

    body = plan.body
    c_runs = [r for r in plan.arm_runs(control) if r.usable]
    t_runs = [r for r in plan.arm_runs(treatment) if r.usable]
    out: dict[str, Any] = {"control": control, "treatment": treatment}
    if not c_runs or not t_runs:
        return {**out, "point": None, "reason": "an arm has no completed runs"}
    analysis = body.get("analysis", "paired_bootstrap")
    if analysis == "welch":
        a = [r.score for r in c_runs if r.score is not None]
        b = [r.score for r in t_runs if r.score is not None]
        if len(a) < 2 or len(b) < 2:
            return {**out, "point": None, "reason": "welch needs two runs per arm"}
        w = stats.welch(a, b, confidence=confidence)
        return {**out, "point": w.point, "low": w.low, "high": w.high, "pvalue": w.pvalue,
                "method": w.method, "n": w.n, "unit": "runs", "n_dropped": 0}
    ids, a, b = paired_arrays(c_runs, t_runs)
    n_complete = int(((a == a) & (b == b)).sum())
    if n_complete < 2:
        return {**out, "point": None, "reason": "fewer than two items scored in both arms"}
    method = "normal" if analysis == "paired_normal" else "bootstrap"
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
        keep = (a == a) & (b == b)
        cl = stats.clustered_se((b - a)[keep], [x for x, k in zip(labels, keep.tolist(),
                                                                  strict=True) if k])
        res["design_effect"] = cl.design_effect
        res["clusters"] = cl.n_clusters
    if (len(c_runs) == 1 and len(t_runs) == 1 and body["metric"]["kind"] == "proportion"):
        pairs = [(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)
                 if x == x and y == y]
        if pairs and all(x in (0.0, 1.0) and y in (0.0, 1.0) for x, y in pairs):
            m = stats.mcnemar_exact([x for x, _ in pairs], [y for _, y in pairs])
            res["mcnemar"] = {"statistic": m.statistic, "pvalue": m.pvalue, "n": m.n,
                              "treatment_better": m.b_better, "control_better": m.a_better,
                              "note": "secondary: exact McNemar over one run per arm"}
    return res


def _cluster_labels(body: dict[str, Any], runs: list[RunView],
                    ids: list[str]) -> list[str] | None:
    """Each item's cluster (an unclustered item is its own), or None without a cluster field
    or when fewer than two clusters were recorded."""
    if not body["suite"].get("cluster_field"):
        return None
    clusters: dict[str, str] = {}
    for r in runs:
        clusters.update(r.clusters)
    labels = [clusters.get(i, f"_item:{i}") for i in ids]
    return labels if len(set(labels)) >= 2 and clusters else None


def _worst_case(body: dict[str, Any], c_runs: list[RunView], t_runs: list[RunView],
                ids: list[str], point: float) -> dict[str, Any] | None:
    """Bounds on the effect with every missing item-run imputed against and for the claim
    (items missing in some runs of an arm count too); only for scores in [0, 1] (logbook
    refuses others for such metrics, but a ledger written around it may hold them)."""
    from logbook import stats

    if body["metric"]["kind"] not in BOUNDED_KINDS:
        return None
    sa, sb = item_stack(c_runs, ids), item_stack(t_runs, ids)
    if not (_in_unit(sa) and _in_unit(sb)):
        return None
    wc = stats.worst_case_bounds(sa, sb, direction=1 if point >= 0 else -1, low=0.0, high=1.0)
    return {"low": wc.low, "high": wc.high, "missing": wc.n_dropped}


def item_stack(runs: list[RunView], ids: list[str]) -> Any:
    """Runs x items scores on the axis ``ids`` (NaN where a run has no score for an item)."""
    import numpy as np

    index: dict[str, int] | None = None  # built only when a run's items are in another order
    stack = np.full((len(runs), len(ids)), np.nan)
    for row, r in enumerate(runs):
        rids, vals = r.item_arrays
        if rids == ids:
            stack[row] = vals
        else:
            index = index or {i: k for k, i in enumerate(ids)}
            stack[row, [index[i] for i in rids]] = vals
    return stack


def _in_unit(x: Any) -> bool:
    """Whether every score that is not NaN lies in [0, 1]."""
    import numpy as np

    return bool(np.all(np.isnan(x) | ((x >= 0) & (x <= 1))))


def paired_arrays(a_runs: list[RunView], b_runs: list[RunView]) -> tuple[list[str], Any, Any]:
    """Items of both sets on one id axis: each item's mean per set, NaN where a set lacks it."""
    import numpy as np

    ids_a, ma, _ = item_mean_arrays(a_runs)
    ids_b, mb, _ = item_mean_arrays(b_runs)
    if ids_a == ids_b:
        return ids_a, ma, mb
    ids = list(dict.fromkeys([*ids_a, *ids_b]))
    index = {i: k for k, i in enumerate(ids)}
    a = np.full(len(ids), np.nan)
    b = np.full(len(ids), np.nan)
    a[[index[i] for i in ids_a]] = ma
    b[[index[i] for i in ids_b]] = mb
    return ids, a, b


def build_report(view: LedgerView, plan_ref: str) -> dict[str, Any]:
    plan = view.plan(plan_ref)
    body = plan.body
    confidence = 1 - float(body.get("alpha", 0.05))
    from logbook.analysis.bands import band_of, latest_bands

    bands = latest_bands(view)
    arms = [arm_report(plan, a, confidence, lambda runs: band_of(view, runs, bands))
            for a in plan.arms()]
    controls = [a["name"] for a in plan.arms() if a["role"] == "control"]
    treatments = [a["name"] for a in plan.arms() if a["role"] == "treatment"]
    effects = [effect(plan, controls[0], t, confidence) for t in treatments] if controls else []
    verdict = judge(body, arms, effects, confidence)
    from logbook.analysis.retractions import retraction_review
    excluded = []
    for a in arms:
        for row in a["runs"]:
            if row["retracted"]:
                bodies = [view.ledger.get(d).body for d in row["retracted_by"]]
                excluded.append({"seq": row["seq"], "digest": row["digest"], "arm": a["name"],
                                 "reason": "; ".join(str(b.get("reason")) for b in bodies),
                                 "retracted_by": row["retracted_by"],
                                 "category": "; ".join(str(b.get("category")) for b in bodies),
                                 "correction": "; ".join(str(b["correction"]) for b in bodies
                                                         if b.get("correction")) or None})
    line = next((a["line"] for a in arms if a["role"] == "treatment" and a["line"]),
                next((a["line"] for a in arms if a["line"]), None))
    return {
        "plan": {"digest": plan.digest, "seq": plan.seq, "slug": plan.slug,
                 "title": body.get("title"), "decision": body.get("decision"),
                 "metric": body.get("metric"), "suite": body.get("suite"),
                 "runs_per_arm": body.get("runs_per_arm"), "min_effect": body.get("min_effect"),
                 "alpha": body.get("alpha"), "analysis": body.get("analysis"),
                 "amendments": [{"seq": a.seq, "digest": a.digest,
                                 "changes": a.body.get("changes"),
                                 "reason": a.body.get("reason")} for a in plan.amendments],
                 "retracted": bool(plan.retracted_by)},
        "ledger": {"size": view.size},
        "arms": arms,
        "effects": effects,
        "verdict": verdict,
        "line": line,
        "excluded": excluded,
        "components": components(plan, confidence),
        "retractions": retraction_review(view, plan, verdict),
    }
