"""Claims: the only analysis output that writes to the ledger.

`logbook claim PLAN --statement TEXT` computes the report at the current head and appends a
`claim` with the figure, its interval, every run it rests on, and the ledger size and Merkle root
it was computed at. `logbook claim check REF` recomputes it and says whether it still stands.
"""

from __future__ import annotations

from typing import Any

from logbook.analysis.arm_shapes import ArmReport
from logbook.analysis.report import build_report
from logbook.analysis.report_shapes import Report
from logbook.analysis.view import LedgerView
from logbook.errors import InputError


def _counted(arm: ArmReport) -> list[str]:
    """The digests of the arm's runs that count: completed and not retracted."""
    return [r.digest for r in arm.runs if r.status == "completed" and not r.retracted]


def _figure(rep: Report, arm: str | None, effect: str | None) -> dict[str, Any]:
    """The claimed figure: an arm's mean, or a treatment's effect over the control."""
    if arm is not None and effect is not None:
        raise InputError("give --arm or --effect, not both")
    arms = {a.name: a for a in rep.arms}
    effects = [e for e in rep.effects if e.point is not None]
    if arm is None and (effect is not None or effects):
        chosen = next((e for e in effects if effect is None or e.treatment == effect), None)
        if chosen is None:
            raise InputError(f"--effect {effect!r}: no computable effect for that treatment arm"
                             if effect else "the plan has no computable effect yet")
        return {"figure": "effect", "arm": [chosen.control, chosen.treatment],
                "value": chosen.point, "interval": [chosen.low, chosen.high],
                "method": chosen.method,
                "runs": [*_counted(arms[chosen.control]), *_counted(arms[chosen.treatment])]}
    name = arm or rep.arms[0].name
    if name not in arms:
        raise InputError(f"--arm {name!r} is not an arm of the plan")
    a = arms[name]
    if a.mean is None or a.interval is None:
        raise InputError(f"arm {name!r} has no figure yet (no completed runs)")
    return {"figure": "arm_mean", "arm": name, "value": a.mean,
            "interval": [a.interval.low, a.interval.high], "method": a.interval.kind,
            "runs": _counted(a)}


def claim_body(view: LedgerView, plan_ref: str, statement: str, arm: str | None = None,
               effect: str | None = None) -> dict[str, Any]:
    rep = build_report(view, plan_ref)
    fig = _figure(rep, arm, effect)
    size = view.size
    return {"statement": statement, "plan": rep.plan["digest"], "arm": fig["arm"],
            "value": fig["value"], "interval": fig["interval"], "runs": fig["runs"],
            "ledger_size": size, "ledger_root": view.ledger.root(size).hex(),
            "figure": fig["figure"], "method": fig["method"]}


def check_claim(view: LedgerView, ref: str) -> dict[str, Any]:
    """Whether a claim still stands: its runs, retractions and new runs since, the figure now."""
    entry = view.ledger.get(ref)
    if entry.kind != "claim":
        raise InputError(f"REF {ref}: entry @{entry.seq} is a {entry.kind}, not a claim")
    body = entry.body
    problems: list[str] = []
    if view.retracted_by(entry.digest):
        problems.append("the claim itself has been retracted")
    retracted = [d for d in body.get("runs", []) if view.retracted_by(d)]
    if retracted:
        problems.append(f"{len(retracted)} run(s) it rests on have been retracted")
    out: dict[str, Any] = {"claim": entry.digest, "seq": entry.seq,
                           "statement": body.get("statement"), "value": body.get("value"),
                           "interval": body.get("interval"), "retracted_runs": retracted,
                           "new_runs": [], "now": None, "scale": 1.0}
    if body.get("plan"):
        plan = view.plans.get(body["plan"])
        if plan is not None:  # the display scale of its figures (JSON keeps fractions)
            from logbook.analysis.display import scale_of

            out["scale"] = scale_of((plan.body.get("metric") or {}).get("kind"))
        arms = body["arm"] if isinstance(body.get("arm"), list) else [body.get("arm")]
        if plan is not None:
            out["new_runs"] = [r.digest for r in plan.runs
                               if r.seq >= body["ledger_size"] and r.arm in arms]
            if out["new_runs"]:
                problems.append(f"{len(out['new_runs'])} run(s) of its arms were appended since")
            try:
                rep = build_report(view, body["plan"])
                fig = _figure(rep, None if body.get("figure") == "effect" else body.get("arm"),
                              arms[-1] if body.get("figure") == "effect" else None)
                out["now"] = {"value": fig["value"], "interval": fig["interval"]}
                low, high = fig["interval"]
                if not low <= body["value"] <= high:
                    s = out["scale"]
                    problems.append(f"the claimed figure {body['value'] * s:.4g} lies outside "
                                    f"the interval the ledger gives now ({low * s:.4g} to "
                                    f"{high * s:.4g})")
            except InputError as exc:
                problems.append(f"the figure cannot be recomputed now: {exc}")
    out["search_budget"] = None
    if body.get("plan") and view.plans.get(body["plan"]) is not None:
        from logbook.analysis.checks import search_budget

        out["search_budget"] = search_budget(view, view.plans[body["plan"]])
    out["reproduced_by"] = reproduced_by(view, body)
    out["findings"] = [f.as_dict() for f in audit_of(view, entry)]
    problems += [f"the audit finds an error: {f['check']} {f['message']}"
                 for f in out["findings"] if f["severity"] == "error"]
    out["stands"] = not problems
    out["problems"] = problems
    return out


def reproduced_by(view: LedgerView, body: dict[str, Any]) -> list[str]:
    """The signers other than the runs' own who reproduced a run the claim rests on and
    agreed (logbook.analysis.reproductions, at the plan's confidence), sorted."""
    from logbook.analysis.reproductions import reproductions

    cited = set(body.get("runs") or [])
    runs = [r for r in view.runs if r.digest in cited] if cited else []
    if not runs or not view.reproducers:
        return []
    plan = view.plans.get(str(body.get("plan")))
    confidence = 1 - float(plan.body.get("alpha", 0.05)) if plan is not None else 0.95
    return sorted({x.as_json()["signer"] for x in reproductions(view, runs, confidence)
                   if x.independent and x.agrees})


def audit_of(view: LedgerView, entry: Any) -> list[Any]:
    """The audit's findings about the claim or its plan: the plan's findings, less those
    about another claim of it (each claim answers for itself), and, for an unplanned claim,
    those that name it. A claim does not stand while one of them is an error."""
    from logbook.analysis.audit import findings_for_plan, run_audit

    plan = entry.body.get("plan")
    found = findings_for_plan(view, plan) if plan else list(run_audit(view).findings)
    claims = {e.digest for e in view.ledger.log(kind="claim")}
    return [f for f in found
            if entry.digest in f.entries
            or (plan and not (f.entries and f.entries[0] in claims))]
