"""`logbook compare A B`: a comparison can narrow but never hide.

Before any number it lists what differs between the two sets besides the named variable
(confounds), whether the control is a historical baseline (other sessions), and the runs of the
same plans and sessions that the selectors left out. Which items changed (`--items`) is
logbook.analysis.compare_items.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from logbook.analysis import display
from logbook.analysis.report.arms import SEED
from logbook.analysis.report.effects import PAIRED_RESAMPLES
from logbook.analysis.selectors import select
from logbook.analysis.view import (
    LedgerView,
    RunView,
    is_identity,
    item_mean_arrays,
    paired_arrays,
    same_suite,
    suite_of,
)
from logbook.errors import InputError


@dataclass(frozen=True)
class SelectedRun:
    seq: int
    digest: str
    plan: str | None
    arm: str | None
    status: str
    session: str | None
    score: float | None
    retracted: bool

    @classmethod
    def of(cls, r: RunView) -> SelectedRun:
        return cls(r.seq, r.digest, r.plan, r.arm, r.status, r.session, r.score, r.retracted)


@dataclass(frozen=True)
class Side:
    """One selector's runs (every run it matched) and how many of them count."""

    selector: str
    runs: list[SelectedRun]
    usable: int


@dataclass(frozen=True)
class PairedEffect:
    """B minus A over the items both sides scored (each item averaged over a side's runs)."""

    point: float
    low: float
    high: float
    pvalue: float
    method: str
    n: int
    n_dropped: int
    n_resamples: int
    unshared_items: int


@dataclass(frozen=True)
class Comparison:
    """`logbook compare A B`; ``as_json`` is what `--json` prints."""

    a: Side
    b: Side
    variable: list[str]
    confounds: dict[str, dict[str, list[str]]]
    historical_baseline: bool
    left_out: list[SelectedRun]
    effect: PairedEffect | None
    metric_kind: str | None
    verdict: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _suite_and_metric(view: LedgerView, r: RunView) -> tuple[str, str | None, str | None]:
    """What a run's items are items of: its metric (a plan's alias read as the plan's own
    name), its suite identity (``dataset_hash``) and its task, as far as the run says."""
    metric = str(r.metric)
    plan = view.plans.get(r.plan) if r.plan else None
    if plan is not None:
        named = plan.body.get("metric") or {}
        if metric in [str(a) for a in named.get("aliases") or []]:
            metric = str(named.get("name"))
    suite = r.apparatus.get("dataset_hash")
    task = r.body.get("task")
    return (metric, suite if isinstance(suite, str) else None,
            task if isinstance(task, str) else None)


def _suite_text(s: tuple[str | None, ...]) -> str:
    name = s[1] or (s[0] or "")[:12]
    return repr(name + (f" ({s[2]})" if s[2] else ""))


def check_comparable(view: LedgerView, sides: list[tuple[str, list[RunView]]]) -> None:
    """InputError (exit 2) when the runs whose items would be paired score different metrics,
    or are runs of different suites (``same_suite``: dataset hash, else name and split) or
    tasks: items of two suites or two metrics are never paired. Runs with no outcomes pair
    nothing and are not judged."""
    seen: dict[int, tuple[str, str, RunView]] = {}  # which facet -> (value, side, first run)
    suites: list[tuple[str, RunView, tuple[str | None, ...]]] = []
    for label, runs in sides:
        for r in runs:
            if not (r.body.get("outcomes") or {}).get("id"):
                continue
            for facet, value in enumerate(_suite_and_metric(view, r)):
                if value is None:
                    continue
                first = seen.setdefault(facet, (value, label, r))
                if first[0] != value:
                    what = ("metric", "suite (dataset hash)", "task")[facet]
                    raise InputError(
                        f"{label}: run @{r.seq} has {what} {value!r}, but run @{first[2].seq} "
                        f"of {first[1]} has {first[0]!r}; items of two {what.split()[0]}s are "
                        "never paired (compare runs of one suite and one metric)")
            mine = suite_of(view, r)
            for other_label, other, theirs in suites:
                if same_suite(mine, theirs) is False:
                    raise InputError(
                        f"{label}: run @{r.seq} is of suite {_suite_text(mine)}, but run "
                        f"@{other.seq} of {other_label} is of suite {_suite_text(theirs)}; "
                        "items of two suites are never paired (compare runs of one suite and "
                        "one metric)")
            if mine not in [t for _, _, t in suites]:
                suites.append((label, r, mine))


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
            confidence: float = 0.95) -> Comparison:
    runs_a, runs_b = select(view, sel_a), select(view, sel_b)
    for field in variable:
        if not any(field in r.apparatus for r in runs_a + runs_b):
            raise InputError(f"--variable {field}: no selected run has that apparatus field "
                             "(dotted names, as `logbook show` prints them)")
    use_a = [r for r in runs_a if r.usable]
    use_b = [r for r in runs_b if r.usable]
    check_comparable(view, [(f"A ({sel_a})", use_a), (f"B ({sel_b})", use_b)])
    chosen = {r.digest for r in runs_a + runs_b}
    plans = {r.plan for r in runs_a + runs_b if r.plan}
    sessions = {r.session for r in runs_a + runs_b if r.session}
    left_out = [r for r in view.runs if r.digest not in chosen
                and ((r.plan and r.plan in plans) or (r.session and r.session in sessions))]
    sess_a = {r.session for r in use_a}
    sess_b = {r.session for r in use_b}
    historical = bool(use_a and use_b and not (sess_a & sess_b))
    effect, verdict = paired_effect(use_a, use_b, confidence)
    return Comparison(
        a=Side(sel_a, [SelectedRun.of(r) for r in runs_a], len(use_a)),
        b=Side(sel_b, [SelectedRun.of(r) for r in runs_b], len(use_b)),
        variable=variable, confounds=confounds(use_a, use_b, variable),
        historical_baseline=historical, left_out=[SelectedRun.of(r) for r in left_out],
        effect=effect, metric_kind=shared_metric_kind(view, plans), verdict=verdict)


def paired_effect(use_a: list[RunView], use_b: list[RunView],
            confidence: float) -> tuple[PairedEffect | None, str]:
    """The paired effect of B over A and the verdict it gives (or why there is none)."""
    from logbook import stats
    from logbook.stats.items import complete

    if not use_a or not use_b:
        return None, "no completed, unretracted runs on one side"
    _ids, a, b = paired_arrays(use_a, use_b)
    if int(complete(a, b).sum()) < 2:
        return None, "the two sets share fewer than two scored items"
    unshared = len(set(item_mean_arrays(use_a)[0]) ^ set(item_mean_arrays(use_b)[0]))
    # already on one id axis: pairing by position is pairing by id
    est = stats.paired(a, b, method="bootstrap", confidence=confidence, seed=SEED,
                       n_resamples=PAIRED_RESAMPLES)
    eff = PairedEffect(est.point, est.low, est.high, est.pvalue, est.method, est.n,
                       est.n_dropped, PAIRED_RESAMPLES, unshared)
    if est.low <= 0 <= est.high:
        return eff, "indistinguishable: the difference is smaller than its own interval"
    return eff, "b is higher" if est.point > 0 else "b is lower"


def shared_metric_kind(view: LedgerView, plans: set[str]) -> str | None:
    """The metric kind both sides share (None when the runs' plans disagree or there are
    none): it sets the display scale."""
    kinds = {(view.plans[p].body.get("metric") or {}).get("kind") for p in plans
             if p in view.plans}
    return kinds.pop() if len(kinds) == 1 else None


def compare_lines(res: Comparison) -> list[str]:
    out = [f"A = {res.a.selector}: {len(res.a.runs)} runs ({res.a.usable} usable)",
           f"B = {res.b.selector}: {len(res.b.runs)} runs ({res.b.usable} usable)"]
    if res.confounds:
        out.append("CONFOUNDS (differ besides " + (", ".join(res.variable) or "nothing named")
                   + "):")
        for k, v in res.confounds.items():
            out.append(f"  {k}: A {', '.join(v['a'])} | B {', '.join(v['b'])}")
    if res.historical_baseline:
        out.append("HISTORICAL BASELINE: A and B come from different sessions; this is not a "
                   "controlled comparison")
    if res.left_out:
        out.append(f"left out by the selectors ({len(res.left_out)} runs of the same plans "
                   "and sessions):")
        for r in res.left_out:
            out.append(f"  @{r.seq} {r.digest[:12]} arm={r.arm} {r.status}"
                       f"{' retracted' if r.retracted else ''}")
    e = res.effect
    if e:
        scale = display.scale_of(res.metric_kind)
        unit = display.unit_of(res.metric_kind)
        out.append(f"effect B − A{unit}: {e.point * scale:+.2f} ({e.low * scale:+.2f} "
                   f"to {e.high * scale:+.2f}, {e.method}, "
                   f"{display.pvalue(e.pvalue, e.n_resamples)}), n={e.n} shared "
                   f"items, {e.n_dropped} dropped")
    out.append(f"verdict: {res.verdict}")
    return out
