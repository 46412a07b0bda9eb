"""`logbook run -- CMD` and `logbook append --from SOURCE PATH`: recording runs in one command.

`run` checks everything it will need before the command starts, then runs it, streams its output
through, and appends a run whatever happens: a non-zero exit is `failed`, a signal or Ctrl-C is
`aborted`, an unreadable outcome file is `failed` naming the file. It exits with the command's
status, or 1 when the command exited 0 but its run is failed or aborted, or was not the plan's
(kept as an exploratory run); 2 when all it found is already in the ledger.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from logbook import config
from logbook.capture.process import Signals, run_command
from logbook.capture.redact import argv_redaction
from logbook.cli import record_intake as intake_cli
from logbook.cli import state
from logbook.errors import InputError, LogbookError
from logbook.ingest import routing
from logbook.ingest.flags import as_apparatus, requested
from logbook.ledger.intake import AlreadyRecorded, check_pins


def _declared(apparatus: str | None) -> dict[str, Any]:
    if apparatus is None:
        return {}
    value = state.parse_json(state.read_input(apparatus, "apparatus file"), apparatus)
    if not isinstance(value, dict):
        raise InputError(f"--apparatus {apparatus}: must hold a JSON object")
    if "captured" in value:
        raise InputError(f"--apparatus {apparatus}: the key 'captured' is reserved for what "
                         "logbook captures itself")
    return value


def _session(session: str | None) -> str | None:
    return session or config.session()


def _check_plan(ledger: Any, plan: str | None, arm: str | None) -> str | None:
    from logbook.ingest.appending import check_plan

    return check_plan(ledger, plan, arm)


def _within_plan(ledger: Any, digest: str | None, plan: str | None, arm: str | None,
                 beyond: str | None) -> None:
    """Refuse, before the command runs, a run the arm has no room for, unless --beyond-plan
    says why it is made anyway."""
    from logbook.analysis.brief import completed_in_arm

    if beyond is not None and not beyond.strip():
        raise InputError("--beyond-plan: say why the run is made beyond the plan")
    if digest is None or arm is None:
        if beyond is not None:
            raise InputError("--beyond-plan needs --plan and --arm")
        return
    want = ledger.plan_body(digest).get("runs_per_arm")
    if not isinstance(want, int) or isinstance(want, bool):
        return
    done = completed_in_arm(ledger.brief_reads(), digest, arm)  # admitted runs too
    if done >= want and beyond is None:
        raise InputError(f"--arm {arm}: plan {plan} has {done} completed runs of arm {arm}, "
                         "its runs_per_arm: this run would be beyond the plan and is not "
                         "started; give --beyond-plan REASON to run it anyway (the audit "
                         "judges it, A04), or amend the plan")


def append_from(source: str, path: str | None, plan: str | None, arm: str | None,
                session: str | None, apparatus: str | None, once: str | None) -> list[Any]:
    """`logbook append --from SOURCE PATH`: every run the harness output holds, all or none;
    with --plan, the run of the plan's suite goes to the arm, the others are exploratory."""
    from logbook.crypto.signing import load_key
    from logbook.ingest import adapter_for
    from logbook.ingest.appending import append_output

    harness = adapter_for(source, "--from")
    if path is None:
        raise InputError(f"--from {source} needs the PATH of the harness output")
    declared = _declared(apparatus)
    key = load_key()
    with state.open_ledger(write=True) as ledger:
        done = append_output(ledger, key, source,
                             lambda metric: harness.read_runs(Path(path), metric=metric),
                             plan=plan, arm=arm, declared=declared, session=_session(session),
                             once=once, what=path)
        entries: list[Any] = done.entries
        plan_body = done.plan
        drain_spool(ledger, key)
    intake_cli.announce(entries, plan_body)
    intake_cli.warn_gaps(entries)
    return entries


def run(
    command: list[str] = typer.Argument(..., metavar="-- CMD ARGS...",
                                        help="The command that runs the evaluation."),
    plan: str = typer.Option(None, "--plan", help="The plan this run belongs to (slug or "
                             "digest); without it the run is exploratory."),
    arm: str = typer.Option(None, "--arm", help="The plan's arm this run measures."),
    session: str = typer.Option(None, "--session", help="Session id (or LOGBOOK_SESSION)."),
    outcomes: str = typer.Option(None, "--outcomes", help="JSON Lines of items the command "
                                 "writes: {id, score, cluster?, error?}."),
    source: tuple[str, str] | None = typer.Option(None, "--from", metavar="SOURCE PATH",
                                           help="A harness output: lm-eval PATH or inspect "
                                           "PATH."),
    apparatus: str = typer.Option(None, "--apparatus", help="JSON object of what only you or "
                                  "the engine know (engine build, flags as applied, ...)."),
    logs: list[str] = typer.Option([], "--log", help="A log file to hash and keep (repeatable)."),
    note: str = typer.Option(None, "--note", help="A note kept with the run."),
    beyond_plan: str = typer.Option(None, "--beyond-plan", metavar="REASON",
                                    help="Run even though the arm has its runs_per_arm "
                                    "completed runs, saying why (kept in the run; the audit "
                                    "judges it, A04)."),
) -> None:
    """Run CMD and append its run, whatever happens to it."""
    from logbook.capture.apparatus import capture
    from logbook.crypto.signing import load_key
    from logbook.ingest import adapter_for
    from logbook.ledger.entry import now_rfc3339

    kind, src_path = source if source else (None, None)
    if kind is not None and (not src_path or src_path == "--"):
        raise InputError(f"--from {kind} PATH: the PATH is {src_path!r}; name the harness's "
                         "output folder or file before -- CMD")
    if kind is not None and outcomes is not None:
        raise InputError("give either --outcomes or --from, not both")
    if not command:
        raise InputError("CMD is required after --")
    if kind is None and outcomes is None:
        kind, src_path = _found_output(command)
    harness = adapter_for(kind or "jsonl", "--from")  # --outcomes is a JSON Lines file
    if outcomes is not None and Path(outcomes).is_dir():
        raise InputError(f"--outcomes {outcomes} is a directory: name the JSON Lines file the "
                         "command will write")
    declared = _declared(apparatus)
    key = load_key()
    with state.open_ledger(write=True) as ledger:
        digest = _check_plan(ledger, plan, arm)
        plan_body = ledger.plan_body(digest) if digest else None
        _within_plan(ledger, digest, plan, arm, beyond_plan)
        metric = routing.item_metric(kind or "jsonl", plan_body)
        # the key must be able to sign here: learn it now, not after hours of work
        ledger.check_key(key)
        db = ledger.path
    target = src_path or outcomes
    assert target is not None
    # from here until the run is appended, SIGINT/SIGTERM/SIGHUP cannot lose it
    with Signals() as signals:
        captured = capture(command, Path.cwd(), ignore=db.parent)
        taken = argv_redaction(command, os.environ)[1]  # scrubbed wherever they reappear
        if plan_body is not None:  # a pinned apparatus contradicted: refused before it runs
            check_pins(plan_body, arm, {**declared, "captured": captured}, "apparatus")
            check_pins(plan_body, arm, as_apparatus(requested(command)),
                       "the command line's apparatus")
        done = run_command(command, harness, target, signals, metric=metric, clock=now_rfc3339,
                           env=wrapped_env())
        log_refs, unreadable, lost = _keep_logs(done.output.data(), logs, taken)
        if unreadable:
            note = "; ".join(([note] if note else []) + unreadable)
        base = {"plan": digest, "arm": arm, "session": _session(session),
                "started": done.started, "finished": done.finished, "logs": log_refs,
                "note": note, "beyond_plan": beyond_plan if digest else None}
        drafts = routing.command_runs(done.bodies, plan_body, base, declared, captured,
                                      done.status, done.reason, lost, taken)
        fallback = routing.failed_command_run(base, declared, captured, done.status,
                                              done.reason, lost)
        try:
            entries, code, routed = _append(drafts, key, done.code, fallback, taken, plan)
        except AlreadyRecorded:  # all it found is already in the ledger: nothing to add
            raise
        except Exception as exc:
            # even the append failed (a full disk, a lost lock, a bug): the record is kept
            # for later, then a bug still ends as one (exit 70, with its traceback)
            recover(db, drafts, exc)
            if not isinstance(exc, LogbookError | OSError):
                raise
            raise typer.Exit(done.code or 3) from None
    from logbook.cli.state import print_appended

    print_appended(entries, as_json=False)  # stdout: SEQ DIGEST run, the data, as append does
    for e in entries:
        print(f"logbook: appended run {e.seq} {e.digest} ({e.body.get('status')})",
              file=sys.stderr)
    if routed:
        intake_cli.announce(entries, plan_body)
    intake_cli.warn_gaps(entries)
    unfinished = [e for e in entries if e.body.get("status") != "completed"]
    if code == 0 and unfinished:  # the command said 0; the run it left says otherwise
        e = unfinished[0]
        print(f"logbook: the command exited 0, but run {e.seq} is {e.body.get('status')}: "
              f"{e.body.get('reason')}", file=sys.stderr)
        code = 1
    raise typer.Exit(code)


def _keep_logs(output: bytes, logs: list[str],
               taken: list[str]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """capture.blobs.keep_logs into the ledger (opened again: none is held open while the
    command runs): files beside a SQLite ledger, rows of a server's. A ledger that cannot be
    opened now keeps no log, and the run says so for each."""
    from logbook.capture.blobs import keep_logs

    try:
        with state.open_ledger(write=True) as ledger:
            return keep_logs(ledger.keep_blob, output, logs, taken)
    except (LogbookError, OSError) as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__

        def cannot(_digest: str, _data: bytes) -> None:
            raise OSError(f"the ledger could not be opened ({why})")

        return keep_logs(cannot, output, logs, taken)


def _found_output(command: list[str]) -> tuple[str, str]:
    """The harness output a command line names (lm_eval's --output_path, inspect eval's log
    folder), said on stderr; without one, where to look must be given."""
    from logbook.ingest import command_output

    found = command_output(command, os.environ)
    if found is None:
        raise InputError("say where the outcomes will be: --outcomes FILE or --from SOURCE "
                         "PATH (only `lm_eval ... --output_path P` and `inspect eval` name "
                         "their own)")
    intake_cli.say(f"reading the {found[0]} output the command writes to {found[1]}")
    return found


def wrapped_env() -> dict[str, str]:
    """The command's environment: ours, marked so that a harness's logbook hook leaves the
    run to `logbook run` (which records it once, with its logs and signals)."""
    from logbook.integrations.switch import wrapped_marker

    return {**os.environ, **wrapped_marker()}


def _append(drafts: list[tuple[str, dict[str, Any]]], key: Any, code: int,
            fallback: dict[str, Any], taken: list[str],
            plan: str | None) -> tuple[list[Any], int, bool]:
    """routing.admit, in the ledger opened again for it: none is held open while the command
    runs."""
    with state.open_ledger(write=True) as ledger:
        done = routing.admit(ledger, drafts, key, code, fallback, taken, plan, intake_cli.say)
        drain_spool(ledger, key)
        return done


def drain_spool(ledger: Any, key: Any) -> list[Any]:
    """After a command's own append: the runs a harness integration spooled beside this
    ledger (logbook.integrations.spool), each said; a run its plan refuses is kept as an
    exploratory run, as the integration would have kept it."""
    from logbook.integrations.spool import drain

    return drain(ledger, key, intake_cli.say).entries


def append_spool(exploratory: bool) -> tuple[list[Any], list[tuple[Path, str]]]:
    """`logbook append --spool [--exploratory]`: append the spooled runs (exit 2 when the
    spool is empty); what stays in the spool is returned, each with why. Without
    ``exploratory``, a run its plan refuses stays there."""
    from logbook.crypto.signing import load_key
    from logbook.integrations.spool import drain, folder_of, pending

    key = load_key()
    with state.open_ledger(write=True) as ledger:
        folder = folder_of(ledger)
        if not pending(folder):
            raise InputError(f"--spool: the spool {folder} holds no runs")
        done = drain(ledger, key, intake_cli.say, keep_refused=exploratory)
    return done.entries, done.left


def recover(db: Path, drafts: list[tuple[str, dict[str, Any]]], exc: BaseException) -> None:
    """Keep the run's record where `logbook append --jsonl` takes it later: a file beside the
    ledger, or, when even that cannot be written, stderr."""
    from logbook.capture.recovery import keep_drafts

    why = " ".join(str(exc).split()) or type(exc).__name__
    kept = keep_drafts(db, drafts)
    if kept.path is None:
        print(f"logbook: the run could not be appended ({why}) nor kept beside the ledger; "
              "its record follows, one draft per line: save it and append it later with "
              f"`logbook append --jsonl FILE --once {kept.name}`", file=sys.stderr)
        sys.stderr.write(kept.lines)
        return
    print(f"logbook: the run could not be appended ({why}); its record is kept in "
          f"{kept.path}: append it later with `logbook append --jsonl {kept.path} --once "
          f"{kept.name}`", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command(context_settings={"allow_interspersed_args": False})(run)
