"""`logbook audit`: numbered rules over the whole ledger that find how a benchmark number lies.

Each rule (A01-A25) is one small function, registered with `@rule` (`registry`) in a module of
`rules/` by theme, over a read-only `Context` (`context`) built once per audit on `LedgerView`;
it yields `Finding`s (the shape `logbook verify` uses, with the rule id as `check`). Rules never
judge a retracted entry as if it stood: retracted claims, plans, amendments and bands are not
judged, and retracted runs are neither support nor omissions. This module runs them: the same
ledger gives the same findings in the same order (`AuditResult`). Thresholds: docs/audit.md.

Imports go one way: this runner -> registry and rules -> context and its helpers.
"""

from __future__ import annotations

from collections.abc import Iterable

from logbook.analysis.audit import rules as _rules  # noqa: F401 -- registers every rule
from logbook.analysis.audit.context import Context
from logbook.analysis.audit.registry import Rule, registered
from logbook.analysis.audit.result import AuditResult
from logbook.analysis.view import LedgerView
from logbook.errors import InputError
from logbook.findings import Finding


def select_rules(only: Iterable[str] = (), skip: Iterable[str] = ()) -> list[Rule]:
    """The rules to run, in id order; InputError naming an id that is not a rule."""
    known = {r.id: r for r in registered()}

    def ids(values: Iterable[str], option: str) -> set[str]:
        out = set()
        for v in values:
            for part in v.split(","):
                rid = part.strip().upper()
                if not rid:
                    continue
                if rid not in known:
                    raise InputError(f"{option} {part.strip()!r} is not an audit rule "
                                     f"(see `logbook audit --rules`: {min(known)} to {max(known)})")
                out.add(rid)
        return out

    wanted, unwanted = ids(only, "--only"), ids(skip, "--skip")
    if any(True for _ in only) and not wanted:
        raise InputError("--only names no rule (give ids such as A01,A02)")
    return [r for r in known.values() if (not wanted or r.id in wanted)
            and r.id not in unwanted]


def run_audit(view: LedgerView, plan: str | None = None, only: Iterable[str] = (),
              skip: Iterable[str] = ()) -> AuditResult:
    """Every finding of the selected rules (those that concern `plan`, when given)."""
    selected = select_rules(only, skip)
    scope = view.plan(plan).digest if plan else None
    ctx = Context(view, scope)
    found: list[Finding] = []
    for r in selected:
        for f in r.check(ctx):
            if scope is None or scope in f.entries:
                found.append(f)
    found.sort(key=lambda f: (f.check, -1 if f.seq is None else f.seq, f.message, f.entries))
    retracted = sum(1 for targets in view.retractions.values() if targets)
    return AuditResult(ok=not any(f.severity == "error" for f in found), findings=found,
                       rules_run=[r.id for r in selected], entries=view.size, plan=scope,
                       retracted_entries=retracted)


def findings_for_plan(view: LedgerView, plan_digest: str) -> list[Finding]:
    """The audit's findings that concern one plan (for `report` and `claim check`)."""
    return list(run_audit(view, plan_digest).findings)
