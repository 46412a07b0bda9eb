"""Appending a harness output's runs: the one path that `append --from`, the Inspect AI hook,
the spool and `logbook.integrations.lm_eval.record` share (docs/recording.md).

An adapter reads the run bodies (``read_runs`` or, from Python, the lm-eval adapter's
``runs_from_results``); here they are bound to a plan's arm (or kept exploratory), given the
declared and captured apparatus and the session, scrubbed, and appended in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logbook.errors import InputError
from logbook.ingest import routing

if TYPE_CHECKING:
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.entry import Entry
    from logbook.ledger.service import Ledger

Body = dict[str, Any]


@dataclass(frozen=True)
class Labels:
    """How refusals name the plan and arm: the options of a command (``--plan``) or the
    settings of a harness integration (``LOGBOOK_PLAN``)."""

    plan: str = "--plan"
    arm: str = "--arm"


OPTIONS = Labels()


def check_plan(ledger: Ledger, plan: str | None, arm: str | None,
               labels: Labels = OPTIONS) -> str | None:
    """The plan's digest (None for exploratory runs); an InputError naming the option or
    setting when the arm is missing, the entry is no plan or the arm is not one of its arms."""
    if plan is None:
        if arm is not None:
            raise InputError(f"{labels.arm} needs {labels.plan}")
        return None
    if arm is None:
        raise InputError(f"{labels.plan} {plan} needs {labels.arm}: the arm of the plan these "
                         "runs belong to")
    digest: str = ledger.resolve(plan, labels.plan)
    found = ledger.kind_of(digest)
    if found is None or found[1] != "plan":
        raise InputError(f"{labels.plan} {plan}: that entry is not a plan")
    arms = [a.get("name") for a in ledger.plan_body(digest).get("arms", [])]
    if arm not in arms:
        raise InputError(f"{labels.arm} {arm!r} is not an arm of plan {plan} "
                         f"(its arms are {', '.join(map(str, arms))})")
    return digest


@dataclass(frozen=True)
class Appended:
    """The entries appended and the plan they were routed by (None: exploratory)."""

    entries: list[Entry]
    plan: Body | None


def append_output(ledger: Ledger, key: SigningKey, source: str,
                  read: Callable[[str | None], list[Body]], *, plan: str | None,
                  arm: str | None, declared: Body, session: str | None,
                  once: str | None = None, labels: Labels = OPTIONS,
                  what: str = "the output") -> Appended:
    """Every run ``read(metric)`` returns, all or none: with a plan, the run of its suite goes
    to the arm and the others are exploratory. ``what`` names the output in refusals."""
    digest = check_plan(ledger, plan, arm, labels)
    plan_body = ledger.plan_body(digest) if digest else None
    bodies = read(routing.item_metric(source, plan_body))
    drafts = routing.ingested(bodies, plan_body, digest, arm, declared, session)
    if not drafts:
        raise InputError(f"{what} holds no runs")
    try:
        entries = ledger.append_many(drafts, key, once=once)
    except InputError as exc:  # a run the ledger refuses: say which output it came from
        raise type(exc)(f"{what}: {exc}") from None
    return Appended(entries, plan_body)
