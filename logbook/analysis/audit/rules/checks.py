"""The audit's rules on checks (docs/format.md §5, "Checks"): A33, a claim whose plan's scorer
nobody checked by hand, in a ledger that spot-checks; A34, a scorer the hand spot-checks
disagree with beyond the plan's tolerance; A35, a claim on a suite not checked for
contamination for one of its models, in a ledger that checks; A36, a claim on a suite a
check found contaminated for one of its models.

What the checks say about a plan is read only through logbook.analysis.checks (the report's
lines come from the same place): a plan's counted runs are its runs no retraction withdrew,
and a check counts while it stands. Thresholds and the reasons behind them: docs/audit.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from logbook.analysis.audit.context import Claim, Context
from logbook.analysis.audit.registry import rule
from logbook.analysis.checks import agreement, contamination, standing
from logbook.analysis.run_view import RunView
from logbook.analysis.view import PlanView
from logbook.findings import Finding
from logbook.ledger.entry import Entry

CONFIDENCE = 0.95  # the disagreement's Wilson interval (A34)
TOLERANCE = 0.05  # a plan's scorer_tolerance when it sets none


def _standing(ctx: Context, type_: str) -> list[Entry]:
    """The standing checks of ``type_``, read once per audit."""
    key = f"checks:{type_}"
    if key not in ctx.memo:
        ctx.memo[key] = standing(ctx.view, type_)
    found: list[Entry] = ctx.memo[key]
    return found


def _counted(plan: PlanView) -> list[RunView]:
    """The plan's runs no retraction withdrew (as the report's checks lines count them)."""
    return [r for r in plan.runs if not r.retracted]


def _claimed(ctx: Context) -> Iterator[tuple[PlanView, list[Claim]]]:
    """Each standing, scoped plan with its standing claims, in ledger order."""
    by_plan: dict[str, list[Claim]] = {}
    for c, plan in ctx.planned_claims():
        if not plan.retracted_by:
            by_plan.setdefault(plan.digest, []).append(c)
    for plan in ctx.plans:
        if plan.digest in by_plan:
            yield plan, by_plan[plan.digest]


def _evidence(claims: list[Claim], *more: str) -> list[str]:
    """The first claim, the plan, then the other claims and ``more``."""
    head = claims[0].evidence(*(c.digest for c in claims[1:]))
    return head + [d for d in more if d not in head]


def _claims_rest(claims: list[Claim]) -> str:
    """"claim @5 rests" or "claims @5, @6 rest"."""
    seqs = ", ".join(f"@{c.seq}" for c in claims)
    return f"claim {seqs} rests" if len(claims) == 1 else f"claims {seqs} rest"


def _suite(plan: PlanView) -> str:
    suite = plan.original.get("suite") or {}
    return str(suite.get("name") or suite.get("dataset_hash") or "?")


def _seqs(entries: list[Entry]) -> str:
    return ", ".join(f"@{e.seq}" for e in entries)


@rule("A33", severity="info", title="scorer never spot-checked",
      finds="in a ledger that holds spot-checks, a claim on a plan none of whose counted runs "
            "was spot-checked by hand")
def never_spot_checked(ctx: Context) -> Iterator[Finding]:
    checks = _standing(ctx, "spot-check")
    for plan, claims in _claimed(ctx) if checks else ():
        if agreement(ctx.view, _counted(plan), checks) is not None:
            continue
        yield Finding("A33", "info", f"plan {plan.slug} @{plan.seq}: {_claims_rest(claims)} "
                      "on runs none of which was spot-checked by hand, while the ledger "
                      f"spot-checks other runs ({_seqs(checks[:3])}"
                      f"{', ...' if len(checks) > 3 else ''}): nothing shows that its scorer "
                      "agrees with a reader (judge a draw of a run's items: logbook spot-check "
                      "RUN --n 20)", claims[0].seq, _evidence(claims))


@rule("A34", severity="warning", title="scorer disagrees with hand checks",
      finds="the hand spot-checks of a plan's counted runs disagree with its scorer on more "
            "than the plan's scorer_tolerance (default 5%) of the items judged: the Wilson "
            "95% interval's lower bound lies above it")
def scorer_disagrees(ctx: Context) -> Iterator[Finding]:
    from logbook.stats.proportions import wilson

    checks = _standing(ctx, "spot-check")
    for plan in ctx.scoped_plans() if checks else ():
        said = agreement(ctx.view, _counted(plan), checks)
        if said is None or not said.decided:
            continue
        tolerance = float(ctx.body(plan).get("scorer_tolerance") or TOLERANCE)
        est = wilson(said.disagree, said.decided, CONFIDENCE)
        if est.low <= tolerance:
            continue
        mine = [e for e in checks if e.seq in set(said.checks)]
        unsure = f"; {said.unsure} unsure left out" if said.unsure else ""
        rate = said.disagree / said.decided
        yield Finding("A34", "warning", f"plan {plan.slug} @{plan.seq}: hand spot-checks of "
                      f"its runs ({_seqs(mine)}) disagree with the scorer on {said.disagree} "
                      f"of the {said.decided} items judged{unsure}: {rate:.1%} "
                      f"(Wilson 95% interval {est.low:.1%} to {est.high:.1%}), above the "
                      f"plan's scorer tolerance of {tolerance:.1%}: its figures measure the "
                      "scorer's errors too (fix the scorer and score the runs again, or "
                      "report the disagreement with the figures)", plan.seq,
                      [plan.digest, *(e.digest for e in mine)])


@rule("A35", severity="info", title="suite not checked for contamination",
      finds="in a ledger that holds contamination checks, a claim on a plan where a model of "
            "its counted runs has no standing contamination check on the plan's suite")
def contamination_unchecked(ctx: Context) -> Iterator[Finding]:
    checks = _standing(ctx, "contamination")
    for plan, claims in _claimed(ctx) if checks else ():
        unchecked = [m.model for m in contamination(ctx.view, plan, checks) if not m.checks]
        if not unchecked:
            continue
        yield Finding("A35", "info", f"plan {plan.slug} @{plan.seq}: {_claims_rest(claims)} "
                      f"on runs of {', '.join(unchecked)}, which no contamination check "
                      f"covers on suite {_suite(plan)}, while the ledger checks others "
                      f"({_seqs(checks[:3])}{', ...' if len(checks) > 3 else ''}): nothing "
                      "shows the suite was unseen in training (logbook check contamination "
                      f"--model MODEL --suite {_suite(plan)} --method METHOD --result VERDICT)",
                      claims[0].seq, _evidence(claims))


@rule("A36", severity="warning", title="contaminated suite",
      finds="a claim on a plan where a model of its counted runs has a standing contamination "
            "check on the plan's suite whose verdict is contaminated")
def contaminated_suite(ctx: Context) -> Iterator[Finding]:
    checks = _standing(ctx, "contamination")
    for plan, claims in _claimed(ctx) if checks else ():
        found = [(m.model, c) for m in contamination(ctx.view, plan, checks)
                 for c in m.positive]
        if not found:
            continue
        said = "; ".join(
            f"{model} by {c['method']} (@{c['seq']}"
            + (f", rate {c['rate']:.1%}" if isinstance(c.get("rate"), float | int) else "")
            + (f", split {c['split']}" if c.get("split") else "") + ")" for model, c in found)
        yield Finding("A36", "warning", f"plan {plan.slug} @{plan.seq}: {_claims_rest(claims)} "
                      f"on runs of models a contamination check found contaminated on "
                      f"suite {_suite(plan)}: {said}: the score may measure what the model "
                      "saw in training, not what it can do (claim on a clean suite or split, or "
                      "say so with the figures)", claims[0].seq,
                      _evidence(claims, *(str(c["digest"]) for _m, c in found)))
