"""What an export writes: the runs and plans a selector picks from a verified ledger, and the
ledger's identity (its origin, the size checked and the tree root at that size), which every
exported record carries so that a reader can check it back."""

from __future__ import annotations

from dataclasses import dataclass

from logbook.analysis.selectors import select
from logbook.analysis.view import LedgerView, PlanView, RunView
from logbook.errors import InputError
from logbook.verify.proofs import origin_of


@dataclass
class Selection:
    view: LedgerView
    runs: list[RunView]
    plans: list[PlanView]
    origin: str  # the ledger's checkpoint origin, `logbook/<uuid>` (docs/format.md §10)
    size: int  # the entries the check covered
    root: str  # the tree root at that size, hex
    source_url: str | None = None  # a prefix to which an entry's digest is appended

    def url_of(self, digest: str) -> str | None:
        return None if self.source_url is None else f"{self.source_url}{digest}"


def selection(view: LedgerView, selector: str | None, source_url: str | None = None) -> Selection:
    """Every run and plan (no selector); a plan and its own runs (its slug, digest or @SEQ);
    one run (its digest or @SEQ); or the runs a run selector matches (PLAN:ARM, session:ID,
    FIELD=VALUE: logbook.analysis.selectors) with the plans they belong to."""
    plans = list(view.plans.values())
    runs = view.runs
    if selector is not None and not any(c in selector for c in ":=,"):
        digest = view.ledger.resolve(selector, "SELECTOR")
        if digest in view.plans:
            plans = [view.plans[digest]]
            runs = plans[0].runs
        elif digest in view.runs_by_digest:
            runs = [view.runs_by_digest[digest]]
            plans = [p for p in plans if p.digest == runs[0].plan]
        else:
            raise InputError(f"SELECTOR {selector}: that entry is neither a plan nor a run")
    elif selector is not None:
        runs = select(view, selector)
        wanted = {r.plan for r in runs}
        plans = [p for p in plans if p.digest in wanted]
    ledger = view.ledger
    return Selection(view, runs, plans, origin_of(ledger.uuid), view.size,
                     ledger.root(view.size).hex(), source_url)
