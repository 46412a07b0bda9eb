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
import time
from pathlib import Path
from typing import Any

import typer

from logbook.capture import scrub_run_body
from logbook.cli import record_intake as intake_cli
from logbook.cli import state
from logbook.cli.record_exec import Signals, execute
from logbook.errors import InputError, LogbookError
from logbook.intake import AlreadyRecorded, NotOfPlan, check_pins, check_source


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
    from logbook.crypto import load_key
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
    from logbook.capture import capture
    from logbook.crypto import load_key
    from logbook.ingest import SOURCES
    from logbook.ledger import now_rfc3339

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
        if plan_body is not None:  # a pinned apparatus contradicted: refused before it runs
            check_pins(plan_body, arm, {**declared, "captured": captured}, "apparatus")
        source_kind, source_path = kind or "jsonl", src_path or outcomes
        assert source_path is not None
        before = _snapshot(source_kind, source_path)
        started, start_ns = now_rfc3339(), time.time_ns()
        status, reason, code = execute(command, out := [], signals)
        finished = now_rfc3339()
        if status != "completed":
            said = intake_cli.harness_error(b"".join(out))
            reason = f"{reason}: {said}" if said else reason
        # a run that did not complete may have been cut off mid-line: keep its whole lines
        bodies, read_error = _read_outcomes(source_kind, source_path, before, metric,
                                            cut_off_ok=status != "completed", since=start_ns)
        if read_error and status == "completed":
            status, reason = "failed", read_error
        elif read_error:
            reason = f"{reason}; {read_error}"
        log_refs, unreadable = _keep_logs(db, b"".join(out), logs)
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
            merged.setdefault("status", "completed")
            drafts.append(("run", scrub_run_body(merged)))
        with state.open_ledger(write=True) as ledger:
            drafts, code = _drop_recorded(ledger, drafts, code)
            routed = True  # each run where route() put it; False once a refusal moved them
            try:
                entries = ledger.append_many(drafts, key)
            except NotOfPlan as exc:  # what happened belongs elsewhere: kept, exploratory
                print(f"logbook: not counted in plan {plan}: {exc}", file=sys.stderr)
                drafts = [("run", _exploratory(b, f"not counted in plan {plan}: {exc}"))
                          for _, b in drafts]
                entries = ledger.append_many(drafts, key)
                code, routed = code or 1, False
            except InputError as exc:
                # a run that happened is never lost: keep it as failed, saying why
                fallback = {"plan": digest, "arm": arm, "status": "failed" if status == "completed"
                            else status, "reason": f"{reason + '; ' if reason else ''}its record "
                            f"was refused: {exc}", "apparatus": {**declared, "captured": captured},
                            **{k: v for k, v in base.items() if v is not None and k not in
                               ("plan", "arm")}}
                entries = ledger.append_many([("run", scrub_run_body(fallback))], key)
                code, routed = code or 1, False
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


def _exploratory(body: dict[str, Any], why: str) -> dict[str, Any]:
    if body.get("plan") is None:
        return body
    note = "; ".join(n for n in (body.get("note"), why) if n)
    return scrub_run_body({**body, "plan": None, "arm": None, "note": note})


def _drop_recorded(ledger: Any, drafts: list[tuple[str, dict[str, Any]]],
                   code: int) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """Runs whose source the ledger already holds are not recorded again: said on stderr;
    when every run is one, nothing is written (exit 2)."""
    kept, refused = [], []
    for kind, body in drafts:
        try:
            check_source(ledger.store, body)
        except AlreadyRecorded as exc:
            refused.append(exc)
            continue
        kept.append((kind, body))
    if refused and not kept:
        raise refused[0]
    for exc in refused:
        print(f"logbook: {exc}", file=sys.stderr)
    return kept, (code or 1) if refused else code


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


def _keep_logs(db: Path, output: bytes,
               logs: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Log references for the command's output and each --log file, and what was unreadable."""
    from logbook.blobs import keep

    refs = [keep(db, "output", output)] if output else []
    unreadable = []
    for name in logs:
        try:
            data = Path(name).read_bytes()
        except OSError as exc:
            unreadable.append(f"log file {name} could not be read: {exc.strerror}")
            continue
        refs.append(keep(db, Path(name).name, data))
    return refs, unreadable


def register(app: typer.Typer) -> None:
    app.command(context_settings={"allow_interspersed_args": False})(run)
