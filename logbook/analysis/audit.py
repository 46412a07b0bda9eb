"""`logbook audit`: numbered rules over the whole ledger that find how a benchmark number lies.

Each rule (A01-A23, listed in `audit_registry`, in modules by theme) is one small
function over a read-only `Context` built on `LedgerView`; it yields `Finding`s (the shape
`logbook verify` uses, with the rule id as `check`). Rules never judge a retracted entry as if
it stood: retracted claims, plans, amendments and bands are not judged, and retracted runs are
neither support nor omissions.
The same ledger gives the same findings in the same order. Thresholds: docs/audit.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from statistics import NormalDist
from typing import Any

from logbook.analysis.audit_registry import RULE_MODULES, RULES
from logbook.analysis.view import LedgerView, PlanView, RunView, is_identity
from logbook.errors import InputError
from logbook.findings import Finding
from logbook.format.metrics import BOUNDED_KINDS
from logbook.ledger.service import Entry
from logbook.model import apply_amendments

SEVERITIES = ("error", "warning", "info")
# A number as printed: not part of a word ("q8", "b1234", "v2.1"); a sign is kept apart.
NUMBER = re.compile(r"(?<![\w.])[-+\u2212]?(\d+(?:\.\d+)?)(?![\w])")

@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    title: str
    description: str
    check: Callable[[Context], Iterable[Finding]]

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "severity": self.severity, "title": self.title,
                "description": self.description}


@dataclass
class Claim:
    """A claim as the audit reads it: its plan (None when unplanned), arms and cited runs."""

    entry: Entry
    plan: PlanView | None
    arms: list[str]
    figure: str
    cited: list[str]

    seq: int = field(init=False)
    digest: str = field(init=False)
    body: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.seq, self.digest, self.body = self.entry.seq, self.entry.digest, self.entry.body

    def evidence(self, *more: str) -> list[str]:
        head = [self.digest] + ([self.plan.digest] if self.plan else [])
        return head + [d for d in more if d not in head]


@dataclass
class Context:
    """What every rule reads, computed once per audit; `scope` limits work to one plan."""

    view: LedgerView
    scope: str | None = None
    _scores: dict[int, float | None] = field(default_factory=dict)
    _keys: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    _item_var: dict[int, tuple[float, int]] = field(default_factory=dict)

    # -- entries ---------------------------------------------------------------------------
    def retracted(self, digest: str) -> bool:
        return bool(self.view.retracted_by(digest))

    def in_scope(self, plan_digest: str | None) -> bool:
        return self.scope is None or plan_digest == self.scope

    @cached_property
    def plans(self) -> list[PlanView]:
        """Plans that stand (not retracted), in ledger order."""
        return [p for p in self.view.plans.values() if not p.retracted_by]

    def scoped_plans(self) -> list[PlanView]:
        return [p for p in self.plans if self.in_scope(p.digest)]

    @cached_property
    def all_claims(self) -> list[Claim]:
        out = []
        for e in self.view.entries_of("claim"):
            b = e.body
            plan = self.view.plans.get(b["plan"]) if b.get("plan") else None
            arm = b.get("arm")
            arms = [str(a) for a in arm] if isinstance(arm, list) else ([str(arm)] if arm
                                                                         else [])
            figure = b.get("figure") or ("effect" if isinstance(arm, list) else "arm_mean")
            out.append(Claim(e, plan, arms, figure, list(b.get("runs") or [])))
        return out

    @cached_property
    def claims(self) -> list[Claim]:
        """Claims that stand (not retracted): the only ones judged."""
        return [c for c in self.all_claims if not self.retracted(c.digest)]

    def scoped_claims(self) -> list[Claim]:
        """Standing claims of the scoped plan (all standing claims when unscoped)."""
        return [c for c in self.claims if self.scope is None
                or (c.plan is not None and c.plan.digest == self.scope)]

    def planned_claims(self) -> list[tuple[Claim, PlanView]]:
        return [(c, c.plan) for c in self.scoped_claims() if c.plan is not None]

    def amendments(self, plan: PlanView) -> list[Entry]:
        """The plan's amendments that stand, in ledger order."""
        return [a for a in plan.amendments if not self.retracted(a.digest)]

    def body(self, plan: PlanView, before: int | None = None) -> dict[str, Any]:
        """The plan as amended by its standing amendments (those before seq `before`)."""
        changes = [a.body.get("changes", {}) for a in self.amendments(plan)
                   if before is None or a.seq < before]
        return apply_amendments(plan.original, changes)

    @cached_property
    def checkpoint_sizes(self) -> list[int]:
        """Sizes of the checkpoints kept beside the ledger whose root matches the ledger."""
        ledger = self.view.ledger
        out = set()
        for _id, size, root, _note, _created in ledger.store.checkpoints():
            if 0 < size <= self.view.size and ledger.root(size).hex() == root:
                out.add(size)
        return sorted(out)

    # -- runs --------------------------------------------------------------------------------
    def score(self, run: RunView) -> float | None:
        """The run's score (RunView.score), without building per-item dicts when it can."""
        if run.seq in self._scores:
            return self._scores[run.seq]
        oc = run.body.get("outcomes") or {}
        if oc.get("sample"):
            value = run.score
        else:  # item ids are unique without samples (the run model checks it)
            vals = [s for s in oc.get("score") or () if s is not None]
            value = sum(vals) / len(vals) if vals else None
        self._scores[run.seq] = value
        return value

    def scale(self, run: RunView) -> float:
        """The display scale of a run's figures in messages: points (100) for a proportion
        or pass@k plan, or, for a run of no plan, when every item scored 0 or 1; else 1."""
        if run.plan:
            plan = self.view.plans.get(run.plan)
            return scale_of(plan.body if plan is not None else None)
        scores = (run.body.get("outcomes") or {}).get("score") or ()
        return 100.0 if scores and all(s in (0, 1, None) for s in scores) else 1.0

    def show(self, run: RunView, value: float) -> str:
        """A figure of ``run`` as a message prints it: on the display scale, 4 digits."""
        return f"{value * self.scale(run):.4g}"

    @cached_property
    def usable_seqs(self) -> set[int]:
        """Runs that count: completed, unretracted, with a score."""
        return {r.seq for r in self.view.runs if r.usable and self.score(r) is not None}

    def usable(self, runs: Iterable[RunView], arm: str | None = None,
               before: int | None = None) -> list[RunView]:
        """Completed, unretracted runs with a score (of `arm`, appended before `before`)."""
        ok = self.usable_seqs
        return [r for r in runs if r.seq in ok and (before is None or r.seq < before)
                and (arm is None or r.arm == arm)]

    def apparatus(self, run: RunView) -> dict[str, Any]:
        """The run's apparatus without per-run identity fields (seeds, times, session...)."""
        return {k: v for k, v in run.apparatus.items() if not identity(k)}

    def apparatus_key(self, run: RunView) -> tuple[Any, ...]:
        """Identical apparatus: same suite, metric and every non-identity apparatus field."""
        if run.seq not in self._keys:
            self._keys[run.seq] = self.view.apparatus_key(run)
        return self._keys[run.seq]


identity = cache(is_identity)


def at(runs: list[RunView]) -> str:
    return ", ".join(f"@{r.seq}" for r in runs)


def comparisons(plan: PlanView) -> list[tuple[str | None, str]]:
    """(control, treatment) pairs; a plan with no treatment tests its first arm alone."""
    roles = {role: [a["name"] for a in plan.arms() if a.get("role") == role]
             for role in ("control", "treatment")}
    if roles["control"] and roles["treatment"]:
        return [(roles["control"][0], t) for t in roles["treatment"]]
    return [(None, plan.arms()[0]["name"])] if plan.arms() else []


def scale_of(plan_body: dict[str, Any] | None) -> float:
    if plan_body is None:
        return 1.0
    return 100.0 if (plan_body.get("metric") or {}).get("kind") in BOUNDED_KINDS else 1.0


def printed_numbers(text: str) -> list[tuple[str, float, int]]:
    """(text, absolute value, decimals printed) of every number in a statement."""
    out = []
    for m in NUMBER.finditer(text):
        digits = m.group(1)
        out.append((m.group(0), float(digits),
                    len(digits.split(".")[1]) if "." in digits else 0))
    return out


def matches(printed: float, decimals: int, target: float) -> bool:
    """Whether `printed` is `target` rounded to `decimals` places (signs set aside)."""
    return abs(printed - abs(target)) <= 0.5 * 10.0 ** -decimals + 1e-9 * max(1.0, abs(target))


def statement_figures(claim: Claim, targets: Iterable[float]) -> list[tuple[int, float]]:
    """(decimals, scale) of each statement number that prints one of `targets` (the value or
    an interval bound) at a scale the plan allows: percent for proportions, or as is."""
    body = claim.plan.body if claim.plan else None
    scales = [scale_of(body), 1.0] if scale_of(body) != 1.0 else [1.0]
    if body is None and all(0 <= abs(t) <= 1 for t in targets):
        scales = [100.0, 1.0]
    out = []
    for _text, value, decimals in printed_numbers(str(claim.body.get("statement", ""))):
        for scale in scales:
            if any(matches(value, decimals, t * scale) for t in targets):
                out.append((decimals, scale))
                break
    return out


def mean_sd(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    # d * d, not d ** 2: a huge score gives inf, where ** raises OverflowError
    var = sum((x - m) * (x - m) for x in xs) / (len(xs) - 1) if len(xs) > 1 else 0.0
    return m, math.sqrt(var)


def missing(run: RunView, n_items: int) -> tuple[int, int]:
    """(missing, denominator) as RunView.missing counts them, without per-item dicts."""
    oc = run.body.get("outcomes") or {}
    if oc.get("sample"):
        return run.missing(n_items)
    scores = oc.get("score") or []
    total = max(n_items, len(scores))
    return total - (len(scores) - scores.count(None)), total


def two_proportion_p(m0: int, n0: int, m1: int, n1: int) -> float | None:
    """Two-sided p of a two-proportion z-test (pooled); None when it cannot be computed."""
    if not n0 or not n1:
        return None
    pooled = (m0 + m1) / (n0 + n1)
    if pooled in (0.0, 1.0):
        return None
    z = abs(m0 / n0 - m1 / n1) / math.sqrt(pooled * (1 - pooled) * (1 / n0 + 1 / n1))
    return math.erfc(z / math.sqrt(2))


def interval_p(claim: Claim, alpha: float) -> float:
    """Approximate two-sided p of an effect from its interval: se = width / (2 z), normal."""
    low, high = (float(x) for x in claim.body["interval"])
    value = float(claim.body["value"])
    z = NormalDist().inv_cdf(1 - alpha / 2)
    se = (high - low) / (2 * z)
    if se <= 0:
        return 1.0 if value == 0 else 0.0
    return math.erfc(abs(value / se) / math.sqrt(2))


def scored_items(run: RunView) -> int:
    oc = run.body.get("outcomes") or {}
    if oc.get("sample"):
        return int(sum(1 for v in run.item_scores.values() if v is not None))
    return sum(1 for s in oc.get("score") or () if s is not None)


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def short(digest: str) -> str:
    return digest[:12]


# -- running -----------------------------------------------------------------------------------
def rules() -> list[Rule]:
    import importlib

    modules = [importlib.import_module(f"logbook.analysis.{m}") for m in RULE_MODULES]

    def check(fn: str) -> Callable[[Context], Iterable[Finding]]:
        return next(getattr(m, fn) for m in modules if hasattr(m, fn))

    return [Rule(rid, sev, title, what, check(fn)) for rid, (sev, title, what, fn)
            in RULES.items()]


def select_rules(only: Iterable[str] = (), skip: Iterable[str] = ()) -> list[Rule]:
    """The rules to run; InputError naming an id that is not a rule."""
    known = {r.id: r for r in rules()}

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
              skip: Iterable[str] = ()) -> dict[str, Any]:
    """Every finding of the selected rules (those that concern `plan`, when given)."""
    selected = select_rules(only, skip)
    scope = view.plan(plan).digest if plan else None
    ctx = Context(view, scope)
    found: list[Finding] = []
    for rule in selected:
        for f in rule.check(ctx):
            if scope is None or scope in f.entries:
                found.append(f)
    found.sort(key=lambda f: (f.check, -1 if f.seq is None else f.seq, f.message, f.entries))
    retracted = sum(1 for targets in view.retractions.values() if targets)
    return {"ok": not any(f.severity == "error" for f in found),
            "findings": found, "rules_run": [r.id for r in selected],
            "entries": view.size, "plan": scope, "retracted_entries": retracted}


def findings_for_plan(view: LedgerView, plan_digest: str) -> list[Finding]:
    """The audit's findings that concern one plan (for `report` and `claim check`)."""
    return list(run_audit(view, plan_digest)["findings"])


def as_json(result: dict[str, Any]) -> dict[str, Any]:
    return {**result, "findings": [f.as_dict() for f in result["findings"]]}


def audit_lines(result: dict[str, Any]) -> Iterator[str]:
    findings: list[Finding] = result["findings"]
    for i, f in enumerate(findings, 1):
        where = f" @{f.seq}" if f.seq is not None else ""
        yield f"{i}. {f.check} [{f.severity}]{where}: {f.message}"
        if f.entries:
            yield "   entries: " + ", ".join(short(d) for d in f.entries)
    counts = {s: sum(1 for f in findings if f.severity == s) for s in SEVERITIES}
    tail = f"{plural(len(result['rules_run']), 'rule')} over {result['entries']} entries"
    if result["retracted_entries"]:
        tail += (f"; {plural(result['retracted_entries'], 'retracted entry', 'retracted entries')}"
                 " not judged as if they stood (`logbook log --kind retraction` lists them)")
    if findings:
        yield (f"{len(findings)} finding(s): " + ", ".join(f"{n} {s}" for s, n in counts.items()
                                                             if n) + f" ({tail})")
    else:
        yield f"no findings ({tail})"
