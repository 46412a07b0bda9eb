"""The ledger as flat tables for SQL and datasette (`logbook export --sqlite FILE`).

One row per plan (with its verdict), run (plan slug, arm, status, score, items, missing, the
apparatus fields people filter on, whether it is retracted), item, claim, retraction, note,
audit finding and entry (its kind, digest and body as JSON text, and who retracted it), built
from the verified read model: the same figures `report` and `audit` print. storage/flat.py
lays them out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from logbook.analysis.run_view import one_at_a_time
from logbook.analysis.view import LedgerView, PlanView, RunView, flatten

# apparatus fields with columns of their own (every field stays in runs.apparatus, as JSON)
APPARATUS_COLUMNS = ("model", "engine", "engine_build", "weights_precision",
                     "kv_cache_precision", "harness.name", "harness.version",
                     "decoding.temperature", "decoding.seed", "dataset_hash")


def _json(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


def _text(value: Any) -> str | None:
    """A string as it is, anything else as JSON."""
    return value if isinstance(value, str | None) else _json(value)


def _first(view: LedgerView, digest: str) -> str | None:
    """The first entry that retracts ``digest``, or None."""
    by = view.retracted_by(digest)
    return by[0].digest if by else None


def column(name: str) -> str:
    return name.replace(".", "_")


def run_row(run: RunView, slugs: dict[str, str]) -> dict[str, Any]:
    """A run's row of the runs table (its apparatus columns named by ``column``)."""
    body = run.body
    apparatus = body.get("apparatus") or {}
    flat = flatten({k: v for k, v in apparatus.items() if k != "captured"})
    missing, total = run.missing(None) if run.status == "completed" else (None, None)
    row: dict[str, Any] = {
        "digest": run.digest, "seq": run.seq, "ts": run.entry.envelope.get("ts"),
        "plan": run.plan if run.plan in slugs else None, "plan_slug": slugs.get(run.plan or ""),
        "arm": run.arm, "status": run.status, "reason": body.get("reason"),
        "metric": (body.get("outcomes") or {}).get("metric"),
        "score": run.score if run.status == "completed" else None,
        "items": total, "missing": missing,
        "missing_rate": (missing / total) if missing is not None and total else None,
        "session": run.session, "task": body.get("task"),
        "retracted": int(run.retracted),
        "retracted_by": run.retracted_by[0].digest if run.retracted_by else None,
        "apparatus": _json(apparatus),
    }
    for name in APPARATUS_COLUMNS:
        value = flat.get(name)
        row[column(name)] = value if isinstance(value, str | int | float) else _json(value)
    return row


def _verdict(plan: PlanView, verdict_of: Callable[[PlanView], Any]) -> str:
    """The plan's verdict, its runs let go afterwards when this pass read them."""
    held = [r.loaded for r in plan.runs]
    verdict = str(verdict_of(plan).status)
    for run, was in zip(plan.runs, held, strict=True):
        if not was:
            run.forget()
    return verdict


def _items(run: RunView) -> list[dict[str, Any]]:
    oc = run.body.get("outcomes") or {}
    ids = oc.get("id") or []
    columns = {name: oc.get(name) or [None] * len(ids)
               for name in ("score", "error", "cluster", "sample")}
    return [{"run": run.digest, "position": i, "id": str(item_id),
             **{name: values[i] if i < len(values) else None
                for name, values in columns.items()}}
            for i, item_id in enumerate(ids)]


def flat_tables(view: LedgerView, findings: list[Any]) -> list[Any]:
    """The tables of the export (storage.flat.Table), from the read model and the audit's
    findings."""
    from logbook.analysis.retractions import verdict_of
    from logbook.storage.flat import Table

    slugs = {digest: plan.slug for digest, plan in view.plans.items()}
    plans = [{"digest": p.digest, "seq": p.seq, "slug": p.slug,
              "title": p.body.get("title"), "metric": (p.body.get("metric") or {}).get("name"),
              "runs_per_arm": p.body.get("runs_per_arm"),
              "arms": ", ".join(str(a.get("name")) for a in p.arms()), "due": p.body.get("due"),
              "verdict": _verdict(p, verdict_of), "retracted": int(bool(p.retracted_by)),
              "body": _json(p.body)} for p in view.plans.values()]
    runs = (run_row(r, slugs) for r in one_at_a_time(view.runs))
    items = (row for r in one_at_a_time(view.runs) if r.status == "completed"
             for row in _items(r))
    entries = ({"seq": e.seq, "digest": e.digest, "kind": e.kind, "ts": e.envelope.get("ts"),
                "signer": e.envelope.get("signer"), "retracted_by": _first(view, e.digest),
                "body": _json(e.body)} for e in view.ledger.entries())
    claims = [{"digest": e.digest, "seq": e.seq, "plan": e.body.get("plan"),
               "arm": _json(e.body.get("arm")), "statement": e.body.get("statement"),
               "retracted": int(_first(view, e.digest) is not None)}
              for e in view.ledger.log("claim")]
    retractions = [{"digest": e.digest, "seq": e.seq, "target": e.body.get("target"),
                    "category": e.body.get("category"), "reason": e.body.get("reason"),
                    "correction": _text(e.body.get("correction"))}
                   for e in view.ledger.log("retraction")]
    notes = [{"digest": e.digest, "seq": e.seq, "ts": e.envelope.get("ts"),
              "text": e.body.get("text")} for e in view.ledger.log("note")]
    found = [{"n": i, "rule": f.check, "severity": f.severity, "message": f.message,
              "seq": f.seq, "entries": _json(f.entries)} for i, f in enumerate(findings)]
    run_columns: dict[str, type] = {
        "digest": str, "seq": int, "ts": str, "plan": str, "plan_slug": str, "arm": str,
        "status": str, "reason": str, "metric": str, "score": float, "items": int,
        "missing": int, "missing_rate": float, "session": str, "task": str, "retracted": int,
        "retracted_by": str, "apparatus": str,
        **{column(n): str for n in APPARATUS_COLUMNS}}
    return [
        Table("entries", entries, "digest", {"seq": int, "digest": str, "kind": str, "ts": str,
                                             "signer": str, "retracted_by": str, "body": str},
              indexes=[("seq",), ("kind",)]),
        Table("plans", plans, "digest", {"digest": str, "seq": int, "slug": str, "title": str,
                                         "metric": str, "runs_per_arm": int, "arms": str,
                                         "due": str, "verdict": str, "retracted": int,
                                         "body": str},
              foreign_keys=[("digest", "entries", "digest")], indexes=[("slug",)]),
        Table("runs", runs, "digest", run_columns,
              foreign_keys=[("digest", "entries", "digest"), ("plan", "plans", "digest")],
              indexes=[("plan_slug", "arm"), ("status",), ("session",), ("model",)]),
        Table("items", items, ("run", "position"),
              {"run": str, "position": int, "id": str, "score": float, "error": str,
               "cluster": str, "sample": int},
              foreign_keys=[("run", "runs", "digest")], indexes=[("id",)]),
        Table("claims", claims, "digest", {"digest": str, "seq": int, "plan": str, "arm": str,
                                           "statement": str, "retracted": int},
              foreign_keys=[("digest", "entries", "digest")]),
        Table("retractions", retractions, "digest",
              {"digest": str, "seq": int, "target": str, "category": str, "reason": str,
               "correction": str},
              foreign_keys=[("digest", "entries", "digest"), ("target", "entries", "digest")],
              indexes=[("target",)], search=("reason", "correction")),
        Table("notes", notes, "digest", {"digest": str, "seq": int, "ts": str, "text": str},
              foreign_keys=[("digest", "entries", "digest")], search=("text",)),
        Table("findings", found, "n", {"n": int, "rule": str, "severity": str, "message": str,
                                       "seq": int, "entries": str}, indexes=[("rule",)]),
    ]


def export_sqlite(view: LedgerView, path: str) -> dict[str, int]:
    """Write the export of ``view`` (a verified read model) to ``path``; the row counts."""
    from pathlib import Path

    from logbook.analysis.audit import run_audit
    from logbook.storage.flat import write

    tables = flat_tables(view, run_audit(view).findings)
    return write(Path(path), tables, {"ledger": view.ledger.uuid, "size": view.size,
                                      "format": "logbook flat export 1"})
