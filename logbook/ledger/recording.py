"""Recording runs from Python: `ledger.append_run(...)` and `with ledger.recording(...) as run`.

A block that raises still leaves a run in the ledger (failed, or aborted on Ctrl-C), with the
exception's text: a run that happened is never lost.
"""

from __future__ import annotations

import traceback
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from logbook.ledger.entry import Entry, now_rfc3339

if TYPE_CHECKING:
    from logbook.crypto.signing import SigningKey


class Appender(Protocol):
    """What recording needs of the ledger (the Ledger service is one)."""

    def resolve(self, ref: str, field: str = ...) -> str: ...

    def append(self, kind: str, body: dict[str, Any], key: SigningKey) -> Entry: ...


@dataclass
class Recording:
    """Items collected while a run is in progress."""

    metric: str
    apparatus: dict[str, Any] = field(default_factory=dict)
    note: str | None = None
    ids: list[str] = field(default_factory=list)
    scores: list[float | None] = field(default_factory=list)
    errors: list[str | None] = field(default_factory=list)
    clusters: list[str | None] = field(default_factory=list)
    samples: list[int] = field(default_factory=list)
    entry: Entry | None = None

    def item(self, id: str | int, score: float | None, error: str | None = None,
             cluster: str | None = None, sample: int = 0) -> None:
        """One item's score; a failed request is ``score=None`` with its ``error``, never 0."""
        if score is None and not error:
            error = "no score recorded"
        self.ids.append(str(id))
        self.scores.append(None if score is None else float(score))
        self.errors.append(error)
        self.clusters.append(cluster)
        self.samples.append(int(sample))

    def outcomes(self) -> dict[str, Any] | None:
        if not self.ids:
            return None
        out: dict[str, Any] = {"metric": self.metric, "id": self.ids, "score": self.scores}
        if any(e is not None for e in self.errors):
            out["error"] = self.errors
        if any(c is not None for c in self.clusters):
            out["cluster"] = self.clusters
        if any(s != 0 for s in self.samples):
            out["sample"] = self.samples
        return out


def run_body(plan: str | None, arm: str | None, status: str, apparatus: dict[str, Any],
             outcomes: dict[str, Any] | None = None, **optional: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"plan": plan, "arm": arm, "status": status, "apparatus": apparatus}
    if outcomes is not None:
        body["outcomes"] = outcomes
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


class RecordingContext:
    def __init__(self, ledger: Appender, key: SigningKey, plan: str | None, arm: str | None,
                 metric: str, apparatus: dict[str, Any] | None, session: str | None) -> None:
        self.ledger = ledger
        self.key = key
        self.plan = ledger.resolve(plan, "plan") if plan else None
        self.arm = arm
        self.session = session
        self.run = Recording(metric=metric, apparatus=dict(apparatus or {}))
        self.started = ""

    def __enter__(self) -> Recording:
        self.started = now_rfc3339()
        return self.run

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> Literal[False]:
        run = self.run
        reason = None
        if exc is None:
            status = "completed" if run.ids else "failed"
            if not run.ids:
                reason = "the block recorded no items"
        else:
            status = "aborted" if isinstance(exc, KeyboardInterrupt) else "failed"
            last = traceback.format_exception_only(exc_type, exc)[-1].strip()
            reason = f"{last} (after {len(run.ids)} items)"
        body = run_body(self.plan, self.arm, status, run.apparatus, run.outcomes(),
                        reason=reason, session=self.session, started=self.started,
                        finished=now_rfc3339(), note=run.note)
        from logbook.capture.redact import scrub_run_body
        from logbook.ledger.intake import NotOfPlan, system_gaps

        try:
            run.entry = self.ledger.append("run", scrub_run_body(body), self.key)
        except NotOfPlan as refusal:  # it happened: kept, as an exploratory run saying why
            from logbook.ledger.admission import refused

            why = f"not counted in plan {self.plan}: {refusal}"
            run.entry = self.ledger.append("run", scrub_run_body(refused(body, why)), self.key)
            if exc is None:
                raise NotOfPlan(f"{refusal}; the run was kept as exploratory run "
                                f"@{run.entry.seq}") from None
        gaps = system_gaps(run.entry.body)
        if gaps:
            warnings.warn(f"run @{run.entry.seq} names no {' and no '.join(gaps)} in its "
                          "apparatus: its score travels without the system that made it "
                          "(audit A19)", stacklevel=2)
        return False  # the exception, if any, goes on
