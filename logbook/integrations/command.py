"""Recording a command's run (`logbook run -- CMD`): everything it needs is checked before the
command starts, then the command runs with its output streamed through, and a run is appended
whatever happens to it: a non-zero exit is `failed`, a signal or Ctrl-C `aborted`, an
unreadable outcome file `failed` naming the file (docs/recording.md). logbook.cli.record
parses the options and prints what this returns.

When even the append fails (a full disk, a lost lock), the run's drafts go to the spool beside
the ledger (logbook.integrations.spool), as a harness integration's run does, for the next
writing command or `logbook append --spool`; when that cannot be written either, its record is
said on stderr."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logbook import config
from logbook.errors import InputError, LogbookError

Say = Callable[[str], None]
OpenLedger = Callable[[], AbstractContextManager[Any]]  # the ledger, opened for writing


@dataclass(frozen=True)
class Recorded:
    """What a command's run became: its entries, the exit code the command should end with,
    whether the runs were routed through the plan (``routed``), and the plan's body."""

    entries: list[Any]
    code: int
    routed: bool
    plan: dict[str, Any] | None


class NotAppended(Exception):
    """Even the append failed (a LogbookError or OSError: a bug is raised as itself, exit 70);
    the run's record was kept and said (``recover``). ``code``: the exit code to end with."""

    def __init__(self, code: int, why: str) -> None:
        super().__init__(why)
        self.code = code


def found_output(command: list[str], say: Say) -> tuple[str, str]:
    """The harness output a command line names (lm_eval's --output_path, inspect eval's log
    folder), said; without one, where to look must be given."""
    from logbook.ingest import command_output

    found = command_output(command, os.environ)
    if found is None:
        raise InputError("say where the outcomes will be: --outcomes FILE or --from SOURCE "
                         "PATH (only `lm_eval ... --output_path P` and `inspect eval` name "
                         "their own)")
    say(f"reading the {found[0]} output the command writes to {found[1]}")
    return found


def within_plan(ledger: Any, digest: str | None, plan: str | None, arm: str | None,
                beyond: str | None) -> None:
    """Refuse, before the command runs, a run the arm has no room for, unless --beyond-plan
    says why it is made anyway."""
    if beyond is not None and not beyond.strip():
        raise InputError("--beyond-plan: say why the run is made beyond the plan")
    if digest is None or arm is None:
        if beyond is not None:
            raise InputError("--beyond-plan needs --plan and --arm")
        return
    want = ledger.plan_body(digest).get("runs_per_arm")
    if not isinstance(want, int) or isinstance(want, bool):
        return
    done = ledger.completed_in_arm(digest, arm)  # admitted runs too, as the door counts
    if done >= want and beyond is None:
        raise InputError(f"--arm {arm}: plan {plan} has {done} completed runs of arm {arm}, "
                         "its runs_per_arm: this run would be beyond the plan and is not "
                         "started; give --beyond-plan REASON to run it anyway (the audit "
                         "judges it, A04), or amend the plan")


def record_command(command: list[str], *, open_ledger: OpenLedger, key: Callable[[], Any],
                   declared: Callable[[], dict[str, Any]], plan: str | None, arm: str | None,
                   session: str | None, outcomes: str | None,
                   source: tuple[str, str] | None, logs: list[str], note: str | None,
                   beyond_plan: str | None, say: Say,
                   reproduces: str | None = None,
                   usage: dict[str, Any] | None = None) -> Recorded:
    """Run ``command`` and append its run (see the module's text). InputError before the
    command starts; NotAppended when even the append failed (its record kept). ``declared``
    (the apparatus the user declares) and ``key`` are read once the command line holds.
    ``usage``: what the options say the run used (--cost, --tokens-in, --tokens-out); with
    the command's wall time, given to its run when it makes one (logbook.format.usage)."""
    from logbook.capture.apparatus import capture
    from logbook.capture.argv import argv_redaction
    from logbook.capture.process import Signals, run_command
    from logbook.capture.redact import scrub_run_body
    from logbook.format.usage import merged
    from logbook.ingest import adapter_for, routing
    from logbook.ingest.appending import check_plan
    from logbook.ingest.flags import as_apparatus, requested
    from logbook.ledger.entry import now_rfc3339
    from logbook.ledger.intake import AlreadyRecorded, check_pins

    kind, src_path = source if source else (None, None)
    if kind is not None and (not src_path or src_path == "--"):
        raise InputError(f"--from {kind} PATH: the PATH is {src_path!r}; name the harness's "
                         "output folder or file before -- CMD")
    if kind is not None and outcomes is not None:
        raise InputError("give either --outcomes or --from, not both")
    if not command:
        raise InputError("CMD is required after --")
    if kind is None and outcomes is None:
        kind, src_path = found_output(command, say)
    harness = adapter_for(kind or "jsonl", "--from")  # --outcomes is a JSON Lines file
    if outcomes is not None and Path(outcomes).is_dir():
        raise InputError(f"--outcomes {outcomes} is a directory: name the JSON Lines file the "
                         "command will write")
    declared_apparatus, signing = declared(), key()
    session = session or config.session()
    with open_ledger() as ledger:
        digest = check_plan(ledger, plan, arm)
        plan_body = ledger.plan_body(digest) if digest else None
        within_plan(ledger, digest, plan, arm, beyond_plan)
        reproduced = run_named(ledger, reproduces) if reproduces is not None else None
        metric = routing.item_metric(kind or "jsonl", plan_body)
        # the key must be able to sign here: learn it now, not after hours of work
        ledger.check_key(signing)
        db = ledger.path
    target = src_path or outcomes
    assert target is not None
    # from here until the run is appended, SIGINT/SIGTERM/SIGHUP cannot lose it
    with Signals() as signals:
        captured = capture(command, Path.cwd(), ignore=db.parent)
        taken = argv_redaction(command, os.environ)[1]  # scrubbed wherever they reappear
        if plan_body is not None:  # a pinned apparatus contradicted: refused before it runs
            check_pins(plan_body, arm, {**declared_apparatus, "captured": captured},
                       "apparatus")
            check_pins(plan_body, arm, as_apparatus(requested(command)),
                       "the command line's apparatus")
        done = run_command(command, harness, target, signals, metric=metric, clock=now_rfc3339,
                           env=wrapped_env())
        log_refs, unreadable, lost, applied = keep_logs(open_ledger, done.output.data(), logs,
                                                        taken)
        if applied is not None:  # what the engine's load log shows it applied
            declared_apparatus = {**declared_apparatus, "applied": applied}
        if unreadable:
            note = "; ".join(([note] if note else []) + unreadable)
        base = {"plan": digest, "arm": arm, "session": session,
                "started": done.started, "finished": done.finished, "logs": log_refs,
                "note": note, "beyond_plan": beyond_plan if digest else None,
                "reproduces": reproduced}
        drafts = routing.command_runs(done.bodies, plan_body, base, declared_apparatus,
                                      captured, done.status, done.reason, lost, taken)
        fallback = routing.failed_command_run(base, declared_apparatus, captured, done.status,
                                              done.reason, lost)
        spent = {"wall_seconds": round(done.seconds, 3), **(usage or {})}
        if len(drafts) == 1:
            drafts = [(drafts[0][0], merged(drafts[0][1], spent))]
        elif usage:
            say(f"the command made {len(drafts)} runs: what --cost, --tokens-in or "
                "--tokens-out say belongs to no one of them and is not recorded (a note can "
                "say it)")
        fallback = merged(fallback, spent)
        try:
            with open_ledger() as ledger:  # opened again: none is held open while it runs
                entries, code, routed = routing.admit(ledger, drafts, signing, done.code,
                                                      fallback, taken, plan, say)
                drain_spool(ledger, signing, say)
        except AlreadyRecorded:  # all it found is already in the ledger: nothing to add
            raise
        except Exception as exc:
            # even the append failed (a full disk, a lost lock, a bug): the record is spooled
            # for later, then a bug still ends as one (exit 70, with its traceback)
            spool_run(db, {"source": "run", "path": None, "what": what_ran(command),
                           "plan": digest, "arm": arm, "session": session,
                           "drafts": [list(d) for d in drafts],
                           "fallback": scrub_run_body(fallback, taken)}, exc, say)
            if not isinstance(exc, LogbookError | OSError):
                raise
            raise NotAppended(done.code or 3, str(exc)) from None
    return Recorded(entries, code, routed, plan_body)


def run_named(ledger: Any, ref: str) -> str:
    """The digest of the run ``ref`` names (--reproduces): refused before the command runs
    when it names no run."""
    digest = str(ledger.resolve(ref, "--reproduces"))
    found = ledger.reads.kind_of(digest)
    if found is None or found[1] != "run":
        raise InputError(f"--reproduces {ref}: entry {digest[:12]} is a "
                         f"{found[1] if found else 'missing entry'}, not a run")
    return digest


def keep_logs(open_ledger: OpenLedger, output: bytes, logs: list[str], taken: list[str]
              ) -> tuple[list[dict[str, Any]], list[str], list[str], dict[str, Any] | None]:
    """capture.blobs.keep_logs into the ledger (opened again: none is held open while the
    command runs): files beside a SQLite ledger, rows of a server's. A ledger that cannot be
    opened now keeps no log, and the run says so for each. Last: what the first engine load
    log among the ``--log`` files shows applied (logbook.capture.loadlogs), or None."""
    from logbook.capture.blobs import keep_logs as keep
    from logbook.capture.loadlogs import Applied

    found = Applied()
    try:
        with open_ledger() as ledger:
            kept = keep(ledger.entry_log.keep_blob, output, logs, taken, found.see)
            return (*kept, found.applied)
    except (LogbookError, OSError) as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__

        def cannot(_digest: str, _data: bytes) -> None:
            raise OSError(f"the ledger could not be opened ({why})")

        found = Applied()
        return (*keep(cannot, output, logs, taken, found.see), found.applied)


def wrapped_env() -> dict[str, str]:
    """The command's environment: ours, marked so that a harness's logbook hook leaves the
    run to `logbook run` (which records it once, with its logs and signals)."""
    from logbook.integrations.switch import wrapped_marker

    return {**os.environ, **wrapped_marker()}


def drain_spool(ledger: Any, key: Any, say: Say) -> list[Any]:
    """After a command's own append: the runs a harness integration spooled beside this
    ledger (logbook.integrations.spool), each said; a run its plan refuses is kept as an
    exploratory run, as the integration would have kept it."""
    from logbook.integrations.spool import drain

    return drain(ledger, key, say).entries


def what_ran(command: list[str]) -> str:
    """How a spooled command run is named in `logbook spool list`: the program it ran."""
    return f"the run of {Path(command[0]).name}"


def spool_run(db: Path, record: dict[str, Any], exc: BaseException, say: Say) -> None:
    """Spool the run's record beside the ledger (logbook.integrations.spool), where the next
    writing command appends it; when even that cannot be written, say it in full."""
    from logbook.integrations.spool import SPOOL, keep

    why = " ".join(str(exc).split()) or type(exc).__name__
    kept = keep(db.parent / SPOOL, record, why)
    if kept.path is None:
        say(f"the run could not be appended ({why}) nor spooled; its record follows: save it "
            f"as a .json file in {db.parent / SPOOL}, and `logbook append --spool` appends "
            f"it\n{kept.text.rstrip(chr(10))}")
        return
    say(f"the run could not be appended ({why}); it is spooled in {kept.path}: the next "
        "writing command (`logbook run`, `logbook append --from`, `logbook append --spool`, "
        "a hooked run) appends it; `logbook spool list` shows it")
