"""The audit's rules about what a claim's statement says: A02 (best of N) and A13 (false
precision, or another figure than the claim's).

The figures of a statement are its numbers with a unit of the metric's display scale (`%`,
"points", "pp") and the numbers of a range ("69-72", "-4 to +1"); counts ("3 runs", "n=200")
are not figures. Each figure must print the claim's value or a bound of its interval, an arm's
mean at the time, or a number the plan itself set (its min_effect or a criterion's value), at
no more digits than the interval supports. Thresholds and reasons: docs/audit.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from logbook.analysis.audit.context import Claim, Context, scale_of
from logbook.analysis.audit.registry import rule
from logbook.analysis.view import PlanView
from logbook.findings import Finding
from logbook.format.metrics import BOUNDED_KINDS
from logbook.stats.rounding import half_unit, rounds_to
from logbook.stats.spread import mean_sd

EPS = 1e-9
# A number as printed: not part of a word ("q8", "b1234", "v2.1"); a sign is kept apart.
NUMBER = re.compile(r"(?<![\w.])[-+\u2212]?(\d+(?:\.\d+)?)(?![\w])")
UNIT = re.compile(r"\s*(%|percent\b|percentage points?\b|points?\b|pts?\b|pp\b)", re.I)
RANGE = re.compile(r"^\s*(?:-|\u2013|\u2014|to)\s*[-+\u2212]?\s*$")


@dataclass(frozen=True)
class Figure:
    text: str
    value: float      # as printed, sign set aside
    decimals: int
    unit: bool        # carries a unit of the display scale (%, points)


def printed_numbers(text: str) -> list[tuple[str, float, int]]:
    """(text, absolute value, decimals printed) of every number in a statement."""
    out = []
    for m in NUMBER.finditer(text):
        digits = m.group(1)
        out.append((m.group(0), float(digits),
                    len(digits.split(".")[1]) if "." in digits else 0))
    return out


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
            if any(rounds_to(value, decimals, t * scale) for t in targets):
                out.append((decimals, scale))
                break
    return out


def figures(statement: str) -> list[Figure]:
    """The statement's figures: numbers with a unit, and both ends of every range."""
    found = list(NUMBER.finditer(statement))
    unit = [bool(UNIT.match(statement, m.end())) for m in found]
    ranged = [False] * len(found)
    for i in range(len(found) - 1):
        between = statement[found[i].end():found[i + 1].start(1)]
        if RANGE.match(between):
            ranged[i] = ranged[i + 1] = True
            unit[i] = unit[i] or unit[i + 1]
    out = []
    for m, u, r in zip(found, unit, ranged, strict=True):
        if u or r:
            digits = m.group(1)
            out.append(Figure(m.group(0), float(digits),
                              len(digits.split(".")[1]) if "." in digits else 0, u))
    return out


COUNTED = re.compile(r"\s*[A-Za-z]")  # "3 runs", "200 items": a count, not a figure


def quoted(statement: str) -> list[Figure]:
    """Every number that may quote a score (A02): the figures, and the bare numbers that are
    not counts: those with decimals ("88.0", "0.880") and those no word follows ("scores
    88")."""
    out = figures(statement)
    seen = {f.text for f in out}
    for m in NUMBER.finditer(statement):
        digits = m.group(1)
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        if m.group(0) in seen or (not decimals and COUNTED.match(statement, m.end())):
            continue
        out.append(Figure(m.group(0), float(digits), decimals, False))
    return out


def scales(ctx: Context, claim: Claim, fig: Figure) -> list[float]:
    """The scales a figure may print on: points for a proportion's figure with a unit, and
    as a fraction too when it has none."""
    body = ctx.body(claim.plan) if claim.plan else None
    percent = body is None or (body.get("metric") or {}).get("kind") in BOUNDED_KINDS
    if not percent:
        return [1.0]
    return [100.0] if fig.unit else [100.0, 1.0]


def allowed(ctx: Context, claim: Claim) -> list[float]:
    """What a figure may print besides the value and the interval: arms' means at the time
    of the claim, and the plan's own numbers (min_effect, criteria values)."""
    c, plan = claim, claim.plan
    out = [float(x) for x in c.body["interval"]] + [float(c.body["value"])]
    if plan is None:
        return out
    body = ctx.body(plan, before=c.seq)
    out += [float(body.get("min_effect") or 0.0)]
    out += [float(x["value"]) for k in ("success", "failure") for x in body.get(k) or []]
    for arm in body.get("arms") or []:
        xs = ctx.scores(ctx.usable(plan.runs, arm.get("name"), before=c.seq))
        if xs:
            out.append(mean_sd(xs)[0])
        if arm.get("expected") is not None:
            out.append(float(arm["expected"]))
    return out


def best_picks(ctx: Context, c: Claim, plan: PlanView) -> tuple[list[float], float, int, int]:
    """(figures the best run gives, the honest mean figure, the best run's seq, runs) for the
    claim's last arm; picks is empty with fewer than two runs."""
    hib = bool((ctx.body(plan).get("metric") or {}).get("higher_is_better", True))
    best, worst = (max, min) if hib else (min, max)
    top = ctx.usable(plan.runs, c.arms[-1], before=c.seq) if c.arms else []
    if len(top) < 2:
        return [], 0.0, 0, len(top)
    xs = ctx.scores(top)
    star, honest, picks = top[xs.index(best(xs))], mean_sd(xs)[0], [best(xs)]
    if c.figure == "effect" and len(c.arms) == 2:
        ys = ctx.scores(ctx.usable(plan.runs, c.arms[0], before=c.seq))
        if not ys:
            return [], 0.0, 0, len(top)
        base = mean_sd(ys)[0]
        honest, picks = honest - base, [best(xs) - base, best(xs) - worst(ys)]
    return picks, honest, star.seq, len(top)


def plan_scale(c: Claim) -> float:
    """The display scale of a claim's figures: its plan's (points for a proportion)."""
    return scale_of(c.plan.body if c.plan is not None else None)


@rule("A02", severity="error", title="best of N",
      finds="a claimed figure is the best single run of an arm, not the mean, beyond what "
      "rounding explains")
def best_of_n(ctx: Context) -> Iterator[Finding]:
    for c, plan in ctx.planned_claims():
        value = float(c.body["value"])
        picks, honest, star, n = best_picks(ctx, c, plan)
        if not picks:
            continue
        tol = max(min((half_unit(d, s) for d, s in statement_figures(c, [value])),
                      default=EPS), EPS)
        said = None
        if any(abs(value - p) <= tol for p in picks) and abs(value - honest) > tol:
            said = f"gives {value * plan_scale(c):.4g}"
        else:  # the statement may quote the best run whatever the value says
            targets = allowed(ctx, c)  # a figure that prints one of these is accounted for
            for fig in quoted(str(c.body.get("statement", ""))):
                for scale in scales(ctx, c, fig):
                    half = half_unit(fig.decimals, scale) + EPS
                    if (any(abs(fig.value / scale - abs(p)) <= half for p in picks)
                            and abs(fig.value / scale - abs(honest)) > half
                            and not any(rounds_to(fig.value, fig.decimals, t * scale)
                                        for t in targets)):
                        said = f"says {fig.text!r}"
                        break
                if said:
                    break
        if said:
            run = ctx.view.runs_by_digest[next(r.digest for r in plan.runs if r.seq == star)]
            best = ctx.show(run, ctx.score(run) or 0.0)
            yield Finding("A02", "error", f"claim @{c.seq} {said}, which is what the best of "
                          f"{n} runs of {c.arms[-1]} (@{star}, {best}) gives, not the mean of "
                          f"them all ({honest * plan_scale(c):.4g})", c.seq,
                          c.evidence(run.digest))


@rule("A13", severity="warning", title="false precision",
      finds="a claim's statement prints more digits than its interval supports")
def false_precision(ctx: Context) -> Iterator[Finding]:
    from logbook.stats import decimals_supported

    for c in ctx.scoped_claims():
        low, high = (float(x) for x in c.body["interval"])
        statement = str(c.body.get("statement", ""))
        found = None
        for decimals, scale in statement_figures(c, [float(c.body["value"]), low, high]):
            supported = decimals_supported(low, high, scale)
            if decimals > supported:
                shown = next(t for t, _v, d in printed_numbers(statement) if d == decimals)
                found = (f"prints {shown!r} with {decimals} decimal(s), but its interval "
                         f"({low * scale:.4g} to {high * scale:.4g}) supports {supported} in "
                         f"{'percent' if scale == 100 else 'metric units'}")
                break
        if found is None:
            found = another_figure(ctx, c)
        if found:
            yield Finding("A13", "warning", f"claim @{c.seq} {found}", c.seq, c.evidence())


def another_figure(ctx: Context, c: Claim) -> str | None:
    """A figure of the statement that prints none of the numbers the claim may print (a best
    run's figure is A02's); None when every figure is accounted for."""
    targets = allowed(ctx, c)
    picks = best_picks(ctx, c, c.plan)[0] if c.plan is not None else []
    for fig in figures(str(c.body.get("statement", ""))):
        sc = scales(ctx, c, fig)
        if any(rounds_to(fig.value, fig.decimals, t * s) for t in targets for s in sc):
            continue
        if any(rounds_to(fig.value, fig.decimals, p * s) for p in picks for s in sc):
            continue  # the best run's figure: A02
        value, (low, high) = float(c.body["value"]), c.body["interval"]
        return (f"says {fig.text!r}{'' if fig.unit else ' (in a range)'}, which is neither its "
                f"value ({value * plan_scale(c):.4g}) nor a bound of its interval "
                f"({low * plan_scale(c):.4g} to {high * plan_scale(c):.4g}) on "
                f"the metric's display scale: the statement gives another figure than the claim")
    return None
