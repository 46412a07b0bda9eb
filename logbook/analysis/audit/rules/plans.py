"""The audit's rules about a plan and when it was written, changed and finished: A03 (plan
after data), A04 (optional stopping), A05 (goalposts moved), A17 (unanchored plan), A23 (past
due).

A plan may carry `due` (an RFC 3339 date). While an arm of the plan has fewer completed runs
than planned, its verdict is `incomplete`: before the date that is information, after it a
warning, because a plan that quietly stops short is how an unwelcome result goes unreported.
A23 compares the date with today's date (UTC), so the same ledger can gain that finding as
time passes. Thresholds and the reasons behind them: docs/audit.md.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

from logbook.analysis.audit.context import Context, at
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import PlanView, RunView
from logbook.findings import Finding

# A05: what an amendment may not change once a plan's runs have begun.
GOALPOSTS = ("metric", "success", "failure", "min_effect", "alpha", "analysis", "exclusions",
             "max_missing_rate", "suite", "pinned")


@rule("A03", severity="warning", title="plan after data",
      finds="exploratory runs on the plan's suite, or on part of it, with its arms' apparatus "
      "were appended before the plan")
def plan_after_data(ctx: Context) -> Iterator[Finding]:
    calibration = ctx.band_runs  # runs a band was measured from calibrate, not explore
    explored = [r for r in ctx.view.runs if r.plan is None and r.usable
                and r.digest not in calibration]
    for plan in ctx.scoped_plans() if explored else []:
        arms = [shared_apparatus(ctx, plan.arm_runs(a["name"])) for a in plan.arms()]
        variable = set(ctx.body(plan).get("variable") or [])
        found = [r for r in explored if r.seq < plan.seq and same_suite(plan, r)
                 and any(agrees(without_suite(ctx.apparatus(r)), app, variable)
                         for app in arms)]
        if found:
            yield Finding("A03", "warning", f"plan {plan.slug} @{plan.seq} was appended after "
                          f"{len(found)} exploratory run(s) on its suite (or part of it) with "
                          f"the apparatus of its arms ({at(found)}): it may have been written "
                          "after seeing them",
                          plan.seq, [plan.digest, *(r.digest for r in found)])


SUITE_FIELDS = ("dataset_hash", "item_ids_hash")


def without_suite(app: dict[str, Any]) -> dict[str, Any]:
    """An apparatus without the fields that name its dataset: `same_suite` judges those (a
    run on part of the suite has a dataset identity of its own)."""
    return {k: v for k, v in app.items() if k not in SUITE_FIELDS}


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
    """The run's dataset (or item-ids) hash is the plan's or its runs'; else the same items.
    A run on another split of the plan's suite (docs/recording.md, "Suites and held-out
    splits") is on the plan's data only if it holds items of the plan's runs."""
    split = (plan.original.get("suite") or {}).get("split")
    theirs = run.apparatus.get("split")
    if split and isinstance(theirs, str) and theirs != split:
        done = [r for r in plan.runs if r.status == "completed"]
        return bool(done) and not set(run.item_scores).isdisjoint(done[0].item_scores)

    def hash_of(r: RunView) -> Any:
        return r.apparatus.get("dataset_hash") or r.apparatus.get("item_ids_hash")

    hashes = {(plan.original.get("suite") or {}).get("dataset_hash")} | set(map(hash_of,
                                                                              plan.runs))
    hashes.discard(None)
    if hash_of(run) and hashes and hash_of(run) in hashes:
        return True
    done = [r for r in plan.runs if r.status == "completed"]
    if not done:
        return False
    if part_of(run, done):
        return True
    if hash_of(run) and hashes:
        return False
    mine, theirs = run.facts, done[0].facts
    if mine is not None and theirs is not None and mine.items == theirs.items:
        return True  # the same item ids, in the same order
    return set(run.item_scores) == set(done[0].item_scores)


PART_MIN = 0.05  # A03: a run on at least this share of the plan's items looked at the suite


def part_of(run: RunView, done: list[RunView]) -> bool:
    """The run's items are part of the plan's (its dataset identity differs, as a limited run's
    does): every one of its ids is an id of the plan's runs, not all of them (the same ids
    under another dataset identity are another suite numbered alike), and at least PART_MIN of
    them (and five)."""
    mine = set(run.item_scores)
    theirs = set().union(*(set(r.item_scores) for r in done[:3]))
    return bool(mine) and mine < theirs and len(mine) >= max(5, PART_MIN * len(theirs))


@rule("A04", severity="error", title="optional stopping",
      finds="an arm has more completed runs than planned, or an amendment changed the run "
      "count after runs began")
def optional_stopping(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        cut = next((c.seq for c in ctx.claims if c.plan is plan), None)  # later runs: not A04
        planned = int(ctx.body(plan).get("runs_per_arm") or 0)
        for arm in [a["name"] for a in plan.arms()]:
            runs = [r for r in plan.arm_runs(arm) if r.usable and (cut is None or r.seq < cut)]
            if planned and len(runs) > planned:
                extra = runs[planned:]
                said = [f"@{r.seq}: {r.body['beyond_plan']}" for r in extra
                        if r.body.get("beyond_plan")]
                why = f"; said beyond the plan: {'; '.join(said)}" if said else ""
                yield Finding("A04", "error", f"arm {arm} of plan {plan.slug} has {len(runs)} "
                              f"completed runs, more than the {planned} the plan set "
                              f"({at(extra)} came after){why}", extra[0].seq,
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


@rule("A05", severity="error", title="goalposts moved",
      finds="an amendment changed the metric, criteria, minimum effect, analysis or "
      "exclusions after the first run")
def goalposts_moved(ctx: Context) -> Iterator[Finding]:
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


@rule("A17", severity="info", title="unanchored plan",
      finds="no checkpoint was made between a plan and its first run")
def unanchored_plan(ctx: Context) -> Iterator[Finding]:
    for plan in ctx.scoped_plans():
        first = plan.runs[0] if plan.runs else None
        if first and not any(plan.seq < s <= first.seq for s in ctx.checkpoint_sizes):
            yield Finding("A17", "info", f"plan {plan.slug} @{plan.seq}: no checkpoint was made "
                          f"between it and its first run @{first.seq}, so nothing outside the "
                          "ledger shows the plan came first", plan.seq,
                          [plan.digest, first.digest])


def today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


@rule("A23", severity="warning", title="past due",
      finds="a plan's due date has passed and it has no verdict (info before the date)")
def past_due(ctx: Context) -> Iterator[Finding]:
    now = today()
    for plan in ctx.scoped_plans():
        body = ctx.body(plan)
        due = body.get("due")
        if not isinstance(due, str):
            continue
        try:
            date = datetime.date.fromisoformat(due)
        except ValueError:
            continue
        planned = int(body.get("runs_per_arm") or 0)
        counts = {a["name"]: len(ctx.usable(plan.runs, a["name"])) for a in plan.arms()}
        short = {name: n for name, n in counts.items() if n < planned}
        if not short:
            continue  # every arm has its runs: the plan has a verdict
        done = ", ".join(f"{name} {n}/{planned}" for name, n in counts.items())
        if date < now:
            yield Finding("A23", "warning", f"plan {plan.slug} was due {due} and has no verdict "
                          f"yet ({done} completed runs): report it, or amend or retract it "
                          "saying why", plan.seq, [plan.digest])
        else:
            yield Finding("A23", "info", f"plan {plan.slug} is due {due} ({(date - now).days} "
                          f"day(s) left) and has no verdict yet ({done} completed runs)",
                          plan.seq, [plan.digest])
