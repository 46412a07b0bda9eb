"""The audit's rules about what a plan's runs record: A08 (missing data), A19 (a score
without the system that made it) and A28 (a scorer changed mid-plan). Thresholds and the
reasons behind them: docs/audit.md.

A08's comparison of the arms' missing items treats each run's missing rate as one
observation (Welch's t-test over runs), not every item as independent: missingness varies from
run to run (an endpoint flaky one day), and items pooled over runs would call that difference
between arms. Items missing from every run of one arm and from no run of the other are counted
apart: under missingness that strikes items independently in each run they are rare
(Poisson, mean n x the product of the runs' rates), so more of them than chance allows means
an arm that leaves out the same items: it chose its suite.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from logbook.analysis.audit.context import Context, at, identity, missing
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import PlanView, RunView
from logbook.findings import Finding
from logbook.stats.significance import poisson_upper, two_proportion_p, welch_p

A08_P = 0.05      # A08: two-proportion test of missing items between the arms (one run each)
A08_P_RUNS = 0.01  # A08: Welch's test of the runs' missing rates between the arms
A08_P_SAME = 1e-4  # A08: items missing from every run of one arm and none of the other
EPS = 1e-9


@rule("A08", severity="warning", title="missing data",
      finds="a plan's run misses more items than the plan allows, or a claim's missing items "
      "cluster on one arm")
def missing_data(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():  # a run over the limit: a finding before any claim
        body = ctx.body(plan)
        limit = float(body.get("max_missing_rate", 0.02))
        n_items = int((body.get("suite") or {}).get("n_items") or 0)
        for r in ctx.usable(plan.runs):
            m, n = missing(r, n_items)
            if n and m / n > limit + EPS:
                yield Finding("A08", "warning", f"plan {plan.slug}: run @{r.seq} ({r.arm}) "
                              f"misses {m / n:.1%} of the suite's items, more than the plan's "
                              f"limit of {limit:.1%}: re-measure it, or report the worst case",
                              r.seq, [plan.digest, r.digest])
    for plan in ctx.scoped_plans():  # the same items left out by one arm
        yield from same_items_missing(ctx, plan)
    for c, plan in ctx.planned_claims():  # an effect whose missing items favour one arm
        body = ctx.body(plan)
        limit = float(body.get("max_missing_rate", 0.02))
        n_items = int((body.get("suite") or {}).get("n_items") or 0)
        cited = [r for r in map(ctx.view.runs_by_digest.get, c.cited) if r and r.usable]
        if c.figure != "effect" or len(c.arms) != 2:
            continue
        miss = {r.digest: missing(r, n_items) for r in cited}
        rates = [[miss[r.digest][0] / miss[r.digest][1] for r in cited
                  if r.arm == arm and miss[r.digest][1]] for arm in c.arms]
        (m0, n0), (m1, n1) = ([sum(miss[r.digest][i] for r in cited if r.arm == arm)
                               for i in (0, 1)] for arm in c.arms)
        if not n0 or not n1:
            continue
        p = welch_p(rates[0], rates[1])
        bar = A08_P_RUNS
        if p is None:  # one run on a side: nothing to measure run-to-run variation with
            p, bar = two_proportion_p(m0, n0, m1, n1), A08_P
        if p is not None and p < bar and abs(m0 / n0 - m1 / n1) > limit / 2:
            heavy = c.arms[0] if m0 / n0 > m1 / n1 else c.arms[1]
            yield Finding("A08", "warning", f"claim @{c.seq}: its missing items cluster on "
                          f"{heavy} ({m0 / n0:.1%} of {c.arms[0]} vs {m1 / n1:.1%} of "
                          f"{c.arms[1]}, p={p:.2g} from the runs' rates)", c.seq,
                          c.evidence())


def same_items_missing(ctx: Context, plan: PlanView) -> Iterator[Finding]:
    """Items missing (unscored or left out) from every run of one arm and from no run of the
    other, beyond what independent missingness gives by chance."""
    arms = [a["name"] for a in plan.arms()]
    runs = {a: ctx.usable(plan.runs, a) for a in arms}
    if not _may_share_gaps(runs):
        return
    listed = {r.digest: r.item_scores for rs in runs.values() for r in rs}
    scored = {d: {i for i, v in x.items() if v is not None} for d, x in listed.items()}
    universe = set().union(*(set(x) for x in listed.values()))
    if not universe:
        return
    n = len(universe)
    for arm in arms:
        mine = runs[arm]
        others = [r for a in arms if a != arm for r in runs[a]]
        if len(mine) < 2 or len(others) < 2:
            continue
        gone = set.intersection(*(universe - scored[r.digest] for r in mine))
        gone -= set().union(*(universe - scored[r.digest] for r in others))
        if len(gone) < 2:
            continue
        expected = float(n)
        for r in mine:
            expected *= (n - len(scored[r.digest])) / n
        for r in others:
            expected *= len(scored[r.digest]) / n
        p = poisson_upper(len(gone), expected)
        if p < A08_P_SAME:
            shown = ", ".join(sorted(gone)[:5]) + (" and more" if len(gone) > 5 else "")
            yield Finding("A08", "warning", f"plan {plan.slug}: {len(gone)} items ({shown}) "
                          f"are missing from every run of {arm} and from no run of the other "
                          f"arm(s), where independent missingness gives {expected:.2g} "
                          f"(p={p:.2g}): the arm left out the same items, so its figure is of "
                          "another suite", plan.seq,
                          [plan.digest, *(r.digest for r in mine)])


def _may_share_gaps(runs: dict[str, list[RunView]]) -> bool:
    """False when no arm can have 2 items missing from all its runs and none of the others':
    told from the runs' facts (logbook.format.runfacts) when they are binary runs listing the
    same ids, without reading them; True otherwise (the runs' items then tell)."""
    every = [r for rs in runs.values() for r in rs]
    facts = [r.facts for r in every if r.facts is not None and not r.pass_k]
    masks = [f.masks for f in facts if f.masks is not None]
    if not every or len(masks) != len(every) or len({f.items for f in facts}) != 1:
        return bool(every)
    full = (1 << facts[0].scores) - 1
    gaps = {r.digest: full & ~m[0] for r, m in zip(every, masks, strict=True)}
    for arm, mine in runs.items():
        others = [r for a, rs in runs.items() if a != arm for r in rs]
        if len(mine) < 2 or len(others) < 2:
            continue
        gone = full
        for r in mine:
            gone &= gaps[r.digest]
        for r in others:
            gone &= ~gaps[r.digest]
        if gone.bit_count() >= 2:
            return True
    return False


@rule("A19", severity="warning", title="score without its system",
      finds="a completed run of a plan names no model or no decoding policy in its apparatus")
def system_unsaid(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        for r in plan.runs:
            gaps = r.gaps if not ctx.retracted(r.digest) else []
            if gaps:
                yield Finding("A19", "warning", f"plan {plan.slug}: run @{r.seq} ({r.arm}) "
                              f"names no {' and no '.join(gaps)} in its apparatus: its score "
                              "travels without the system that made it", r.seq, [r.digest])


# A28: apparatus fields that name what scored the runs
SCORER_PARTS = ("judge", "grader", "scorer", "judge_model", "grader_model", "scorer_version",
                "rubric", "rubric_hash")


def scorer_fields(run: RunView) -> dict[str, str]:
    """The run's scorer fields (not its identity: Context.apparatus), each as `repr` text."""
    return {k: repr(v) for k, v in run.apparatus.items() if _is_scorer(k) and not identity(k)}


@lru_cache(maxsize=4096)
def _is_scorer(name: str) -> bool:  # runs share their field names: each is judged once
    return name.startswith("evaluator.") or name.rsplit(".", 1)[-1].lower() in SCORER_PARTS


@rule("A28", severity="error", title="scorer changed mid-plan",
      finds="the runs of one plan were scored by more than one judge, grader or scorer "
      "(an evaluator.* field, or a judge/grader/scorer field, takes two values)")
def scorer_changed(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        variable = set(ctx.body(plan).get("variable") or [])
        runs = ctx.usable(plan.runs)
        fields = [scorer_fields(r) for r in runs]
        seen: dict[str, dict[str, list[RunView]]] = {}
        for k in sorted(set().union(*fields)) if fields else []:
            for r, f in zip(runs, fields, strict=True):
                seen.setdefault(k, {}).setdefault(f.get(k, "(none)"), []).append(r)
        for field, values in sorted(seen.items()):
            if len(values) < 2 or field in variable:
                continue
            shown = "; ".join(f"{v} in {at(rs[:3])}{' and more' if len(rs) > 3 else ''}"
                              for v, rs in values.items())
            yield Finding("A28", "error", f"plan {plan.slug}'s runs were scored under more than "
                          f"one {field} ({shown}): a score is the model and its scorer, and "
                          "a plan that changes the scorer midway compares two instruments; "
                          "re-score every run with one, or plan the scorer as the variable",
                          plan.seq, [plan.digest, *(rs[0].digest for rs in values.values())])
