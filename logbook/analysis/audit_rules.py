"""The audit's rules, A01-A17: one small function each over a read-only `Context`.

A rule yields `Finding(rule id, severity, one sentence, seq of the entry it is about, digests
that prove it)`. Thresholds and the reasons behind them: docs/audit.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from statistics import NormalDist
from typing import Any

from logbook.analysis.audit import (
    Claim,
    Context,
    Rule,
    mean_sd,
    printed_numbers,
    short,
    statement_figures,
    suite_key,
)
from logbook.analysis.view import PlanView, RunView
from logbook.verify import Finding

# A05: what an amendment may not change once a plan's runs have begun.
GOALPOSTS = ("metric", "success", "failure", "min_effect", "alpha", "analysis", "exclusions",
             "max_missing_rate")
# A10: a statement that says runs failed "mentions" them.
FAILURE_WORDS = re.compile(r"\b(fail(ed|s|ure|ures)?|abort(ed|s)?|crash(ed|es)?)\b", re.I)
A08_P = 0.05      # A08: two-proportion test of missing items between the arms
A12_SE = 3.0      # A12: standard errors of a new run predicted from the earlier ones
A12_MIN_EARLIER = 2
A15_SE = 3.0      # A15: standard errors of the arm mean when the arm sets no tolerance
EPS = 1e-9


def at(runs: list[RunView]) -> str:
    return ", ".join(f"@{r.seq}" for r in runs)


def arms_text(arms: list[str]) -> str:
    return " vs ".join(arms) if len(arms) > 1 else (arms[0] if arms else "?")


def comparisons(plan: PlanView) -> list[tuple[str | None, str]]:
    """(control, treatment) pairs; a plan with no treatment tests its first arm alone."""
    controls = [a["name"] for a in plan.arms() if a.get("role") == "control"]
    treatments = [a["name"] for a in plan.arms() if a.get("role") == "treatment"]
    if controls and treatments:
        return [(controls[0], t) for t in treatments]
    return [(None, plan.arms()[0]["name"])] if plan.arms() else []


# -- claims ------------------------------------------------------------------------------------
def a01_unreported_runs(ctx: Context) -> Iterator[Finding]:
    for c in ctx.scoped_claims():
        assert c.plan is not None
        held = [r for r in c.plan.runs if r.usable and r.arm in c.arms and r.seq < c.seq]
        left = [r for r in held if r.digest not in set(c.cited)]
        if left:
            yield Finding("A01", "error", f"claim @{c.seq} rests on {len(held) - len(left)} of "
                          f"the {len(held)} completed runs that plan {c.plan.slug} held for "
                          f"{arms_text(c.arms)} when it was made; it leaves out {at(left)}",
                          c.seq, c.evidence(*(r.digest for r in left)))


def a02_best_of_n(ctx: Context) -> Iterator[Finding]:
    for c in ctx.scoped_claims():
        assert c.plan is not None
        value = float(c.body["value"])
        tols = [0.5 * 10 ** -d / s for d, s in statement_figures(c, [value])]
        tol = max(min(tols, default=EPS), EPS)
        hib = bool((ctx.body(c.plan).get("metric") or {}).get("higher_is_better", True))
        best, worst = (max, min) if hib else (min, max)
        runs = {a: ctx.usable(c.plan.runs, a, before=c.seq) for a in c.arms}
        top = runs[c.arms[-1]] if c.arms else []
        if len(top) < 2:
            continue
        xs = [ctx.score(r) for r in top]
        star = top[xs.index(best(xs))]  # type: ignore[type-var]
        honest = mean_sd(xs)[0]  # type: ignore[arg-type]
        picks = [best(xs)]  # type: ignore[type-var]
        if c.figure == "effect" and len(c.arms) == 2:
            ys = [ctx.score(r) for r in runs[c.arms[0]]]
            if not ys:
                continue
            base = mean_sd(ys)[0]  # type: ignore[arg-type]
            honest -= base
            picks = [best(xs) - base, best(xs) - worst(ys)]  # type: ignore[type-var,operator]
        if any(abs(value - p) <= tol for p in picks) and abs(value - honest) > tol:
            yield Finding("A02", "error", f"claim @{c.seq} gives {value:.4g}, which is what the "
                          f"best of {len(top)} runs of {c.arms[-1]} (@{star.seq}, "
                          f"{ctx.score(star):.4g}) gives, not the mean of them all "
                          f"({honest:.4g})", c.seq, c.evidence(star.digest))


def a08_missing_data(ctx: Context) -> Iterator[Finding]:
    for c in ctx.scoped_claims():
        assert c.plan is not None
        body = ctx.body(c.plan)
        limit = float(body.get("max_missing_rate", 0.02))
        n_items = int((body.get("suite") or {}).get("n_items") or 0)
        cited = [r for r in (ctx.view.runs_by_digest.get(d) for d in c.cited)
                 if r is not None and r.usable]
        miss = {r.digest: missing(r, n_items) for r in cited}
        over = [r for r in cited if miss[r.digest][1] and
                miss[r.digest][0] / miss[r.digest][1] > limit + EPS]
        parts = []
        if over:
            rates = ", ".join(f"@{r.seq} {miss[r.digest][0] / miss[r.digest][1]:.1%}"
                              for r in over)
            parts.append(f"{len(over)} run(s) it uses miss more items than the plan's limit "
                         f"of {limit:.1%} ({rates})")
        if c.figure == "effect" and len(c.arms) == 2:
            m = [[0, 0], [0, 0]]
            for r in cited:
                if r.arm in c.arms:
                    k = c.arms.index(r.arm)
                    m[k][0] += miss[r.digest][0]
                    m[k][1] += miss[r.digest][1]
            p = two_proportion_p(m[0][0], m[0][1], m[1][0], m[1][1])
            if p is not None and p < A08_P:
                r0, r1 = m[0][0] / m[0][1], m[1][0] / m[1][1]
                if abs(r0 - r1) > limit / 2:
                    heavy = c.arms[0] if r0 > r1 else c.arms[1]
                    parts.append(f"its missing items cluster on {heavy} ({r0:.1%} of "
                                 f"{c.arms[0]} vs {r1:.1%} of {c.arms[1]}, p={p:.2g})")
        if parts:
            yield Finding("A08", "warning", f"claim @{c.seq}: " + "; ".join(parts), c.seq,
                          c.evidence(*(r.digest for r in over)))


def missing(run: RunView, n_items: int) -> tuple[int, int]:
    """(missing, denominator) as RunView.missing counts them, without per-item dicts."""
    oc = run.body.get("outcomes") or {}
    if oc.get("sample"):
        return run.missing(n_items)
    scores = oc.get("score") or []
    total = max(n_items, len(scores))
    return total - sum(1 for s in scores if s is not None), total


def two_proportion_p(m0: int, n0: int, m1: int, n1: int) -> float | None:
    """Two-sided p of a two-proportion z-test (pooled); None when it cannot be computed."""
    if not n0 or not n1:
        return None
    pooled = (m0 + m1) / (n0 + n1)
    if pooled in (0.0, 1.0):
        return None
    z = abs(m0 / n0 - m1 / n1) / math.sqrt(pooled * (1 - pooled) * (1 / n0 + 1 / n1))
    return math.erfc(z / math.sqrt(2))


def a09_retracted_support(ctx: Context) -> Iterator[Finding]:
    for c in ctx.scoped_claims(planned=False):
        bad = [d for d in c.cited if ctx.retracted(d)]
        if c.plan is not None and ctx.retracted(c.plan.digest):
            bad.insert(0, c.plan.digest)
        if not bad or remade(ctx, c):
            continue
        retractions = [e.digest for d in bad for e in ctx.view.retracted_by(d)]
        what = ", ".join(("its plan" if c.plan and d == c.plan.digest else short(d))
                         for d in bad)
        yield Finding("A09", "error", f"claim @{c.seq} rests on retracted entries ({what}); "
                      "it stands unsupported until it is retracted or re-made", c.seq,
                      c.evidence(*bad, *retractions))


def remade(ctx: Context, c: Claim) -> bool:
    """A later standing claim of the same plan and figure that rests on nothing retracted."""
    return any(o.seq > c.seq and o.plan is c.plan and o.arms == c.arms and o.figure == c.figure
               and not any(ctx.retracted(d) for d in o.cited) for o in ctx.claims)


def a10_hidden_failures(ctx: Context) -> Iterator[Finding]:
    for c in ctx.scoped_claims():
        assert c.plan is not None
        if FAILURE_WORDS.search(str(c.body.get("statement", ""))):
            continue
        hidden = [r for r in c.plan.runs if r.status in ("failed", "aborted") and not r.retracted
                  and r.arm in c.arms and r.seq < c.seq and r.digest not in set(c.cited)]
        if hidden:
            what = ", ".join(f"@{r.seq} {r.status}" for r in hidden)
            yield Finding("A10", "error", f"claim @{c.seq} does not mention the failed or aborted "
                          f"runs of {arms_text(c.arms)} ({what}): neither its runs nor its "
                          "statement say so", c.seq, c.evidence(*(r.digest for r in hidden)))


def a13_false_precision(ctx: Context) -> Iterator[Finding]:
    from logbook.stats import decimals_supported

    for c in ctx.scoped_claims(planned=False):
        low, high = (float(x) for x in c.body["interval"])
        targets = [float(c.body["value"]), low, high]
        for decimals, scale in statement_figures(c, targets):
            supported = decimals_supported(low, high, scale)
            if decimals > supported:
                shown = [t for t, _v, d in printed_numbers(str(c.body["statement"]))
                         if d == decimals]
                unit = "percent" if scale == 100 else "metric units"
                yield Finding("A13", "warning", f"claim @{c.seq} prints {shown[0]!r} with "
                              f"{decimals} decimal(s), but its interval ({low:.4g} to "
                              f"{high:.4g}) supports {supported} in {unit}", c.seq,
                              c.evidence())
                break


def a14_unplanned_claim(ctx: Context) -> Iterator[Finding]:
    if ctx.scope is not None:
        return
    for c in ctx.claims:
        if c.plan is None:
            yield Finding("A14", "info", f"claim @{c.seq} has no plan: nothing in the ledger "
                          "shows what was decided before its runs", c.seq, [c.digest])


def a16_single_run(ctx: Context) -> Iterator[Finding]:
    for c in ctx.scoped_claims():
        assert c.plan is not None
        cited = set(c.cited)
        single = [a for a in c.arms if sum(1 for r in c.plan.runs if r.digest in cited
                                           and r.arm == a and r.usable) == 1]
        if single:
            yield Finding("A16", "warning", f"claim @{c.seq} rests on a single run of "
                          f"{', '.join(single)}: a surprise, good or bad, is re-run before it "
                          "is published", c.seq, c.evidence())


# -- plans -------------------------------------------------------------------------------------
def a03_plan_after_data(ctx: Context) -> Iterator[Finding]:
    explored = [r for r in ctx.view.runs if r.plan is None and r.usable]
    if not explored:
        return
    for plan in ctx.scoped_plans():
        before = [r for r in explored if r.seq < plan.seq]
        arms = {a["name"]: shared_apparatus(ctx, [r for r in plan.runs if r.arm == a["name"]])
                for a in plan.arms()}
        variable = list(ctx.body(plan).get("variable") or [])
        found = [r for r in before if same_suite(ctx, plan, r)
                 and any(app and agrees(ctx.apparatus(r), app, variable)
                         for app in arms.values())]
        if found:
            yield Finding("A03", "warning", f"plan {plan.slug} @{plan.seq} was appended after "
                          f"{len(found)} exploratory run(s) on its suite with the apparatus of "
                          f"its arms ({at(found)}): it may have been written after seeing them",
                          plan.seq, [plan.digest, *(r.digest for r in found)])


def shared_apparatus(ctx: Context, runs: list[RunView]) -> dict[str, Any]:
    """The non-identity apparatus fields every one of `runs` has with the same value."""
    if not runs:
        return {}
    first = ctx.apparatus(runs[0])
    return {k: v for k, v in first.items()
            if all(k in (a := ctx.apparatus(r)) and a[k] == v for r in runs[1:])}


def agrees(found: dict[str, Any], arm: dict[str, Any], variable: list[str]) -> bool:
    """Same values on every field both record, and those fields cover the plan's variable."""
    shared = set(found) & set(arm)
    return bool(shared) and set(variable) <= shared and all(found[k] == arm[k] for k in shared)


def same_suite(ctx: Context, plan: PlanView, run: RunView) -> bool:
    hashes = {(plan.original.get("suite") or {}).get("dataset_hash")}
    hashes |= {r.apparatus.get("dataset_hash") or r.apparatus.get("item_ids_hash")
               for r in plan.runs}
    hashes.discard(None)
    mine = run.apparatus.get("dataset_hash") or run.apparatus.get("item_ids_hash")
    if mine and hashes:
        return mine in hashes
    done = [r for r in plan.runs if r.status == "completed"]
    return bool(done) and set(run.item_scores) == set(done[0].item_scores)


def a04_optional_stopping(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        claimed = [c.seq for c in ctx.claims if c.plan is plan]
        cut = claimed[0] if claimed else None
        planned = int(ctx.body(plan).get("runs_per_arm") or 0)
        for arm in plan.arms():
            runs = [r for r in plan.runs if r.usable and r.arm == arm["name"]
                    and (cut is None or r.seq < cut)]
            if planned and len(runs) > planned:
                extra = runs[planned:]
                yield Finding("A04", "error", f"arm {arm['name']} of plan {plan.slug} has "
                              f"{len(runs)} completed runs, more than the {planned} the plan "
                              f"set ({at(extra)} came after)", extra[0].seq,
                              [plan.digest, *(r.digest for r in extra)])
        if not plan.runs:
            continue
        first = plan.runs[0]
        for a in ctx.amendments(plan):
            new = (a.body.get("changes") or {}).get("runs_per_arm")
            old = ctx.body(plan, before=a.seq).get("runs_per_arm")
            if a.seq > first.seq and new is not None and new != old:
                how = "raised" if new > old else "lowered"
                yield Finding("A04", "error", f"amendment @{a.seq} {how} the runs per arm of "
                              f"plan {plan.slug} from {old} to {new} after its runs began "
                              f"(@{first.seq})", a.seq, [a.digest, plan.digest, first.digest])


def a05_goalposts_moved(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        if not plan.runs:
            continue
        first = plan.runs[0]
        for a in ctx.amendments(plan):
            if a.seq < first.seq:
                continue
            old = ctx.body(plan, before=a.seq)
            changes = a.body.get("changes") or {}
            moved = [k for k in GOALPOSTS if k in changes and changes[k] != old.get(k)]
            if moved:
                yield Finding("A05", "error", f"amendment @{a.seq} changed {', '.join(moved)} "
                              f"of plan {plan.slug} after its first run @{first.seq}: the "
                              "goalposts moved once data had come in", a.seq,
                              [a.digest, plan.digest, first.digest])


def a06_confound(ctx: Context) -> Iterator[Finding]:
    from logbook.analysis.compare import confounds

    for plan in ctx.scoped_plans():
        variable = list(ctx.body(plan).get("variable") or [])
        for control, treatment in comparisons(plan):
            ctl, trt = ctx.usable(plan.runs, control), ctx.usable(plan.runs, treatment)
            if control is None or not ctl or not trt:
                continue
            diff = confounds(ctl, trt, variable)
            if diff:
                what = "; ".join(f"{k}: {', '.join(v['a'])} vs {', '.join(v['b'])}"
                                 for k, v in diff.items())
                yield Finding("A06", "warning", f"plan {plan.slug}: {control} and {treatment} "
                              f"runs differ besides the declared variable "
                              f"({', '.join(variable) or 'none'}) in {what}", plan.seq,
                              [plan.digest, ctl[0].digest, trt[0].digest])


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
            if len(ctl) >= 2 and len(trt) >= 2:
                for a, ra, b, rb in ((control, ctl, treatment, trt),
                                     (treatment, trt, control, ctl)):
                    if ra[-1].seq < rb[0].seq:
                        why.append(f"all its {a} runs ({at(ra)}) were appended before the "
                                   f"first {b} run @{rb[0].seq}, not interleaved")
            if why:
                yield Finding("A07", "warning", f"plan {plan.slug}: " + "; ".join(why) +
                              ": a historical baseline, not a control run alongside",
                              plan.seq, [plan.digest, ctl[0].digest, trt[0].digest])


def a11_many_comparisons(ctx: Context) -> Iterator[Finding]:
    groups: dict[str, list[PlanView]] = {}
    for plan in ctx.plans:
        groups.setdefault(suite_key(plan.original), []).append(plan)
    for key, plans in groups.items():
        if ctx.scope is not None and all(p.digest != ctx.scope for p in plans):
            continue
        tests = [(plan, ctl, trt) for plan in plans for ctl, trt in comparisons(plan)]
        if len(tests) >= 2:
            yield many_comparisons(ctx, key, plans, tests)


def many_comparisons(ctx: Context, key: str, plans: list[PlanView],
                     tests: list[tuple[PlanView, str | None, str]]) -> Finding:
    from logbook import stats

    rows = []
    for plan, ctl, trt in tests:
        alpha = float(ctx.body(plan).get("alpha", 0.05))
        found = [c for c in ctx.claims if c.plan is plan and c.figure == "effect"
                 and c.arms == [ctl, trt]]
        claim = found[-1] if found else None
        rows.append((plan, trt, claim, alpha, interval_p(claim, alpha) if claim else None))
    ps = [1.0 if p is None else p for *_, p in rows]  # untested counts, conservatively
    bonf = stats.bonferroni(ps).pvalues_adjusted
    bh = stats.benjamini_hochberg(ps).pvalues_adjusted
    m = len(rows)
    names = ", ".join(p.slug for p in plans[:4]) + (f" and {len(plans) - 4} more"
                                                   if len(plans) > 4 else "")
    verdicts = []
    for (plan, trt, claim, alpha, p), b, h in zip(rows, bonf, bh, strict=True):
        if claim is None or p is None:
            continue

        def says(x: float, a: float = alpha) -> str:
            return "significant" if x <= a else "not significant"

        verdicts.append(f"claim @{claim.seq} ({plan.slug}, {trt}): p≈{p:.2g} {says(p)} "
                        f"unadjusted, Bonferroni p={b:.2g} {says(b)}, Benjamini-Hochberg "
                        f"p={h:.2g} {says(h)}")
    alpha0 = rows[0][3]
    tail = ("; ".join(verdicts) if verdicts else f"no effect claim yet; at alpha {alpha0:g} "
            f"each needs p <= {alpha0 / m:.2g} (Bonferroni)")
    claims = [row[2] for row in rows if row[2] is not None]
    seq = max([p.seq for p in plans] + [c.seq for c in claims])  # type: ignore[union-attr]
    return Finding("A11", "warning", f"{m} comparisons test suite {label(plans[0])} ({names}); "
                   + tail, seq, [p.digest for p in plans]
                   + [c.digest for c in claims])  # type: ignore[union-attr]


def label(plan: PlanView) -> str:
    suite = plan.original.get("suite") or {}
    return f"{suite.get('name')} {suite.get('version', '')}".strip()


def interval_p(claim: Claim, alpha: float) -> float | None:
    """Approximate two-sided p of an effect from its interval: se = width / (2 z), normal."""
    low, high = (float(x) for x in claim.body["interval"])
    value = float(claim.body["value"])
    z = NormalDist().inv_cdf(1 - alpha / 2)
    se = (high - low) / (2 * z)
    if se <= 0:
        return 1.0 if value == 0 else 0.0
    return math.erfc(abs(value / se) / math.sqrt(2))


def a12_surprise(ctx: Context) -> Iterator[Finding]:
    runs = ctx.usable(ctx.view.runs)
    if ctx.scope is not None:  # only runs on the scoped plan's suite can share its apparatus
        suite = suite_key(ctx.view.plans[ctx.scope].original)
        runs = [r for r in runs if r.plan and suite_key(ctx.view.plans[r.plan].original) == suite]
    groups: dict[tuple[Any, ...], list[RunView]] = {}
    for r in runs:
        groups.setdefault(ctx.apparatus_key(r), []).append(r)
    bands: dict[tuple[Any, ...], Any] = {}
    for b in ctx.view.entries_of("band"):
        runs = [ctx.view.runs_by_digest.get(d) for d in b.body.get("runs") or []]
        if not ctx.retracted(b.digest) and runs and runs[0] is not None:
            bands[ctx.apparatus_key(runs[0])] = b  # the latest band of that apparatus
    for key, group in groups.items():
        if ctx.scope is not None and all(r.plan != ctx.scope for r in group):
            continue
        last, earlier = group[-1], [ctx.score(r) for r in group[:-1]]
        x, band, why = ctx.score(last), bands.get(key), None
        assert x is not None
        if band is not None and abs(x - band.body["mean"]) > band.body["band"] + EPS:
            why = (f"outside the band {band.body['mean']:.4g} ± {band.body['band']:.4g} "
                   f"measured at @{band.seq}")
        elif len(earlier) >= A12_MIN_EARLIER:
            m, sd = mean_sd(earlier)  # type: ignore[arg-type]
            one_item = 1 / max(1, scored_items(last))  # never less than one item's worth
            if abs(x - m) > max(A12_SE * sd * math.sqrt(1 + 1 / len(earlier)), one_item) + EPS:
                why = (f"more than {A12_SE:g} standard errors from the {len(earlier)} earlier "
                       f"runs of the same apparatus (mean {m:.4g}, sd {sd:.2g})")
        if why:
            extra = [band.digest] if band is not None and "band" in why else []
            yield Finding("A12", "warning", f"run @{last.seq} scored {x:.4g}, {why}, and no "
                          "later run of the same apparatus re-measured it", last.seq,
                          [last.digest, *([last.plan] if last.plan else []), *extra])


def scored_items(run: RunView) -> int:
    oc = run.body.get("outcomes") or {}
    if oc.get("sample"):
        return int(sum(1 for v in run.item_scores.values() if v is not None))
    return sum(1 for s in oc.get("score") or () if s is not None)


def a15_negative_control(ctx: Context) -> Iterator[Finding]:
    from logbook.analysis.report import item_means

    for plan in ctx.scoped_plans():
        for arm in plan.arms():
            runs = ctx.usable(plan.runs, arm["name"])
            if arm.get("role") != "negative_control" or not runs:
                continue
            got = mean_sd([ctx.score(r) for r in runs])[0]  # type: ignore[misc]
            expected, tol = float(arm["expected"]), arm.get("tolerance")
            how = f"tolerance {tol:g}" if tol is not None else f"{A15_SE:g} standard errors"
            if tol is None:
                vals = [v for v in item_means(runs)[0].values() if v is not None]
                tol = A15_SE * mean_sd(vals)[1] / math.sqrt(len(vals)) if vals else 0.0
            if abs(got - expected) > float(tol) + EPS:
                yield Finding("A15", "error", f"negative control {arm['name']} of plan "
                              f"{plan.slug} scored {got:.4g} over {len(runs)} run(s), away "
                              f"from its expected {expected:g} (beyond {how}): the harness "
                              "may be broken", plan.seq, [plan.digest, *(r.digest for r in runs)])


def a17_unanchored_plan(ctx: Context) -> Iterator[Finding]:
    sizes = ctx.checkpoint_sizes
    for plan in ctx.scoped_plans():
        if not plan.runs:
            continue
        first = plan.runs[0]
        if not any(plan.seq < s <= first.seq for s in sizes):
            yield Finding("A17", "info", f"plan {plan.slug} @{plan.seq}: no checkpoint was made "
                          f"between it and its first run @{first.seq}, so nothing outside the "
                          "ledger shows the plan came first", plan.seq,
                          [plan.digest, first.digest])


RULES = [
    Rule("A01", "error", "unreported runs", "a claim leaves out completed runs its plan held "
         "for its arms when it was made", a01_unreported_runs),
    Rule("A02", "error", "best of N", "a claimed figure is the best single run of an arm, not "
         "the mean, beyond what rounding explains", a02_best_of_n),
    Rule("A03", "warning", "plan after data", "exploratory runs on the plan's suite with its "
         "arms' apparatus were appended before the plan", a03_plan_after_data),
    Rule("A04", "error", "optional stopping", "an arm has more completed runs than planned, or "
         "an amendment changed the run count after runs began", a04_optional_stopping),
    Rule("A05", "error", "goalposts moved", "an amendment changed the metric, criteria, "
         "minimum effect, analysis or exclusions after the first run", a05_goalposts_moved),
    Rule("A06", "warning", "confound", "control and treatment runs differ in apparatus fields "
         "besides the plan's declared variable", a06_confound),
    Rule("A07", "warning", "historical baseline", "control runs come from other sessions than "
         "the treatment runs, or were not interleaved with them", a07_historical_baseline),
    Rule("A08", "warning", "missing data", "a run a claim uses misses more items than the plan "
         "allows, or missing items cluster on one arm", a08_missing_data),
    Rule("A09", "error", "retracted support", "a standing claim rests on a retracted run or "
         "plan", a09_retracted_support),
    Rule("A10", "error", "hidden failures", "a claim's arms have failed or aborted runs that "
         "the claim does not mention", a10_hidden_failures),
    Rule("A11", "warning", "many comparisons", "several comparisons test the same suite: "
         "Bonferroni and Benjamini-Hochberg verdicts", a11_many_comparisons),
    Rule("A12", "warning", "surprise not re-measured", "a run lies outside its band or 3 "
         "standard errors of earlier identical runs, and was not re-run", a12_surprise),
    Rule("A13", "warning", "false precision", "a claim's statement prints more digits than its "
         "interval supports", a13_false_precision),
    Rule("A14", "info", "unplanned claim", "a claim with no plan", a14_unplanned_claim),
    Rule("A15", "error", "negative control failed", "a negative-control arm's score lies away "
         "from its expected value", a15_negative_control),
    Rule("A16", "warning", "no rerun of a good surprise", "a claim rests on a single run of "
         "an arm", a16_single_run),
    Rule("A17", "info", "unanchored plan", "no checkpoint was made between a plan and its "
         "first run", a17_unanchored_plan),
]
