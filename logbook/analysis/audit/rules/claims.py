"""The audit's rules about what a claim rests on: A01 (unreported runs), A09 (retracted
support), A10 (hidden failures), A14 (unplanned claim), A16 (a single run), A27 (a claim
before the plan's runs were done).
Thresholds and the reasons behind them: docs/audit.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from logbook.analysis.audit.context import Claim, Context, at, short
from logbook.analysis.audit.registry import rule
from logbook.findings import Finding

# A10: a statement "mentions" failed runs when it counts them: a number (or "a", "the") before
# a word of failure ("1 q8 run failed", "two aborted runs", "the failed run @7"), or after one
# ("failures: 2"), and no negation just before ("no run failed", "without a single failure"
# deny them).
_COUNT = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a|an|the)"
_FAIL = r"(?:fail\w*|abort\w*|crash\w*)"
COUNTED_FAILURES = re.compile(
    rf"\b{_COUNT}\b(?:\s+[\w@-]+){{0,3}}?\s+{_FAIL}|{_FAIL}\w*\s*[:=(]\s*\d+", re.I)
NEGATION = re.compile(r"\b(no|not|none|never|zero|without|nor)\b[^.;,]*$", re.I)


def counts_failures(statement: str) -> bool:
    """Whether the statement states how many runs failed (A10), not only the word."""
    for m in COUNTED_FAILURES.finditer(statement):
        before = statement[max(0, m.start() - 30):m.start()]
        if not NEGATION.search(before) and not NEGATION.match(m.group(0)):
            return True
    return False


@rule("A01", severity="error", title="unreported runs",
      finds="a claim leaves out completed runs its plan held for its arms when it was made")
def unreported_runs(ctx: Context) -> Iterator[Finding]:
    for c, plan in ctx.planned_claims():
        held = [r for r in plan.runs if r.usable and r.arm in c.arms and r.seq < c.seq]
        left = [r for r in held if r.digest not in set(c.cited)]
        if left:
            arms = " vs ".join(c.arms)
            yield Finding("A01", "error", f"claim @{c.seq} rests on {len(held) - len(left)} of "
                          f"the {len(held)} completed runs that plan {plan.slug} held for "
                          f"{arms} when it was made; it leaves out {at(left)}",
                          c.seq, c.evidence(*(r.digest for r in left)))


@rule("A09", severity="error", title="retracted support",
      finds="a standing claim rests on a retracted run or plan")
def retracted_support(ctx: Context) -> Iterator[Finding]:
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


@rule("A10", severity="error", title="hidden failures",
      finds="a claim's arms have failed or aborted runs that the claim does not mention")
def hidden_failures(ctx: Context) -> Iterator[Finding]:
    for c, plan in ctx.planned_claims():
        hidden = [r for r in plan.runs if r.status in ("failed", "aborted") and not r.retracted
                  and r.arm in c.arms and r.seq < c.seq and r.digest not in set(c.cited)]
        if hidden and not counts_failures(str(c.body.get("statement", ""))):
            what = ", ".join(f"@{r.seq} {r.status}" for r in hidden)
            yield Finding("A10", "error", f"claim @{c.seq} does not mention the failed or aborted "
                          f"runs of {' vs '.join(c.arms)} ({what}): neither its runs nor its "
                          "statement count them (a statement says how many failed, e.g. "
                          "\"1 q8 run failed\"; words that deny or skirt it do not count)", c.seq,
                          c.evidence(*(r.digest for r in hidden)))


@rule("A14", severity="info", title="unplanned claim", finds="a claim with no plan")
def unplanned_claim(ctx: Context) -> Iterator[Finding]:
    for c in ctx.claims if ctx.scope is None else []:
        if c.plan is None:
            yield Finding("A14", "info", f"claim @{c.seq} has no plan: nothing in the ledger "
                          "shows what was decided before its runs", c.seq, [c.digest])


@rule("A16", severity="warning", title="no rerun of a good surprise",
      finds="a claim rests on a single run of an arm")
def single_run(ctx: Context) -> Iterator[Finding]:
    for c, plan in ctx.planned_claims():
        single = [a for a in c.arms if sum(1 for r in plan.arm_runs(a)
                                           if r.digest in set(c.cited) and r.usable) == 1]
        if single:
            yield Finding("A16", "warning", f"claim @{c.seq} rests on a single run of "
                          f"{', '.join(single)}: a surprise, good or bad, is re-run before it "
                          "is published", c.seq, c.evidence())


@rule("A27", severity="error", title="claimed before the plan was done",
      finds="a claim on a plan was made while one of its arms had fewer completed runs than "
      "runs_per_arm: a look at interim results, stopped where it looked good")
def early_claim(ctx: Context) -> Iterator[Finding]:
    for c, plan in ctx.planned_claims():
        planned = int(ctx.body(plan, before=c.seq).get("runs_per_arm") or 0)
        short_arms = []
        for arm in c.arms:
            done = [r for r in plan.arm_runs(arm) if r.status == "completed" and r.seq < c.seq
                    and not any(x.seq < c.seq for x in r.retracted_by)]
            if len(done) < planned:
                short_arms.append(f"{arm} {len(done)} of {planned}")
        if short_arms:
            yield Finding("A27", "error", f"claim @{c.seq} on plan {plan.slug} was made with "
                          f"{', '.join(short_arms)} planned runs done: a claim at an interim "
                          "look reports the look that went well (optional stopping); finish "
                          "the plan, or amend it before its first run", c.seq, c.evidence())
