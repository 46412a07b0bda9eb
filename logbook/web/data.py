"""What each page shows, as JSON-ready data: the page's JSON twin, and what its HTML is drawn
from (so the two never disagree).

Everything is read through the analysis and ledger APIs inside the read transaction the
integrity check just covered (logbook.verify.integrity): the view (`LedgerView`), the report
(`report_json`), the brief (`brief_json`), the audit (`run_audit`) and the ledger's read
methods. Nothing here opens a store or writes. The runs table and a run's page are
logbook.web.runs_data's, from the rows of a run made here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logbook.analysis.view import LedgerView, PlanView, RunView
from logbook.errors import InputError
from logbook.ledger.service import Ledger
from logbook.verify.integrity import Verified


class NotFound(InputError):
    """A page's path names no entry of the kind it shows (HTTP 404)."""


@dataclass
class Source:
    """One request's reading of the ledger: the ledger, its view, what the check covered."""

    ledger: Ledger
    view: LedgerView
    checked: Verified


def report_of(view: LedgerView, plan: str) -> Any:
    """The report of one plan with its audit findings, as `logbook report` builds it
    (logbook.analysis.report.report_with_findings)."""
    from logbook.analysis.report import report_with_findings

    return report_with_findings(view, plan)


def report_json(view: LedgerView, plan: str) -> dict[str, Any]:
    """`report --json` for one plan, findings included."""
    out: dict[str, Any] = report_of(view, plan).as_json()
    return out


def brief_json(ledger: Ledger, checked: Verified) -> dict[str, Any]:
    """`brief --json`: the one place web/ builds a brief."""
    from logbook.analysis.brief import build_brief

    b: Any = build_brief(ledger, verified=checked.as_dict())
    return b.as_json() if hasattr(b, "as_json") else dict(b)


def integrity(src: Source) -> dict[str, Any]:
    return {**src.checked.as_dict(), "ledger": src.ledger.uuid}


def _plan(src: Source, ref: str) -> PlanView:
    try:
        return src.view.plan(ref)
    except InputError as exc:
        raise NotFound(str(exc)) from None


def _entry_ref(src: Source, digest: str | None) -> dict[str, Any] | None:
    """A reference to another entry: its digest with the kind and seq it has here."""
    if not digest:
        return None
    found = src.ledger.reads.kind_of(str(digest))
    seq, kind = found if found else (None, None)
    return {"digest": str(digest), "seq": seq, "kind": kind}


LATEST = 10  # plans and runs the overview lists, the latest first


def overview(src: Source) -> dict[str, Any]:
    """Results first: the latest plans' verdicts and effects, the latest runs with their
    figures, what `brief` says is open, and the integrity line; keys, hashes and roots are
    `integrity`'s, every plan is `plans`'."""
    led = src.ledger
    b = brief_json(led, src.checked)
    plans_shown = []
    standing = [p for p in src.view.plans.values() if not p.retracted_by]
    for plan in sorted(standing, key=lambda p: p.seq)[-LATEST:][::-1]:
        rep = report_json(src.view, plan.digest)
        effect = (rep.get("effects") or [None])[0]
        plans_shown.append({
            "slug": plan.slug, "digest": plan.digest, "seq": plan.seq,
            "title": plan.body.get("title"), "verdict": rep["verdict"]["status"],
            "metric": (plan.body.get("metric") or {}).get("name"),
            "effect": None if not effect else {
                "label": effect.get("label"), "point": effect.get("point"),
                "low": effect.get("low"), "high": effect.get("high"),
                "unit": effect.get("unit")},
            "scale": _scale(plan.body)})
    latest = sorted(src.view.runs, key=lambda r: r.seq)[-LATEST:][::-1]
    return {
        "ledger": {"name": led.name, "size": src.view.size},
        "integrity": integrity(src),
        "plans": plans_shown, "plans_total": len(standing),
        "latest_runs": [run_columns(src, r, run_row(src, r)) for r in latest],
        "open_plans": b.get("open_plans", []), "claims": b.get("claims", []),
        "notes": b.get("notes", []), "next": b.get("next", [])}


def integrity_page(src: Source) -> dict[str, Any]:
    """What the overview leaves out: the ledger's uuid and head, its entries by kind, the
    latest checkpoint and the signing keys."""
    led = src.ledger
    checkpoints = led.entry_log.checkpoints()
    counts: dict[str, int] = {}
    for e in led.entries():
        counts[e.kind] = counts.get(e.kind, 0) + 1
    return {
        "ledger": {"name": led.name, "uuid": led.uuid, "size": src.view.size,
                   "head": src.checked.head, "kinds": counts},
        "integrity": integrity(src),
        "latest_checkpoint": None if not checkpoints else {
            "size": checkpoints[-1][1], "root": checkpoints[-1][2],
            "created": checkpoints[-1][4], "note": checkpoints[-1][3]},
        "keys": [{"fingerprint": fp, "name": name, "public": public, "added": added,
                  "revoked": revoked}
                 for fp, name, public, added, revoked in led.reads.signing_keys()]}


def _scale(plan_body: dict[str, Any] | None) -> int:
    """100 for a plan whose metric is a share (printed in points), else 1."""
    kind = ((plan_body or {}).get("metric") or {}).get("kind")
    return 100 if kind in ("proportion", "pass_at_k") else 1


def run_columns(src: Source, run: RunView, row: dict[str, Any]) -> dict[str, Any]:
    """A run's row with what people read a run by: model, suite, metric, harness, and its
    score's item-level interval (as `report` computes it for a plan's runs)."""
    from logbook.analysis.report.arms import run_interval

    plan = src.view.plans.get(run.plan) if run.plan else None
    body = plan.body if plan is not None else None
    app = run.apparatus
    interval = None
    if run.status == "completed" and run.score is not None:
        facts = run.figures
        kind = ((body or {}).get("metric") or {}).get("kind") or (
            "proportion" if facts is not None and facts.binary else "mean")
        cluster = (body or {}).get("cluster_field")
        try:
            iv = run_interval(run, str(kind), 0.95, cluster)
        except (ValueError, ZeroDivisionError):
            iv = None
        if iv is not None:
            interval = {"low": iv.low, "high": iv.high, "method": iv.method, "n": iv.n}
    source = run.body.get("source") or {}
    return {**row, "model": app.get("model"),
            "suite": ((body or {}).get("suite") or {}).get("name") or app.get("task")
            or app.get("suite"),
            "split": app.get("split"), "metric": run.metric, "harness": source.get("harness"),
            "interval": interval,
            "scale": _scale(body) if body else (
                100 if run.figures is not None and run.figures.binary else 1)}


def _plan_row(src: Source, plan: PlanView) -> dict[str, Any]:
    rep = report_json(src.view, plan.digest)
    return {"slug": plan.slug, "digest": plan.digest, "seq": plan.seq,
            "title": plan.body.get("title"), "due": plan.body.get("due"),
            "retracted": bool(plan.retracted_by), "verdict": rep["verdict"]["status"],
            "wording": rep["verdict"]["wording"],
            "arms": [{"name": a["name"], "role": a["role"], "completed": a["completed"],
                      "planned": a["planned_runs"], "failed": a["failed"],
                      "aborted": a["aborted"], "retracted": a["retracted"],
                      "refused": sum(1 for x in rep["refused"] if x["arm"] == a["name"])}
                     for a in rep["arms"]],
            "runs_done": sum(min(a["completed"], a["planned_runs"]) for a in rep["arms"]),
            "runs_planned": sum(a["planned_runs"] for a in rep["arms"]),
            "findings": len(rep["findings"])}


def plans(src: Source) -> dict[str, Any]:
    return {"integrity": integrity(src),
            "plans": [_plan_row(src, p) for p in src.view.plans.values()]}


def report_html(src: Source, ref: str) -> str:
    """`report --html` of one plan: the whole HTML report."""
    from logbook.analysis.report.formats import render

    return render(report_of(src.view, _plan(src, ref).digest), "html")


def plan_page(src: Source, ref: str) -> dict[str, Any]:
    plan = _plan(src, ref)
    return {"integrity": integrity(src), "report": report_json(src.view, plan.digest)}


def run_row(src: Source, run: RunView) -> dict[str, Any]:
    plan = src.view.plans.get(run.plan) if run.plan else None
    n_items = (plan.body.get("suite") or {}).get("n_items") if plan else None
    missing, total = run.missing(n_items) if run.status == "completed" else (None, None)
    facts = run.figures
    if facts is not None and facts.figures:  # one row an item
        records = distinct = facts.scores
    else:
        ids = (run.body.get("outcomes") or {}).get("id") or []
        records, distinct = len(ids), len(set(ids))
    return {"seq": run.seq, "digest": run.digest, "ts": run.entry.envelope.get("ts"),
            "plan": None if plan is None else {"slug": plan.slug, "digest": plan.digest},
            "arm": run.arm, "status": run.status, "session": run.session,
            "score": run.score if run.status == "completed" else None,
            # items as `missing` counts them (each item once, whatever its samples), and the
            # outcome rows the run lists (an item scored in two epochs is two records)
            "items": total if total is not None else distinct, "records": records,
            "missing": missing,
            "missing_rate": None if not total else missing / total,  # type: ignore[operator]
            "retracted": run.retracted, "retracted_by": [e.digest for e in run.retracted_by],
            "note": run.body.get("note"), "reason": run.body.get("reason")}


def audit(src: Source) -> dict[str, Any]:
    from logbook.analysis.audit import run_audit

    res = run_audit(src.view).as_json()
    for f in res["findings"]:
        f["entries"] = [_entry_ref(src, d) for d in f["entries"]]
    return {"integrity": integrity(src), "audit": res}


def retraction_row(src: Source, body: dict[str, Any], seq: int, digest: str) -> dict[str, Any]:
    return {"seq": seq, "digest": digest, "target": _entry_ref(src, body.get("target")),
            "category": body.get("category"), "reason": body.get("reason"),
            "correction": body.get("correction")}


def _original(src: Source, digest: str) -> dict[str, Any] | None:
    """What a retraction withdrew, in a line: a run's plan, arm, status and score; a plan's
    slug and title; any other entry's kind."""
    run = src.view.runs_by_digest.get(digest)
    if run is not None:
        row = run_row(src, run)
        return {"kind": "run", "plan": (row["plan"] or {}).get("slug"), "arm": row["arm"],
                "status": row["status"], "score": row["score"], "note": row["note"]}
    plan = src.view.plans.get(digest)
    if plan is not None:
        return {"kind": "plan", "slug": plan.slug, "title": plan.original.get("title")}
    ref = _entry_ref(src, digest)
    return None if ref is None or ref["kind"] is None else {"kind": ref["kind"]}


def retractions(src: Source) -> dict[str, Any]:
    rows = []
    for e in src.view.entries_of("retraction"):
        row = retraction_row(src, e.body, e.seq, e.digest)
        row["original"] = _original(src, str(e.body.get("target")))
        rows.append(row)
    return {"integrity": integrity(src), "retractions": rows}


def entry(src: Source, ref: str) -> dict[str, Any]:
    """Any entry as it is stored: envelope, signature, and the retractions that name it."""
    try:
        e = src.ledger.get(ref)
    except InputError as exc:
        raise NotFound(str(exc)) from None
    return {"integrity": integrity(src), "seq": e.seq, "digest": e.digest, "kind": e.kind,
            "signature": e.signature, "envelope": e.envelope,
            "retracted_by": [_entry_ref(src, x.digest) for x in src.view.retracted_by(e.digest)]}
