"""What recording a run says on stderr: runs kept out of the plan, runs that name no system
(docs/recording.md, "Suite, metric and source"); the routing itself is logbook.ingest.routing."""

from __future__ import annotations

import sys
from typing import Any

from logbook.ledger import intake


def say(message: str) -> None:
    """One line on stderr, as logbook says things."""
    print(f"logbook: {message}", file=sys.stderr)


def announce(entries: list[Any], plan: dict[str, Any] | None) -> None:
    """Say on stderr which runs of the output were kept out of the plan."""
    if plan is None:
        return
    for e in entries:
        if e.kind == "run" and e.body.get("plan") is None:
            say(f"run @{e.seq} ({e.body.get('task') or 'its task'}) is not plan "
                f"{plan.get('slug')}'s suite {(plan.get('suite') or {}).get('name')!r}: "
                "appended as an exploratory run (plan null)")


def warn_applied(entries: list[Any], plan: dict[str, Any] | None) -> None:
    """A run whose engine load log shows a setting applied otherwise than requested is kept,
    with a word for each (audit A38 judges it)."""
    from logbook.format.apparatus import flatten, pins
    from logbook.format.applied import mismatches, said

    for e in entries:
        app = e.body.get("apparatus") if e.kind == "run" else None
        if not isinstance(app, dict) or not isinstance(app.get("applied"), dict):
            continue
        asked = pins(plan, e.body.get("arm")) if plan and e.body.get("plan") else None
        for m in mismatches(flatten(app), asked):
            say(f"warning: run @{e.seq} {said(m)} (audit A38)")


def warn_gaps(entries: list[Any]) -> None:
    """A completed plan run that names no model or no decoding policy is kept, with a word."""
    for e in entries:
        if e.kind != "run":
            continue
        gaps = intake.system_gaps(e.body)
        if gaps:
            say(f"warning: run @{e.seq} names no {' and no '.join(gaps)} in its apparatus: "
                "its score travels without the system that made it (audit A19)")
