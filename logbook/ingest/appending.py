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
    found = ledger.reads.kind_of(digest)
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
                  what: str = "the output", reproduces: str | None = None,
                  logs: list[Body] | None = None, usage: Body | None = None) -> Appended:
    """Every run ``read(metric)`` returns, all or none: with a plan, the run of its suite goes
    to the arm and the others are exploratory. ``what`` names the output in refusals; with
    ``reproduces`` (a run's @SEQ or digest) the output's one run reproduces it; ``logs``: the
    references of logs kept with every run (`append --from ... --log`); ``usage`` (what
    --cost and --tokens-in/-out say) is the output's one run's (logbook.format.usage: an
    output of several runs is refused, as its usage belongs to no one of them)."""
    from logbook.format.usage import merged

    digest = check_plan(ledger, plan, arm, labels)
    plan_body = ledger.plan_body(digest) if digest else None
    bodies = read(routing.item_metric(source, plan_body))
    if usage:
        if len(bodies) != 1:
            option = "--cost" if "cost" in usage else "--tokens-in" if "tokens_in" in usage \
                else "--tokens-out"
            raise InputError(f"{option}: {what} holds {len(bodies)} runs, and what they used "
                             "together belongs to no one of them; append it without "
                             f"{option} (a note can say it), or each run from its own output")
        bodies = [merged(bodies[0], usage)]
    drafts = routing.ingested(bodies, plan_body, digest, arm, declared, session, logs)
    if not drafts:
        raise InputError(f"{what} holds no runs")
    if reproduces is not None:
        if len(drafts) != 1:
            raise InputError(f"--reproduces: {what} holds {len(drafts)} runs; a reproduction "
                             "is one run (append the others without --reproduces)")
        reproducing(ledger, drafts, reproduces)
    try:
        entries = ledger.append_many(drafts, key, once=once)
    except InputError as exc:  # a run the ledger refuses: say which output it came from
        raise type(exc)(f"{what}: {exc}") from None
    return Appended(entries, plan_body)


def reproducing(ledger: Ledger, drafts: list[tuple[str, Body]], ref: str) -> None:
    """Every run draft marked as reproducing the run ``ref`` names (@SEQ, a digest or a
    prefix); the ledger's admission checks it is a run of the same suite and metric."""
    digest = ledger.resolve(ref, "--reproduces")
    runs = [body for kind, body in drafts if kind == "run" and isinstance(body, dict)]
    if not runs:
        raise InputError("--reproduces: the drafts hold no run")
    for body in runs:
        if body.get("reproduces") not in (None, digest):
            raise InputError(f"--reproduces: a draft already reproduces {body['reproduces']}")
        body["reproduces"] = digest


def plan_refusal(ledger: Ledger, plan: str | None, arm: str | None,
                 labels: Labels = OPTIONS) -> tuple[str | None, str | None]:
    """(the plan's digest, None) when check_plan takes ``plan`` and ``arm``; else (the digest
    when ``plan`` names a plan at all, else None; why check_plan refused them)."""
    try:
        return check_plan(ledger, plan, arm, labels), None
    except InputError as exc:
        why = str(exc)
    try:
        digest = ledger.resolve(plan, labels.plan) if plan is not None else None
    except InputError:
        return None, why
    found = ledger.reads.kind_of(digest) if digest is not None else None
    return (digest if found is not None and found[1] == "plan" else None), why


def append_kept(ledger: Ledger, key: SigningKey, source: str,
                read: Callable[[str | None], list[Body]], *, plan: str | None,
                arm: str | None, declared: Body, session: str | None,
                once: str | None = None, labels: Labels = OPTIONS, what: str = "the output",
                say: Callable[[str], None] = lambda _message: None) -> Appended:
    """append_output for runs that have already happened and that nobody is there to offer
    again (the harness integrations, the spool): a run the plan refuses (an unknown plan or
    arm, another suite, metric or pinned value) is appended as an exploratory run whose note
    says why, as `logbook run` keeps it (routing.exploratory), never refused; the refusal is
    said. What the ledger refuses otherwise raises, as there."""
    from logbook.ledger.intake import NotOfPlan

    digest, why = plan_refusal(ledger, plan, arm, labels)
    plan_body = ledger.plan_body(digest) if digest else None
    bodies = read(routing.item_metric(source, plan_body))
    drafts = routing.ingested(bodies, plan_body, digest, arm, declared, session)
    if not drafts:
        raise InputError(f"{what} holds no runs")
    if why is None:
        try:
            return Appended(ledger.append_many(drafts, key, once=once), plan_body)
        except NotOfPlan as exc:
            why = str(exc)
        except InputError as exc:
            raise type(exc)(f"{what}: {exc}") from None
    note = f"not counted in {'plan ' + plan if plan is not None else 'a plan'}: {why}"
    kept = [("run", routing.exploratory(b, note, []) if digest else _noted(b, note))
            for _, b in drafts]
    try:
        entries = ledger.append_many(kept, key, once=once)
    except InputError as exc:
        raise type(exc)(f"{what}: {exc}") from None
    say(note)
    return Appended(entries, None)


def _noted(body: Body, why: str) -> Body:
    """An exploratory run meant for a plan the ledger does not hold (no digest to keep): its
    note says why."""
    return {**body, "note": "; ".join(n for n in (body.get("note"), why) if n)}
