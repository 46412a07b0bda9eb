"""`logbook compare A B`: a comparison can narrow but never hide.

Before any number it lists what differs between the two sets besides the named variable
(confounds), whether the control is a historical baseline (other sessions), and the runs of the
same plans and sessions that the selectors left out.
"""

from __future__ import annotations

from typing import Any

from logbook.analysis import display
from logbook.analysis.report.arms import SEED
from logbook.analysis.report.effects import PAIRED_RESAMPLES
from logbook.analysis.selectors import select
from logbook.analysis.view import LedgerView, RunView, is_identity, item_mean_arrays, paired_arrays
from logbook.errors import InputError


def confounds(a: list[RunView], b: list[RunView], variable: list[str]) -> dict[str, Any]:
    """Fields whose set of values differs between the two sets (identity fields excluded)."""
    keys = set().union(*(r.apparatus for r in a + b)) if a or b else set()
    out = {}
    for k in sorted(keys):
        if is_identity(k) or k in variable:
            continue
        va = {repr(r.apparatus.get(k)) for r in a}
        vb = {repr(r.apparatus.get(k)) for r in b}
        if va != vb:
            out[k] = {"a": sorted(va), "b": sorted(vb)}
    return out


def compare(view: LedgerView, sel_a: str, sel_b: str, variable: list[str],
            confidence: float = 0.95) -> dict[str, Any]:
    from logbook import stats
    from logbook.stats.items import complete

    runs_a, runs_b = select(view, sel_a), select(view, sel_b)
    for field in variable:
        if not any(field in r.apparatus for r in runs_a + runs_b):
            raise InputError(f"--variable {field}: no selected run has that apparatus field "
                             "(dotted names, as `logbook show` prints them)")
    use_a = [r for r in runs_a if r.usable]
    use_b = [r for r in runs_b if r.usable]
    chosen = {r.digest for r in runs_a + runs_b}
    plans = {r.plan for r in runs_a + runs_b if r.plan}
    sessions = {r.session for r in runs_a + runs_b if r.session}
    left_out = [r for r in view.runs if r.digest not in chosen
                and ((r.plan and r.plan in plans) or (r.session and r.session in sessions))]
    sess_a = {r.session for r in use_a}
    sess_b = {r.session for r in use_b}
    historical = bool(use_a and use_b and not (sess_a & sess_b))
    out: dict[str, Any] = {
        "a": {"selector": sel_a, "runs": [_row(r) for r in runs_a], "usable": len(use_a)},
        "b": {"selector": sel_b, "runs": [_row(r) for r in runs_b], "usable": len(use_b)},
        "variable": variable,
        "confounds": confounds(use_a, use_b, variable),
        "historical_baseline": historical,
        "left_out": [_row(r) for r in left_out],
        "effect": None,
        "metric_kind": _metric_kind(view, plans),
    }
    if not use_a or not use_b:
        out["verdict"] = "no completed, unretracted runs on one side"
        return out
    _ids, a, b = paired_arrays(use_a, use_b)
    n_complete = int(complete(a, b).sum())
    unshared = len(set(item_mean_arrays(use_a)[0]) ^ set(item_mean_arrays(use_b)[0]))
    if n_complete >= 2:
        # already on one id axis: pairing by position is pairing by id
        est = stats.paired(a, b, method="bootstrap", confidence=confidence, seed=SEED,
                           n_resamples=PAIRED_RESAMPLES)
        out["effect"] = {"point": est.point, "low": est.low, "high": est.high,
                         "pvalue": est.pvalue, "method": est.method, "n": est.n,
                         "n_dropped": est.n_dropped, "n_resamples": PAIRED_RESAMPLES,
                         "unshared_items": unshared}
        indist = est.low <= 0 <= est.high
        out["verdict"] = ("indistinguishable: the difference is smaller than its own interval"
                          if indist else ("b is higher" if est.point > 0 else "b is lower"))
    else:
        out["verdict"] = "the two sets share fewer than two scored items"
    return out


def _metric_kind(view: LedgerView, plans: set[str]) -> str | None:
    """The metric kind both sides share (None when the runs' plans disagree or there are
    none): it sets the display scale."""
    kinds = {(view.plans[p].body.get("metric") or {}).get("kind") for p in plans
             if p in view.plans}
    return kinds.pop() if len(kinds) == 1 else None


def _row(r: RunView) -> dict[str, Any]:
    return {"seq": r.seq, "digest": r.digest, "plan": r.plan, "arm": r.arm,
            "status": r.status, "session": r.session, "score": r.score,
            "retracted": r.retracted}


def compare_lines(res: dict[str, Any]) -> list[str]:
    out = [f"A = {res['a']['selector']}: {len(res['a']['runs'])} runs "
           f"({res['a']['usable']} usable)",
           f"B = {res['b']['selector']}: {len(res['b']['runs'])} runs "
           f"({res['b']['usable']} usable)"]
    if res["confounds"]:
        out.append("CONFOUNDS (differ besides " + (", ".join(res["variable"]) or "nothing named")
                   + "):")
        for k, v in res["confounds"].items():
            out.append(f"  {k}: A {', '.join(v['a'])} | B {', '.join(v['b'])}")
    if res["historical_baseline"]:
        out.append("HISTORICAL BASELINE: A and B come from different sessions; this is not a "
                   "controlled comparison")
    if res["left_out"]:
        out.append(f"left out by the selectors ({len(res['left_out'])} runs of the same plans "
                   "and sessions):")
        for r in res["left_out"]:
            out.append(f"  @{r['seq']} {r['digest'][:12]} arm={r['arm']} {r['status']}"
                       f"{' retracted' if r['retracted'] else ''}")
    e = res["effect"]
    if e:
        scale = display.scale_of(res.get("metric_kind"))
        unit = display.unit_of(res.get("metric_kind"))
        out.append(f"effect B − A{unit}: {e['point'] * scale:+.2f} ({e['low'] * scale:+.2f} "
                   f"to {e['high'] * scale:+.2f}, {e['method']}, "
                   f"{display.pvalue(e['pvalue'], e.get('n_resamples'))}), n={e['n']} shared "
                   f"items, {e['n_dropped']} dropped")
    out.append(f"verdict: {res['verdict']}")
    return out
