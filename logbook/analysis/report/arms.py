"""One arm of a plan: each run's row, the run-level and item-level intervals, the reporting
line, and the spreads beside them. The figures come from `logbook.stats`; this module picks
the runs and says which interval the line uses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from logbook.analysis.arm_shapes import (
    ArmBand,
    ArmReport,
    ChosenInterval,
    Interval,
    ItemLevel,
    RunLevel,
    RunRow,
    SampleComponents,
    Spread,
)
from logbook.analysis.report.sources import spread_sources, variant_spread
from logbook.analysis.view import PlanView, RunView, is_identity, item_mean_arrays
from logbook.format.apparatus import VARIANT
from logbook.format.metrics import BOUNDED_KINDS

if TYPE_CHECKING:
    from logbook.stats import Estimate

SEED = 0  # explicit: the same ledger gives the same report
ITEM_RESAMPLES = 2000  # the item-level bootstrap's resamples

ItemMeans = tuple[list[str], Any, dict[str, str]]


class ArmMeans:
    """Each set of runs' item means (view.item_mean_arrays), computed once per report: an
    arm's item-level interval and each effect it takes part in read the same arrays."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, ...], ItemMeans] = {}

    def of(self, runs: list[RunView]) -> ItemMeans:
        key = tuple(r.digest for r in runs)
        kept = self._kept.get(key)
        if kept is None:
            kept = self._kept[key] = item_mean_arrays(runs)
        return kept


def _interval(values: Any, kind: str, confidence: float,
              clusters: list[str] | None) -> Estimate | None:
    from logbook.stats.items import item_interval

    return item_interval(values, kind == "proportion", confidence, clusters, ITEM_RESAMPLES,
                         SEED)


def run_interval(run: RunView, kind: str, confidence: float,
                 cluster_field: str | None) -> Interval | None:
    """A run's item-level interval: Wilson for a binary proportion, BCa bootstrap otherwise,
    the cluster bootstrap when the suite names a cluster field."""
    import numpy as np

    ids, values = run.item_arrays
    keep = ~np.isnan(values)
    clusters = None
    if cluster_field and run.clusters:
        clusters = [run.clusters.get(i, f"_item:{i}") for i, k in zip(ids, keep.tolist(),
                                                                       strict=True) if k]
    est = _interval(values[keep], kind, confidence, clusters)
    if est is None:
        return None
    return Interval(point=est.point, low=est.low, high=est.high,
                                    method=est.method, n=est.n)


def arm_item_level(runs: list[RunView], kind: str, confidence: float,
                   cluster_field: str | None, means_of: ArmMeans | None = None
                   ) -> ItemLevel | None:
    """Interval over items, each item averaged over the arm's usable runs."""
    import numpy as np

    ids, means, clusters = (means_of or ArmMeans()).of(runs)
    keep = ~np.isnan(means)
    if int(keep.sum()) < 2:
        return None
    cl = None
    if cluster_field and clusters:
        cl = [clusters.get(i, f"_item:{i}") for i, k in zip(ids, keep.tolist(), strict=True)
              if k]
        if len(set(cl)) < 2:
            cl = None
    est = _interval(means[keep], kind, confidence, cl)
    if est is None:
        return None
    iv: dict[str, Any] = {"point": est.point, "low": est.low, "high": est.high,
                          "method": est.method, "n": est.n}
    if cl is not None:
        from logbook import stats

        deff = stats.clustered_se(means[keep], cl)
        iv.update(clusters=deff.n_clusters, design_effect=deff.design_effect)
    return ItemLevel(**iv)


def run_level(runs: list[RunView], confidence: float, kind: str = "mean") -> RunLevel | None:
    """Mean over runs with its interval: the t-interval, or for a proportion or pass@k the
    t-interval on the runs' logits (stats.logit_t_interval), which stays inside [0, 1]."""
    from logbook.stats.items import run_mean

    scores = [float(r.score) for r in runs if r.score is not None]
    if len(scores) < 2:
        return None
    est = run_mean(scores, confidence, kind in BOUNDED_KINDS)
    return RunLevel(mean=est.point, sd=est.sd, low=est.low, high=est.high,
                                    method=est.method, k=len(scores))


def differing_fields(runs: list[RunView], variant: str | None = None) -> dict[str, list[Any]]:
    """Apparatus fields whose value differs between runs (per-run identity excluded, and the
    field naming the plan's declared prompt variants)."""
    keys = set().union(*(r.apparatus.keys() for r in runs)) if runs else set()
    out = {}
    for k in sorted(keys):
        if is_identity(k) or k == variant:
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
    gpu = a.get("hardware.gpu") or _captured_gpus(a.get("captured.gpus"))
    hw = gpu or a.get("placement") or a.get("hardware.name")
    if hw:
        parts.append(str(hw))
    requested = a.get("placement.requested")  # asked for, not found: only beside a GPU it has
    if requested and gpu:
        parts.append(f"{requested} requested")
    return ", ".join(parts)


def _captured_gpus(listed: Any) -> str | None:
    """The GPUs logbook found on the machine (``captured.gpus``, flattened to JSON text)."""
    try:
        gpus = orjson.loads(listed) if isinstance(listed, str) else None
    except orjson.JSONDecodeError:
        return None
    names = [g.get("name") for g in gpus if isinstance(g, dict)] if isinstance(gpus, list) \
        else []
    counts = Counter(n for n in names if isinstance(n, str) and n)
    return "; ".join(f"{k} x {n}" for n, k in counts.items()) or None


def reporting_line(point: float, chosen: RunLevel | ItemLevel, label: str, k: int,
                   n: int | None, runs: list[RunView], scale: float) -> str:
    from logbook import stats

    f = stats.format_estimate(point, chosen.low, chosen.high, scale=scale)
    sep = " to " if f.low.startswith("-") or f.high.startswith("-") else "–"
    bits = [f"{f.point}, {label} {f.low}{sep}{f.high} over {k} run{'s' if k != 1 else ''}"]
    if n:
        bits.append(f"n={n}")
    app = describe_apparatus(runs)
    if app:
        bits.append(app)
    return ", ".join(bits)


def _run_row(r: RunView, kind: str, n_items: int | None, confidence: float,
             cluster_field: str | None) -> RunRow:
    m, total = r.missing(n_items)
    return RunRow(
        seq=r.seq, digest=r.digest, status=r.status, session=r.session, score=r.score,
        missing=m, missing_rate=(m / total) if total else None, retracted=r.retracted,
        retracted_by=[e.digest for e in r.retracted_by], reason=r.body.get("reason"),
        interval=(run_interval(r, kind, confidence, cluster_field)
                  if r.status == "completed" else None),
        admitted_by=r.admitted.digest if r.admitted is not None else None)


def arm_report(plan: PlanView, arm: dict[str, Any], confidence: float,
               band: Callable[[list[RunView]], dict[str, Any] | None] | None = None,
               means_of: ArmMeans | None = None) -> ArmReport:
    body = plan.body
    kind = body["metric"]["kind"]
    n_items = body["suite"].get("n_items")
    cluster_field = body["suite"].get("cluster_field")
    scale = 100.0 if kind in BOUNDED_KINDS else 1.0
    runs = plan.arm_runs(arm["name"])
    usable = [r for r in runs if r.usable]
    variant = VARIANT if body.get("variants") else None
    rows = [_run_row(r, kind, n_items, confidence, cluster_field) for r in runs]
    rl = run_level(usable, confidence, kind)
    il = arm_item_level(usable, kind, confidence, cluster_field, means_of)
    wider: str | None = None
    chosen: RunLevel | ItemLevel | None = None
    label = ""
    if rl and il:
        wider = "run_level" if rl.high - rl.low >= il.high - il.low else "item_level"
    elif rl or il:
        wider = "run_level" if rl else "item_level"
    if wider:
        chosen = rl if wider == "run_level" else il
        label = "run-level" if wider == "run_level" else "item-level"
    point = rl.mean if rl else (il.point if il else None)
    line = None
    if chosen is not None and point is not None:
        line = reporting_line(point, chosen, label, len(usable), n_items, usable, scale)
    measured = band(usable) if band is not None and usable else None
    return ArmReport(
        name=arm["name"], role=arm["role"], expected=arm.get("expected"),
        tolerance=arm.get("tolerance"), planned_runs=body["runs_per_arm"],
        completed=len(usable), failed=sum(1 for r in runs if r.status == "failed"),
        aborted=sum(1 for r in runs if r.status == "aborted"),
        retracted=sum(1 for r in runs if r.retracted),
        runs=rows, run_level=rl, item_level=il, wider=wider, mean=point,
        interval=None if chosen is None else
        ChosenInterval(low=chosen.low, high=chosen.high, kind=label),
        differing_apparatus=differing_fields(usable, variant),
        band=None if measured is None else ArmBand(**measured),
        samples=sample_components(usable),
        spread=(spread := spread_over_runs(usable, rl, bool(body.get("total_spread")))),
        sources=spread_sources(usable, spread.items if spread is not None else None),
        variants=variant_spread(usable, list(body.get("variants") or [])),
        line=line)


def sample_components(runs: list[RunView]) -> SampleComponents | None:
    """Items scored several times (the `sample` column): the between-item and within-item
    variance of single scores (stats.variance_components, over the arm's runs' samples)."""
    from logbook.stats.items import repeated_components

    ids: list[str] = []
    scores: list[float] = []
    from logbook.format.reducers import MEAN, reducer_of

    if any(r.pass_k for r in runs):
        return None  # components of single samples are not those of the pass@k figure
    for r in runs:
        oc = r.body.get("outcomes") or {}
        if not oc.get("sample"):
            continue
        if reducer_of(oc) != MEAN:
            return None  # nor of a figure over items reduced otherwise than by their mean
        for i, s in zip(oc.get("id") or [], oc.get("score") or [], strict=False):
            if s is not None:
                ids.append(i)
                scores.append(float(s))
    vc = repeated_components(ids, scores) if scores else None
    if vc is None:
        return None
    return SampleComponents(k=vc.k_mean, n_items=vc.n_items, between=vc.between,
                                            within=vc.within, se_mean=vc.se_mean,
                                            dominant=vc.dominant)


def spread_over_runs(runs: list[RunView], rl: RunLevel | None, total: bool) -> Spread | None:
    """Seed (run-to-run) spread beside item spread (the finite suite: each run's item-level
    standard error, root mean square over runs), and with ``total`` their sum in quadrature,
    the spread of a single run on a fresh sample of items (003)."""
    from logbook.stats.items import finite_suite_sd, quadrature

    if rl is None:
        return None
    items = finite_suite_sd([r.item_arrays[1] for r in runs])
    if items is None:
        return None
    seeds = float(rl.sd)
    return Spread(seeds=seeds, items=items,
                                  total=quadrature(seeds, items) if total else None)
