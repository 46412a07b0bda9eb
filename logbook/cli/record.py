"""`logbook run -- CMD` and `logbook append --from SOURCE PATH`: recording runs in one command.

`run` checks everything it will need before the command starts, then runs it, streams its output
through, and appends a run whatever happens: a non-zero exit is `failed`, a signal or Ctrl-C is
`aborted`, an unreadable outcome file is `failed` naming the file. It exits with the command's
status, or 1 when the command exited 0 but its run is failed or aborted, or was not the plan's
(kept as an exploratory run); 2 when all it found is already in the ledger.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import typer

from logbook.capture.process import Output, Signals, execute
from logbook.capture.redact import argv_redaction, scrub_run_body
from logbook.cli import record_intake as intake_cli
from logbook.cli import state
from logbook.errors import InputError, LogbookError
from logbook.ledger.intake import AlreadyRecorded, NotOfPlan, check_pins


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


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def _session(session: str | None) -> str | None:
    return session or os.environ.get("LOGBOOK_SESSION") or None


def _check_plan(ledger: Any, plan: str | None, arm: str | None) -> str | None:
    if plan is None:
        if arm is not None:
            raise InputError("--arm needs --plan")
        return None
    if arm is None:
        raise InputError(f"--plan {plan} needs --arm: the arm of the plan these runs belong to")
    digest = ledger.resolve(plan, "--plan")
    if ledger.store.kind_of(digest)[1] != "plan":
        raise InputError(f"--plan {plan}: that entry is not a plan")
    arms = [a.get("name") for a in ledger.plan_body(digest).get("arms", [])]
    if arm not in arms:
        raise InputError(f"--arm {arm!r} is not an arm of plan {plan} "
                         f"(its arms are {', '.join(map(str, arms))})")
    return digest


def _item_metric(ledger: Any, source: str, plan: str | None) -> str | None:
    """JSON Lines items score the plan's metric (named by the plan, not the file); the other
    harnesses name their own metrics."""
    if source != "jsonl" or plan is None:
        return None
    name = (ledger.plan_body(plan).get("metric") or {}).get("name")
    return name if isinstance(name, str) and name else None


def append_from(source: str, path: str | None, plan: str | None, arm: str | None,
                session: str | None, apparatus: str | None, once: str | None) -> list[Any]:
    """`logbook append --from SOURCE PATH`: every run the harness output holds, all or none;
    with --plan, the run of the plan's suite goes to the arm, the others are exploratory."""
    from logbook.crypto.signing import load_key
    from logbook.ingest import SOURCES, read_runs

    if source not in SOURCES:
        raise InputError(f"--from {source!r} is not one of {', '.join(SOURCES)}")
    if path is None:
        raise InputError(f"--from {source} needs the PATH of the harness output")
    declared = _declared(apparatus)
    key = load_key()
    with state.open_ledger(write=True) as ledger:
        digest = _check_plan(ledger, plan, arm)
        plan_body = ledger.plan_body(digest) if digest else None
        bodies = read_runs(source, Path(path), metric=_item_metric(ledger, source, digest))
        drafts = []
        for body, to_plan in zip(bodies, intake_cli.route(plan_body, bodies), strict=True):
            body = dict(body)
            intake_cli.bind(body, digest, arm, to_plan)
            body["apparatus"] = _merge(body.get("apparatus") or {}, declared)
            if _session(session):
                body["session"] = _session(session)
            drafts.append(("run", scrub_run_body(body)))
        if not drafts:
            raise InputError(f"{path} holds no runs")
        try:
            entries = ledger.append_many(drafts, key, once=once)
        except InputError as exc:  # a run the ledger refuses: say which file it came from
            raise type(exc)(f"{path}: {exc}") from None
    intake_cli.announce(entries, plan_body)
    intake_cli.warn_gaps(entries)
    return entries


def run(
    command: list[str] = typer.Argument(..., metavar="-- CMD ARGS...",
                                        help="The command that runs the evaluation."),
    plan: str = typer.Option(None, "--plan"),
    arm: str = typer.Option(None, "--arm"),
    session: str = typer.Option(None, "--session", help="Session id (or LOGBOOK_SESSION)."),
    outcomes: str = typer.Option(None, "--outcomes", help="JSON Lines of items the command "
                                 "writes: {id, score, cluster?, error?}."),
    source: tuple[str, str] | None = typer.Option(None, "--from", metavar="SOURCE PATH",
                                           help="A harness output: lm-eval PATH or inspect "
                                           "PATH."),
    apparatus: str = typer.Option(None, "--apparatus", help="JSON object of what only you or "
                                  "the engine know (engine build, flags as applied, ...)."),
    logs: list[str] = typer.Option([], "--log", help="A log file to hash and keep (repeatable)."),
    note: str = typer.Option(None, "--note"),
) -> None:
    """Run CMD and append its run, whatever happens to it."""
    from logbook.capture.apparatus import capture
    from logbook.crypto.signing import load_key
    from logbook.files import max_input_bytes
    from logbook.ingest import SOURCES
    from logbook.ledger.service import now_rfc3339

    kind, src_path = source if source else (None, None)
    if kind is not None and kind not in SOURCES:
        raise InputError(f"--from {kind!r} is not one of {', '.join(SOURCES)}")
    if kind is not None and (not src_path or src_path == "--"):
        raise InputError(f"--from {kind} PATH: the PATH is {src_path!r}; name the harness's "
                         "output folder or file before -- CMD")
    if kind is not None and outcomes is not None:
        raise InputError("give either --outcomes or --from, not both")
    if kind is None and outcomes is None:
        raise InputError("say where the outcomes will be: --outcomes FILE or --from SOURCE PATH")
    if not command:
        raise InputError("CMD is required after --")
    if outcomes is not None and Path(outcomes).is_dir():
        raise InputError(f"--outcomes {outcomes} is a directory: name the JSON Lines file the "
                         "command will write")
    declared = _declared(apparatus)
    key = load_key()
    with state.open_ledger(write=True) as ledger:
        digest = _check_plan(ledger, plan, arm)
        plan_body = ledger.plan_body(digest) if digest else None
        metric = _item_metric(ledger, kind or "jsonl", digest)
        # the key must be able to sign here: learn it now, not after hours of work
        ledger.check_key(key)
        db = ledger.path
    # from here until the run is appended, SIGINT/SIGTERM/SIGHUP cannot lose it
    with Signals() as signals:
        captured = capture(command, Path.cwd(), ignore=db.parent)
        taken = argv_redaction(command, os.environ)[1]  # scrubbed wherever they reappear
        if plan_body is not None:  # a pinned apparatus contradicted: refused before it runs
            check_pins(plan_body, arm, {**declared, "captured": captured}, "apparatus")

        source_kind, source_path = kind or "jsonl", src_path or outcomes
        assert source_path is not None
        before = _snapshot(source_kind, source_path)
        started, start_ns = now_rfc3339(), time.time_ns()
        status, reason, code = execute(command, out := Output(max_input_bytes()), signals)
        finished = now_rfc3339()
        if status != "completed":  # the harness's own error, from what the command printed
            said = intake_cli.harness_error(out.data())
            reason = f"{reason}: {said}" if said else reason
        # a run that did not complete may have been cut off mid-line: keep its whole lines
        bodies, read_error = _read_outcomes(source_kind, source_path, before, metric,
                                            cut_off_ok=status != "completed", since=start_ns)
        if read_error and status == "completed":
            status, reason = "failed", read_error
        elif read_error:
            reason = f"{reason}; {read_error}"
        log_refs, unreadable, lost = _keep_logs(db, out.data(), logs, taken)
        if unreadable:
            note = "; ".join(([note] if note else []) + unreadable)
        base = {"plan": digest, "arm": arm, "session": _session(session), "started": started,
                "finished": finished, "logs": log_refs, "note": note}
        drafts = []
        bodies = bodies or [{}]
        for body, to_plan in zip(bodies, intake_cli.route(plan_body, bodies), strict=True):
            app = _merge(_merge(body.get("apparatus") or {}, declared), {"captured": captured})
            merged = {**body, **{k: v for k, v in base.items() if v is not None}, "apparatus": app}
            intake_cli.bind(merged, digest, arm, to_plan)
            if status != "completed":
                if merged.get("status", "completed") == "completed":
                    merged["status"] = status
                merged["reason"] = (reason if not body.get("reason")
                                    else f"{reason}; {body['reason']}")
            if lost:  # the run is recorded all the same, saying which logs were not kept
                merged["reason"] = "; ".join([r for r in (merged.get("reason"),) if r] + lost)
            merged.setdefault("status", "completed")
            drafts.append(("run", scrub_run_body(merged, taken)))
        try:
            entries, code, routed = _append(drafts, key, code, {
                "plan": digest, "arm": arm, "status": "failed" if status == "completed"
                else status, "reason": "; ".join([r for r in (reason,) if r] + lost),
                "apparatus": {**declared, "captured": captured},
                **{k: v for k, v in base.items() if v is not None and k not in ("plan", "arm")}},
                taken, plan)
        except AlreadyRecorded:  # all it found is already in the ledger: nothing to add
            raise
        except (LogbookError, OSError, sqlite3.Error) as exc:
            # even the append failed (a full disk, a lost lock): the record is kept for later
            recover(db, drafts, exc)
            raise typer.Exit(code or 3) from None
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


def _append(drafts: list[tuple[str, dict[str, Any]]], key: Any, code: int,
            fallback: dict[str, Any], taken: list[str],
            plan: str | None) -> tuple[list[Any], int, bool]:
    """Append the run's drafts (and whether each went where route() put it). Outputs already
    recorded are left out; a run the plan does not take is kept as an exploratory run saying
    why; one the ledger refuses otherwise is kept as a failed run saying why."""
    with state.open_ledger(write=True) as ledger:
        drafts, code = intake_cli.drop_recorded(ledger, drafts, code)
        try:
            return ledger.append_many(drafts, key), code, True
        except NotOfPlan as exc:  # what happened belongs elsewhere: kept, exploratory
            print(f"logbook: not counted in plan {plan}: {exc}", file=sys.stderr)
            drafts = [("run", intake_cli.exploratory(b, f"not counted in plan {plan}: {exc}",
                                                     taken))
                      for _, b in drafts]
            return ledger.append_many(drafts, key), code or 1, False
        except InputError as exc:
            # a run that happened is never lost: keep it as failed, saying why
            why = f"its record was refused: {exc}"
            fallback["reason"] = f"{fallback['reason']}; {why}" if fallback["reason"] else why
            return (ledger.append_many([("run", scrub_run_body(fallback, taken))], key),
                    code or 1, False)


def recover(db: Path, drafts: list[tuple[str, dict[str, Any]]], exc: BaseException) -> None:
    """Keep the run's record where `logbook append --jsonl` takes it later: a file beside the
    ledger, or, when even that cannot be written, stderr."""
    import orjson

    from logbook.files import write_new

    lines = "".join(orjson.dumps({"kind": k, "body": b}).decode() + "\n" for k, b in drafts)
    why = " ".join(str(exc).split()) or type(exc).__name__
    name = f"recovered-run-{now_stamp()}-{os.getpid()}.jsonl"
    path = db.parent / name
    try:
        write_new(path, lines, "recovery file")
    except (LogbookError, OSError):
        print(f"logbook: the run could not be appended ({why}) nor kept beside the ledger; "
              "its record follows, one draft per line: save it and append it later with "
              f"`logbook append --jsonl FILE --once {name}`", file=sys.stderr)
        sys.stderr.write(lines)
        return
    print(f"logbook: the run could not be appended ({why}); its record is kept in {path}: "
          f"append it later with `logbook append --jsonl {path} --once {name}`",
          file=sys.stderr)


def now_stamp() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


# what each harness writes into an output folder; files already there belong to earlier runs
_OUTPUT_GLOBS = {"lm-eval": ("**/results_*.json",), "inspect": ("*.eval", "*.json"),
                 "jsonl": ("*.jsonl",)}

Snapshot = dict[Path, tuple[int, int, int]]


def _snapshot(kind: str, path: str) -> Snapshot:
    """(mtime_ns, size, inode) of every output file there before the command runs."""
    target = Path(path)
    files = ([f for g in _OUTPUT_GLOBS[kind] for f in target.glob(g)] if target.is_dir()
             else [target])
    out: Snapshot = {}
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        out[f] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


# a file system stamps times at its clock's granularity (a few ms), which may trail ours
_CLOCK_SLACK_NS = 20_000_000


def _written(before: Snapshot, f: Path, since: int | None = None) -> bool:
    """Created or changed since the snapshot, and (given ``since``) modified after it."""
    try:
        st = f.stat()
    except OSError:
        return False
    if since is not None and st.st_mtime_ns < since - _CLOCK_SLACK_NS:
        return False
    return before.get(f) != (st.st_mtime_ns, st.st_size, st.st_ino)


def _read_outcomes(kind: str, path: str | None, before: Snapshot, metric: str | None = None,
                   cut_off_ok: bool = False,
                   since: int | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """The runs this command wrote: only files it created or changed, modified after it
    started (``since``, ns), count. With cut_off_ok,
    a JSON Lines file whose last line was cut off mid-write keeps its whole lines."""
    from logbook.ingest import read_runs

    assert path is not None
    target = Path(path)
    if target.is_dir():
        files = sorted({f for g in _OUTPUT_GLOBS[kind] for f in target.glob(g)
                        if f.is_file() and _written(before, f, since)})
        if not files:
            return [], f"outcomes not read: {path} holds no {kind} output written by this run"
    elif target.is_file() and not _written(before, target, since):
        return [], (f"outcomes not read: {path} was not written by this run (it was there, "
                    "unchanged, before the command started)")
    else:
        files = [target]
    bodies: list[dict[str, Any]] = []
    try:
        for f in files:
            bodies.extend(read_runs(kind, f, metric=metric, cut_off_ok=cut_off_ok))
    except LogbookError as exc:
        return [], f"outcomes not read: {exc}"
    return bodies, None


def _keep_logs(db: Path, output: bytes, logs: list[str],
               taken: list[str]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Log references for the command's output and each --log file (read with logbook's
    bound), what was unreadable, and which blobs could not be kept (their references are
    kept all the same)."""
    from logbook.capture.blobs import BlobNotKept, keep
    from logbook.files import read_bytes

    refs: list[dict[str, Any]] = []
    unreadable: list[str] = []
    lost: list[str] = []

    def one(label: str, data: bytes) -> None:
        try:
            refs.append(keep(db, label, data, values=taken))
        except BlobNotKept as exc:
            refs.append(exc.ref)
            lost.append(exc.why)

    if output:
        one("output", output)
    for name in logs:  # one at a time: each may be large
        try:
            data = read_bytes(name, "log file")
        except LogbookError as exc:
            why = str(exc).removeprefix(f"log file {name} ")
            unreadable.append(f"log file {name} could not be read: {why}")
            continue
        one(Path(name).name, data)
        del data
    return refs, unreadable, lost


def register(app: typer.Typer) -> None:
    app.command(context_settings={"allow_interspersed_args": False})(run)
