"""The audit's rules, one small function each over a read-only `Context`: A01-A17 and A19
here, but for the two about run-to-run agreement (A12, A18), which are in `audit_bands`.

A rule yields `Finding(rule id, severity, one sentence, seq of the entry it is about, digests
that prove it)`. Thresholds and the reasons behind them: docs/audit.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from logbook.analysis.audit import (
    Claim,
    Context,
    at,
    comparisons,
    interval_p,
    mean_sd,
    missing,
    scale_of,
    short,
    two_proportion_p,
)
from logbook.analysis.view import PlanView, RunView, suite_key
from logbook.findings import Finding

# A05: what an amendment may not change once a plan's runs have begun.
GOALPOSTS = ("metric", "success", "failure", "min_effect", "alpha", "analysis", "exclusions",
             "max_missing_rate", "suite", "pinned")
# A10: a statement that says runs failed "mentions" them.
FAILURE_WORDS = re.compile(r"\b(fail(ed|s|ure|ures)?|abort(ed|s)?|crash(ed|es)?)\b", re.I)
A08_P = 0.05      # A08: two-proportion test of missing items between the arms
A15_SE = 3.0      # A15: standard errors of the arm mean when the arm sets no tolerance
EPS = 1e-9


def a01_unreported_runs(ctx: Context) -> Iterator[Finding]:
    for c, plan in ctx.planned_claims():
        held = [r for r in plan.runs if r.usable and r.arm in c.arms and r.seq < c.seq]
        left = [r for r in held if r.digest not in set(c.cited)]
        if left:
            arms = " vs ".join(c.arms)
            yield Finding("A01", "error", f"claim @{c.seq} rests on {len(held) - len(left)} of "
                          f"the {len(held)} completed runs that plan {plan.slug} held for "
                          f"{arms} when it was made; it leaves out {at(left)}",
                          c.seq, c.evidence(*(r.digest for r in left)))


def a03_plan_after_data(ctx: Context) -> Iterator[Finding]:
    calibration = band_runs(ctx)  # runs a band was measured from calibrate, not explore
    explored = [r for r in ctx.view.runs if r.plan is None and r.usable
                and r.digest not in calibration]
    for plan in ctx.scoped_plans() if explored else []:
        arms = [shared_apparatus(ctx, plan.arm_runs(a["name"])) for a in plan.arms()]
        variable = set(ctx.body(plan).get("variable") or [])
        found = [r for r in explored if r.seq < plan.seq and same_suite(plan, r)
                 and any(agrees(ctx.apparatus(r), app, variable) for app in arms)]
        if found:
            yield Finding("A03", "warning", f"plan {plan.slug} @{plan.seq} was appended after "
                          f"{len(found)} exploratory run(s) on its suite with the apparatus of "
                          f"its arms ({at(found)}): it may have been written after seeing them",
                          plan.seq, [plan.digest, *(r.digest for r in found)])


def band_runs(ctx: Context) -> set[str]:
    """Digests of the runs that standing bands were measured from."""
    return {d for b in ctx.view.entries_of("band") if not ctx.retracted(b.digest)
            for d in b.body.get("runs") or []}


def calibration_plan(ctx: Context, plan: PlanView, calibration: set[str]) -> bool:
    """A plan with no treatment arm whose completed runs were all measured into a band: it
    calibrates a pipeline, it compares nothing."""
    if any(a.get("role") == "treatment" for a in plan.arms()):
        return False
    done = ctx.usable(plan.runs)
    return bool(done) and all(r.digest in calibration for r in done)


def shared_apparatus(ctx: Context, runs: list[RunView]) -> dict[str, Any]:
    """The non-identity apparatus fields every one of `runs` has with the same value."""
    apps = [ctx.apparatus(r) for r in runs]
    return {k: v for k, v in (apps[0] if apps else {}).items()
            if all(k in a and a[k] == v for a in apps[1:])}


def agrees(found: dict[str, Any], arm: dict[str, Any], variable: set[str]) -> bool:
    """Same values on every field both record, and those fields cover the plan's variable."""
    shared = set(found) & set(arm)
    return bool(shared) and variable <= shared and all(found[k] == arm[k] for k in shared)


def same_suite(plan: PlanView, run: RunView) -> bool:
    """The run's dataset (or item-ids) hash is the plan's or its runs'; else the same items."""
    def hash_of(r: RunView) -> Any:
        return r.apparatus.get("dataset_hash") or r.apparatus.get("item_ids_hash")

    hashes = {(plan.original.get("suite") or {}).get("dataset_hash")} | set(map(hash_of,
                                                                              plan.runs))
    hashes.discard(None)
    if hash_of(run) and hashes:
        return hash_of(run) in hashes
    done = [r for r in plan.runs if r.status == "completed"]
    return bool(done) and set(run.item_scores) == set(done[0].item_scores)


def a04_optional_stopping(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        cut = next((c.seq for c in ctx.claims if c.plan is plan), None)  # later runs: not A04
        planned = int(ctx.body(plan).get("runs_per_arm") or 0)
        for arm in [a["name"] for a in plan.arms()]:
            runs = [r for r in plan.arm_runs(arm) if r.usable and (cut is None or r.seq < cut)]
            if planned and len(runs) > planned:
                extra = runs[planned:]
                yield Finding("A04", "error", f"arm {arm} of plan {plan.slug} has {len(runs)} "
                              f"completed runs, more than the {planned} the plan set "
                              f"({at(extra)} came after)", extra[0].seq,
                              [plan.digest, *(r.digest for r in extra)])
        for a in ctx.amendments(plan) if plan.runs else []:
            new = (a.body.get("changes") or {}).get("runs_per_arm")
            old = ctx.body(plan, before=a.seq).get("runs_per_arm")
            first = plan.runs[0]
            if a.seq > first.seq and new is not None and new != old:
                yield Finding("A04", "error", f"amendment @{a.seq} "
                              f"{'raised' if new > old else 'lowered'} the runs per arm of "
                              f"plan {plan.slug} from {old} to {new} after its runs began "
                              f"(@{first.seq})", a.seq, [a.digest, plan.digest, first.digest])


def a05_goalposts_moved(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        for a in ctx.amendments(plan) if plan.runs else []:
            first, old = plan.runs[0], ctx.body(plan, before=a.seq)
            changes = a.body.get("changes") or {}
            moved = [k for k in GOALPOSTS if k in changes and changes[k] != old.get(k)]
            pins = {a.get("name"): a.get("apparatus") or {} for a in old.get("arms") or []}
            if "arms" in changes and any((arm.get("apparatus") or {}) != pins.get(arm.get(
                    "name"), {}) for arm in changes["arms"] if isinstance(arm, dict)):
                moved.append("arms' pinned apparatus")
            if moved and a.seq > first.seq:
                yield Finding("A05", "error", f"amendment @{a.seq} changed {', '.join(moved)} "
                              f"of plan {plan.slug} after its first run @{first.seq}: the "
                              "goalposts moved once data had come in", a.seq,
                              [a.digest, plan.digest, first.digest])


def a06_confound(ctx: Context) -> Iterator[Finding]:
    from logbook.analysis.confounds import confounds, table

    for plan in ctx.scoped_plans():
        variable = list(ctx.body(plan).get("variable") or [])
        for control, treatment in comparisons(plan):
            ctl, trt = ctx.usable(plan.runs, control), ctx.usable(plan.runs, treatment)
            if not (control and ctl and trt):
                continue
            found = confounds(ctl, trt, variable, (control, treatment))
            if found:
                yield Finding("A06", "warning", f"plan {plan.slug}: {control} and {treatment} "
                              f"runs differ besides the declared variable "
                              f"({', '.join(variable) or 'none'}) in "
                              f"{len(found.differ)} field(s):\n" + table(found, (control,
                                                                               treatment)),
                              plan.seq, [plan.digest, ctl[0].digest, trt[0].digest])


def a07_historical_baseline(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        for control, treatment in comparisons(plan):
            ctl, trt = ctx.usable(plan.runs, control), ctx.usable(plan.runs, treatment)
            if control is None or not ctl or not trt:
                continue
            cs, ts = {r.session for r in ctl}, {r.session for r in trt}
            why = []
            if None not in cs and None not in ts and not cs & ts:
                why.append(f"its {control} runs come from session(s) "
                           f"{', '.join(sorted(map(str, cs)))} and its {treatment} runs from "
                           f"{', '.join(sorted(map(str, ts)))}")
            for a, ra, b, rb in ((control, ctl, treatment, trt), (treatment, trt, control, ctl)):
                if len(ra) >= 2 and len(rb) >= 2 and ra[-1].seq < rb[0].seq:
                    why.append(f"all its {a} runs ({at(ra)}) were appended before the first "
                               f"{b} run @{rb[0].seq}, not interleaved")
            if why:
                yield Finding("A07", "warning", f"plan {plan.slug}: " + "; ".join(why) +
                              ": a historical baseline, not a control run alongside",
                              plan.seq, [plan.digest, ctl[0].digest, trt[0].digest])


def a08_missing_data(ctx: Context) -> Iterator[Finding]:
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
    for c, plan in ctx.planned_claims():  # an effect whose missing items favour one arm
        body = ctx.body(plan)
        limit = float(body.get("max_missing_rate", 0.02))
        n_items = int((body.get("suite") or {}).get("n_items") or 0)
        cited = [r for r in map(ctx.view.runs_by_digest.get, c.cited) if r and r.usable]
        if c.figure != "effect" or len(c.arms) != 2:
            continue
        miss = {r.digest: missing(r, n_items) for r in cited}
        (m0, n0), (m1, n1) = ([sum(miss[r.digest][i] for r in cited if r.arm == arm)
                               for i in (0, 1)] for arm in c.arms)
        p = two_proportion_p(m0, n0, m1, n1)
        if p is not None and p < A08_P and abs(m0 / n0 - m1 / n1) > limit / 2:
            heavy = c.arms[0] if m0 / n0 > m1 / n1 else c.arms[1]
            yield Finding("A08", "warning", f"claim @{c.seq}: its missing items cluster on "
                          f"{heavy} ({m0 / n0:.1%} of {c.arms[0]} vs {m1 / n1:.1%} of "
                          f"{c.arms[1]}, p={p:.2g})", c.seq, c.evidence())


def a09_retracted_support(ctx: Context) -> Iterator[Finding]:
    for c in ctx.scoped_claims():
        bad = ([c.plan.digest] if c.plan and ctx.retracted(c.plan.digest) else []) + [
            d for d in c.cited if ctx.retracted(d)]
        if not bad or remade(ctx, c):
            continue
        what = ", ".join("its plan" if c.plan and d == c.plan.digest else short(d) for d in bad)
        yield Finding("A09", "error", f"claim @{c.seq} rests on retracted entries ({what}); "
                      "it stands unsupported until it is retracted or re-made", c.seq,
                      c.evidence(*bad, *(e.digest for d in bad for e in ctx.view.retracted_by(d))))


def remade(ctx: Context, c: Claim) -> bool:
    """A later standing claim of the same plan and figure that rests on nothing retracted."""
    return any(o.seq > c.seq and o.plan is c.plan and o.arms == c.arms and o.figure == c.figure
               and not any(ctx.retracted(d) for d in o.cited) for o in ctx.claims)


def a10_hidden_failures(ctx: Context) -> Iterator[Finding]:
    for c, plan in ctx.planned_claims():
        hidden = [r for r in plan.runs if r.status in ("failed", "aborted") and not r.retracted
                  and r.arm in c.arms and r.seq < c.seq and r.digest not in set(c.cited)]
        if hidden and not FAILURE_WORDS.search(str(c.body.get("statement", ""))):
            what = ", ".join(f"@{r.seq} {r.status}" for r in hidden)
            yield Finding("A10", "error", f"claim @{c.seq} does not mention the failed or aborted "
                          f"runs of {' vs '.join(c.arms)} ({what}): neither its runs nor its "
                          "statement say so", c.seq, c.evidence(*(r.digest for r in hidden)))


def a11_many_comparisons(ctx: Context) -> Iterator[Finding]:
    groups: dict[str, list[PlanView]] = {}
    calibration = band_runs(ctx)
    for plan in ctx.plans:
        if not calibration_plan(ctx, plan, calibration):
            groups.setdefault(suite_key(plan.original), []).append(plan)
    for plans in groups.values():
        tests = [(plan, ctl, trt) for plan in plans for ctl, trt in comparisons(plan)]
        if len(tests) >= 2 and (ctx.scope is None or any(p.digest == ctx.scope for p in plans)):
            yield many_comparisons(ctx, plans, tests)


def many_comparisons(ctx: Context, plans: list[PlanView],
                     tests: list[tuple[PlanView, str | None, str]]) -> Finding:
    from logbook import stats

    rows = []
    for plan, ctl, trt in tests:  # each comparison's latest standing effect claim, if any
        alpha = float(ctx.body(plan).get("alpha", 0.05))
        claim = next((c for c in reversed(ctx.claims) if c.plan is plan
                      and c.figure == "effect" and c.arms == [ctl, trt]), None)
        rows.append((plan, trt, claim, alpha, interval_p(claim, alpha) if claim else 1.0))
    ps = [p for *_, p in rows]  # a comparison with no claim counts, with p = 1
    adjusted = zip(stats.bonferroni(ps).pvalues_adjusted,
                   stats.benjamini_hochberg(ps).pvalues_adjusted, strict=True)
    verdicts = []
    for (plan, trt, claim, alpha, p), (b, h) in zip(rows, adjusted, strict=True):
        says = {x: "significant" if x <= alpha else "not significant" for x in (p, b, h)}
        if claim is not None:
            verdicts.append(f"claim @{claim.seq} ({plan.slug}, {trt}): p≈{p:.2g} {says[p]} "
                            f"unadjusted, Bonferroni p={b:.2g} {says[b]}, Benjamini-Hochberg "
                            f"p={h:.2g} {says[h]}")
    m, alpha0 = len(rows), rows[0][3]
    claims = [row[2] for row in rows if row[2] is not None]
    names = ", ".join(p.slug for p in plans[:4]) + (f" and {len(plans) - 4} more"
                                                   if len(plans) > 4 else "")
    suite = plans[0].original.get("suite") or {}
    tail = "; ".join(verdicts) or (f"no effect claim yet; at alpha {alpha0:g} each needs "
                                   f"p <= {alpha0 / m:.2g} (Bonferroni)")
    return Finding("A11", "warning", f"{m} comparisons test suite "
                   f"{suite.get('name')} {suite.get('version', '')}".rstrip() + f" ({names}); "
                   + tail, max([p.seq for p in plans] + [c.seq for c in claims]),
                   [p.digest for p in plans] + [c.digest for c in claims])


def a14_unplanned_claim(ctx: Context) -> Iterator[Finding]:
    for c in ctx.claims if ctx.scope is None else []:
        if c.plan is None:
            yield Finding("A14", "info", f"claim @{c.seq} has no plan: nothing in the ledger "
                          "shows what was decided before its runs", c.seq, [c.digest])


def a15_negative_control(ctx: Context) -> Iterator[Finding]:
    from logbook.analysis.report import item_means

    for plan in ctx.scoped_plans():
        for arm in [a for a in plan.arms() if a.get("role") == "negative_control"]:
            runs = ctx.usable(plan.runs, arm["name"])
            if not runs:
                continue
            got = mean_sd([ctx.score(r) for r in runs])[0]  # type: ignore[misc]
            expected, tol = float(arm["expected"]), arm.get("tolerance")
            how = (f"tolerance {tol * scale_of(plan.body):g}" if tol is not None
                   else f"{A15_SE:g} standard errors")
            if tol is None:  # standard error of the arm's item means
                vals = [v for v in item_means(runs)[0].values() if v is not None]
                tol = A15_SE * mean_sd(vals)[1] / math.sqrt(len(vals)) if vals else 0.0
            if abs(got - expected) > float(tol) + EPS:
                yield Finding("A15", "error", f"negative control {arm['name']} of plan "
                              f"{plan.slug} scored {got * scale_of(plan.body):.4g} over "
                              f"{len(runs)} run(s), away from its expected "
                              f"{expected * scale_of(plan.body):g} (beyond {how}): the harness "
                              "may be broken", plan.seq, [plan.digest, *(r.digest for r in runs)])


def a16_single_run(ctx: Context) -> Iterator[Finding]:
    for c, plan in ctx.planned_claims():
        single = [a for a in c.arms if sum(1 for r in plan.arm_runs(a)
                                           if r.digest in set(c.cited) and r.usable) == 1]
        if single:
            yield Finding("A16", "warning", f"claim @{c.seq} rests on a single run of "
                          f"{', '.join(single)}: a surprise, good or bad, is re-run before it "
                          "is published", c.seq, c.evidence())


def a17_unanchored_plan(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        first = plan.runs[0] if plan.runs else None
        if first and not any(plan.seq < s <= first.seq for s in ctx.checkpoint_sizes):
            yield Finding("A17", "info", f"plan {plan.slug} @{plan.seq}: no checkpoint was made "
                          f"between it and its first run @{first.seq}, so nothing outside the "
                          "ledger shows the plan came first", plan.seq,
                          [plan.digest, first.digest])


def a19_system_unsaid(ctx: Context) -> Iterator[Finding]:
    from logbook.ledger.intake import system_gaps

    for plan in ctx.scoped_plans():
        for r in plan.runs:
            gaps = system_gaps(r.body) if not ctx.retracted(r.digest) else []
            if gaps:
                yield Finding("A19", "warning", f"plan {plan.slug}: run @{r.seq} ({r.arm}) "
                              f"names no {' and no '.join(gaps)} in its apparatus: its score "
                              "travels without the system that made it", r.seq, [r.digest])
