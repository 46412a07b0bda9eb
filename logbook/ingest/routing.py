"""Which of a harness output's runs go to the plan, what the others become, and how the runs of
one output are admitted (docs/recording.md, "What a plan takes: suite, metric, source and pins").

Everything here works on run bodies; what is said on the way (a run already recorded, one the
plan does not count) goes to the caller's ``say``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from logbook.capture.redact import scrub_run_body
from logbook.errors import InputError
from logbook.ledger import intake
from logbook.ledger.admission import refused

if TYPE_CHECKING:
    from logbook.crypto.signing import SigningKey
    from logbook.ledger.entry import Entry
    from logbook.ledger.service import Ledger

Body = dict[str, Any]
Draft = tuple[str, Body]


def _of_suite(plan: Body, body: Body) -> bool:
    suite = plan.get("suite") or {}
    declared = suite.get("dataset_hash")
    found = (body.get("apparatus") or {}).get("dataset_hash")
    return body.get("task") == suite.get("name") or bool(declared and found == declared)


def route(plan: Body | None, bodies: list[Body]) -> list[bool]:
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


def bind(body: Body, digest: str | None, arm: str | None, to_plan: bool) -> None:
    body["plan"], body["arm"] = (digest, arm) if to_plan else (None, None)


def item_metric(source: str, plan: Body | None) -> str | None:
    """JSON Lines items score the plan's metric (named by the plan, not the file); the other
    harnesses name their own metrics."""
    if source != "jsonl" or plan is None:
        return None
    name = (plan.get("metric") or {}).get("name")
    return name if isinstance(name, str) and name else None


def merge(base: Body, over: Body) -> Body:
    """``base`` with ``over`` laid on it, objects merged key by key (declared apparatus over
    what an adapter read)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def ingested(bodies: list[Body], plan: Body | None, digest: str | None, arm: str | None,
             declared: Body, session: str | None,
             logs: list[Body] | None = None) -> list[Draft]:
    """The drafts of `append --from`: each run bound to the plan's arm or exploratory, with
    the declared apparatus, the session and the references of the logs kept with it."""
    drafts = []
    for body, to_plan in zip(bodies, route(plan, bodies), strict=True):
        body = dict(body)
        bind(body, digest, arm, to_plan)
        body["apparatus"] = merge(body.get("apparatus") or {}, declared)
        if logs:
            body["logs"] = [*(body.get("logs") or []), *logs]
        if session:
            body["session"] = session
        drafts.append(("run", scrub_run_body(body)))
    return drafts


def command_runs(bodies: list[Body], plan: Body | None, base: Body, declared: Body,
                 captured: Body, status: str, reason: str | None, lost: list[str],
                 taken: list[str]) -> list[Draft]:
    """The drafts of `logbook run`: each run its command's output holds (one empty run when it
    holds none) with what logbook knows of the command (``base``: plan, arm, session, times,
    logs, note), the apparatus declared and captured, and how the command ended (a run that
    did not complete is not reported completed, its reason saying why; blobs that were not
    kept are named in the reason)."""
    drafts = []
    bodies = bodies or [{}]
    for body, to_plan in zip(bodies, route(plan, bodies), strict=True):
        app = merge(merge(body.get("apparatus") or {}, declared), {"captured": captured})
        merged = {**body, **{k: v for k, v in base.items() if v is not None}, "apparatus": app}
        bind(merged, base["plan"], base["arm"], to_plan)
        if status != "completed":
            if merged.get("status", "completed") == "completed":
                merged["status"] = status
            merged["reason"] = (reason if not body.get("reason")
                                else f"{reason}; {body['reason']}")
        if lost:  # the run is recorded all the same, saying which logs were not kept
            merged["reason"] = "; ".join([r for r in (merged.get("reason"),) if r] + lost)
        merged.setdefault("status", "completed")
        drafts.append(("run", scrub_run_body(merged, taken)))
    return drafts


def failed_command_run(base: Body, declared: Body, captured: Body, status: str,
                       reason: str | None, lost: list[str]) -> Body:
    """The run kept when the ledger refuses a command's drafts: failed (or aborted), with what
    logbook knows of the command and none of what the output said (nor the run it meant to
    reproduce: a refused link is a reason the reason gives, not one to be refused again)."""
    return {"plan": base["plan"], "arm": base["arm"],
            "status": "failed" if status == "completed" else status,
            "reason": "; ".join([r for r in (reason,) if r] + lost),
            "apparatus": {**declared, "captured": captured},
            **{k: v for k, v in base.items()
               if v is not None and k not in ("plan", "arm", "reproduces")}}


def exploratory(body: Body, why: str, taken: list[str]) -> Body:
    """A plan's run as an exploratory one (plan and arm null), its note saying why, the plan
    and arm it named kept as ``intended`` with the refusal (docs/recording.md, "Refused runs
    stay in view")."""
    if body.get("plan") is None:
        return body
    return scrub_run_body(refused(body, why), taken)


def drop_recorded(ledger: Ledger, drafts: list[Draft], code: int,
                  say: Callable[[str], None]) -> tuple[list[Draft], int]:
    """Runs whose source the ledger already holds are not recorded again (each is said); when
    every run is one, nothing is written (AlreadyRecorded: exit 2)."""
    kept, refused = [], []
    for kind, body in drafts:
        try:
            ledger.check_source(body)
        except intake.AlreadyRecorded as exc:
            refused.append(exc)
            continue
        kept.append((kind, body))
    if refused and not kept:
        raise refused[0]
    for refusal in refused:
        say(str(refusal))
    return kept, (code or 1) if refused else code


def admit(ledger: Ledger, drafts: list[Draft], key: SigningKey, code: int, fallback: Body,
          taken: list[str], plan: str | None, say: Callable[[str], None],
          once: str | None = None) -> tuple[list[Entry], int, bool]:
    """Append a command's drafts (and whether each went where route() put it). Outputs
    already recorded are left out; a run the plan does not take is kept as an exploratory run
    saying why; one the ledger refuses otherwise is kept as the failed ``fallback`` run saying
    why. ``once``: the idempotency key of whichever of them is appended (a spooled run's)."""
    drafts, code = drop_recorded(ledger, drafts, code, say)
    try:
        return ledger.append_many(drafts, key, once=once), code, True
    except intake.NotOfPlan as exc:  # what happened belongs elsewhere: kept, exploratory
        say(f"not counted in plan {plan}: {exc}")
        drafts = [("run", exploratory(b, f"not counted in plan {plan}: {exc}", taken))
                  for _, b in drafts]
        return ledger.append_many(drafts, key, once=once), code or 1, False
    except InputError as exc:
        # a run that happened is never lost: keep it as failed, saying why
        why = f"its record was refused: {exc}"
        reason = fallback.get("reason")
        fallback["reason"] = f"{reason}; {why}" if reason else why
        return (ledger.append_many([("run", scrub_run_body(fallback, taken))], key, once=once),
                code or 1, False)
