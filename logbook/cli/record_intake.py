"""Which of a harness output's runs go to the plan, what the others become, and what a
recorded run leaves unsaid (docs/recording.md, "Suite, metric and source")."""

from __future__ import annotations

import re
import sys
from typing import Any

from logbook.ledger import intake

# the harness's own error in a command's output: an exception line, lm-eval's task lookup
# (two streams interleave: the exception's name may follow other output on its line)
_ERROR_LINE = re.compile(r"(?:(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b:?.*"
                         r"|Tasks not found:.*)")


def _of_suite(plan: dict[str, Any], body: dict[str, Any]) -> bool:
    suite = plan.get("suite") or {}
    declared = suite.get("dataset_hash")
    found = (body.get("apparatus") or {}).get("dataset_hash")
    return body.get("task") == suite.get("name") or bool(declared and found == declared)


def route(plan: dict[str, Any] | None, bodies: list[dict[str, Any]]) -> list[bool]:
    """For each run of one harness output: True when it goes to the plan's arm. With several,
    the run of the plan's suite (its task is `suite.name`, or its dataset hash the suite's),
    narrowed by the plan's metric when a task has several scorers (when no run is of the suite,
    all go to the plan and its checks judge them); the others are exploratory."""
    if plan is None:
        return [False] * len(bodies)
    if len(bodies) <= 1:
        return [True] * len(bodies)
    picked = [_of_suite(plan, b) for b in bodies]
    if not any(picked):
        picked = [True] * len(bodies)
    names = intake.metric_names(plan)
    by_metric = [p and (b.get("outcomes") or {}).get("metric") in names
                 for p, b in zip(picked, bodies, strict=True)]
    if any(by_metric):
        picked = by_metric
    return picked


def bind(body: dict[str, Any], digest: str | None, arm: str | None, to_plan: bool) -> None:
    body["plan"], body["arm"] = (digest, arm) if to_plan else (None, None)


def announce(entries: list[Any], plan: dict[str, Any] | None) -> None:
    """Say on stderr which runs of the output were kept out of the plan."""
    if plan is None:
        return
    for e in entries:
        if e.kind == "run" and e.body.get("plan") is None:
            print(f"logbook: run @{e.seq} ({e.body.get('task') or 'its task'}) is not plan "
                  f"{plan.get('slug')}'s suite {(plan.get('suite') or {}).get('name')!r}: "
                  "appended as an exploratory run (plan null)", file=sys.stderr)


def warn_gaps(entries: list[Any]) -> None:
    """A completed plan run that names no model or no decoding policy is kept, with a word."""
    for e in entries:
        if e.kind != "run":
            continue
        gaps = intake.system_gaps(e.body)
        if gaps:
            print(f"logbook: warning: run @{e.seq} names no {' and no '.join(gaps)} in its "
                  "apparatus: its score travels without the system that made it (audit A19)",
                  file=sys.stderr)


def harness_error(output: bytes) -> str | None:
    """The last error line of a command's output (``ValueError: Tasks not found: x``)."""
    text = output[-65536:].decode("utf-8", "replace")
    for line in reversed(text.splitlines()):
        m = _ERROR_LINE.search(line)
        if m:
            return m.group(0).strip()[:300]
    return None


def exploratory(body: dict[str, Any], why: str, taken: list[str]) -> dict[str, Any]:
    """A plan's run as an exploratory one (plan and arm null), its note saying why."""
    if body.get("plan") is None:
        return body
    note = "; ".join(n for n in (body.get("note"), why) if n)
    from logbook.capture.redact import scrub_run_body

    return scrub_run_body({**body, "plan": None, "arm": None, "note": note}, taken)


def drop_recorded(ledger: Any, drafts: list[tuple[str, dict[str, Any]]],
                  code: int) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """Runs whose source the ledger already holds are not recorded again: said on stderr;
    when every run is one, nothing is written (exit 2)."""
    kept, refused = [], []
    for kind, body in drafts:
        try:
            intake.check_source(ledger.store, body)
        except intake.AlreadyRecorded as exc:
            refused.append(exc)
            continue
        kept.append((kind, body))
    if refused and not kept:
        raise refused[0]
    for exc in refused:
        print(f"logbook: {exc}", file=sys.stderr)
    return kept, (code or 1) if refused else code
