"""`logbook run -- CMD` and `logbook append --from SOURCE PATH`: recording runs in one command.

`run` checks everything it will need before the command starts, then runs it, streams its output
through, and appends a run whatever happens: a non-zero exit is `failed`, a signal or Ctrl-C is
`aborted`, an unreadable outcome file is `failed` naming the file. It exits with the command's
status, or 1 when the command exited 0 but its run is failed or aborted, or was not the plan's
(kept as an exploratory run); 2 when all it found is already in the ledger.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from logbook import config
from logbook.cli import record_intake as intake_cli
from logbook.cli import state
from logbook.errors import InputError


def _declared(apparatus: str | None) -> dict[str, Any]:
    if apparatus is None:
        return {}
    value = state.parse_json(state.read_input(apparatus, "apparatus file"), apparatus)
    if not isinstance(value, dict):
        raise InputError(f"--apparatus {apparatus}: must hold a JSON object")
    if "captured" in value:
        raise InputError(f"--apparatus {apparatus}: the key 'captured' is reserved for what "
                         "logbook captures itself")
    if "applied" in value:
        raise InputError(f"--apparatus {apparatus}: the key 'applied' is reserved for what an "
                         "engine's load log shows (name the log with --log)")
    return value


def append_from(source: str, path: str | None, plan: str | None, arm: str | None,
                session: str | None, apparatus: str | None, once: str | None,
                reproduces: str | None = None, suite: str | None = None,
                split: str | None = None, logs: list[str] | None = None,
                usage: dict[str, Any] | None = None) -> list[Any]:
    """`logbook append --from SOURCE PATH`: every run the harness output holds, all or none;
    with --plan, the run of the plan's suite goes to the arm, the others are exploratory.
    Each ``--log`` file is kept with every run, and what the first engine load log among
    them shows applied is its apparatus's ``applied``."""
    from logbook.crypto.signing import load_key
    from logbook.ingest import adapter_for
    from logbook.ingest.appending import append_output
    from logbook.ledger.suite_door import run_fields, suites_of, with_suite

    harness = adapter_for(source, "--from")
    if path is None:
        raise InputError(f"--from {source} needs the PATH of the harness output")
    declared = _declared(apparatus)
    key = load_key()
    with state.open_ledger(write=True) as ledger:
        if suite is not None or split is not None:
            declared = with_suite(declared, run_fields(suites_of(ledger), suite, split))
        refs, applied = _kept_logs(ledger, logs or [])
        if applied is not None:
            declared = {**declared, "applied": applied}
        done = append_output(ledger, key, source,
                             lambda metric: harness.read_runs(Path(path), metric=metric),
                             plan=plan, arm=arm, declared=declared,
                             session=session or config.session(),
                             once=once, what=path, reproduces=reproduces, logs=refs,
                             usage=usage)
        entries: list[Any] = done.entries
        plan_body = done.plan
        drain_spool(ledger, key)
    intake_cli.announce(entries, plan_body)
    intake_cli.warn_gaps(entries)
    intake_cli.warn_applied(entries, plan_body)
    return entries


def _kept_logs(ledger: Any, logs: list[str]) -> tuple[list[dict[str, Any]],
                                                     dict[str, Any] | None]:
    """`append --from ... --log FILE`: each log kept by the ledger (a log that cannot be read
    is refused, exit 2, before anything is appended), and what the first engine load log
    among them shows applied."""
    from logbook.capture.blobs import keep_logs
    from logbook.capture.loadlogs import Applied

    found = Applied()
    refs, unreadable, lost = keep_logs(ledger.entry_log.keep_blob, b"", logs, [], found.see)
    if unreadable:
        raise InputError(f"--log: {unreadable[0]}")
    for why in lost:
        intake_cli.say(why)
    return refs, found.applied


def cost_option() -> Any:
    """--cost "AMOUNT CURRENCY": the money the run cost (docs/recording.md, "Cost")."""
    return typer.Option(None, "--cost", metavar="\"AMOUNT CURRENCY\"", help="What the run "
                        "cost, e.g. \"0.42 USD\" (an ISO 4217 code); kept in its usage.")


def tokens_option(way: str) -> Any:
    """--tokens-in N / --tokens-out N: the tokens the run sent or received."""
    return typer.Option(None, f"--tokens-{way}", metavar="N", help=f"Tokens {way} the run "
                        "used (all models), replacing what the harness output says.")


def suite_option() -> Any:
    """--suite NAME[@VERSION]: the suite entry the run is of (docs/recording.md, "Suites and
    held-out splits")."""
    return typer.Option(None, "--suite", metavar="NAME[@VERSION]", help="The run is of this "
                        "suite entry (`logbook suite`); with append, only with --from.")


def split_option() -> Any:
    """--split NAME: the suite entry's split the run is of."""
    return typer.Option(None, "--split", metavar="NAME", help="With --suite: the run is of "
                        "this split (a held-out split counts each run as a look).")


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
    reproduces: str = typer.Option(None, "--reproduces", metavar="REF", help="The run repeats "
                                   "this earlier run (@SEQ or digest): the same suite and "
                                   "metric (docs/format.md, Reproductions)."),
    suite: str = suite_option(),
    split: str = split_option(),
    cost: str = cost_option(),
    tokens_in: int = tokens_option("in"),
    tokens_out: int = tokens_option("out"),
) -> None:
    """Run CMD and append its run, whatever happens to it."""
    from logbook.crypto.signing import load_key
    from logbook.format.usage import from_options
    from logbook.integrations.command import NotAppended, record_command

    def declared() -> dict[str, Any]:
        return _declared(apparatus)

    if suite is not None or split is not None:  # checked before the command starts
        from logbook.ledger.suite_door import run_fields, suites_of, with_suite

        with state.open_ledger() as ledger:
            fields = run_fields(suites_of(ledger), suite, split)
        said = with_suite(_declared(apparatus), fields)

        def declared() -> dict[str, Any]:
            return said

    usage = from_options(cost, tokens_in, tokens_out)

    try:
        done = record_command(command, open_ledger=lambda: state.open_ledger(write=True),
                              key=load_key, declared=declared, plan=plan,
                              arm=arm, session=session, outcomes=outcomes, source=source,
                              logs=logs, note=note, beyond_plan=beyond_plan,
                              say=intake_cli.say, reproduces=reproduces, usage=usage)
    except NotAppended as exc:
        raise typer.Exit(exc.code) from None
    entries, code = done.entries, done.code
    state.print_appended(entries, as_json=False)  # stdout: SEQ DIGEST run, as append does
    for e in entries:
        print(f"logbook: appended run {e.seq} {e.digest} ({e.body.get('status')})",
              file=sys.stderr)
    if done.routed:
        intake_cli.announce(entries, done.plan)
    intake_cli.warn_gaps(entries)
    intake_cli.warn_applied(entries, done.plan)
    unfinished = [e for e in entries if e.body.get("status") != "completed"]
    if code == 0 and unfinished:  # the command said 0; the run it left says otherwise
        e = unfinished[0]
        print(f"logbook: the command exited 0, but run {e.seq} is {e.body.get('status')}: "
              f"{e.body.get('reason')}", file=sys.stderr)
        code = 1
    raise typer.Exit(code)


def drain_spool(ledger: Any, key: Any) -> list[Any]:
    """logbook.integrations.command.drain_spool, saying each run on stderr."""
    from logbook.integrations.command import drain_spool as drain

    return drain(ledger, key, intake_cli.say)


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


def register(app: typer.Typer) -> None:
    app.command(context_settings={"allow_interspersed_args": False})(run)
