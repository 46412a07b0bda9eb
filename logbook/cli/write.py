"""Commands that write entries: init, append, plan, amend, note, retract, reindex.

Each prints what it appended through `print_appended`: data on stdout, confirmations and
warnings on stderr (docs/recording.md, "What a writing command prints")."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from logbook.cli import state
from logbook.cli.append_and_note import (
    append_drafts,
    append_note,
    scrub_fields,
    signing_key,
    warn_redacted,
)
from logbook.cli.record import cost_option, split_option, suite_option, tokens_option
from logbook.cli.state import print_appended
from logbook.errors import InputError

# what other command modules take from here
__all__ = ["_key", "scrub_fields", "warn_redacted"]


def _key() -> Any:
    return signing_key()


def init(
    path: Path = typer.Argument(Path("."), help="Folder to create .logbook/ in."),
    name: str = typer.Option(..., "--name", help="The ledger's name."),
    as_json: bool = state.json_flag(),
) -> None:
    """Create a ledger (.logbook/ledger.db, or the tables of a postgresql:// URL given to
    --ledger) whose genesis entry names its public key."""
    from logbook.crypto.signing import load_or_create_key
    from logbook.ledger.service import Ledger, is_url

    url = state.options().ledger
    target: Path | str = url if url is not None and is_url(url) else path
    if target is path and not path.is_dir():
        raise InputError(f"PATH {path} is not a folder")
    key, created = load_or_create_key()
    with Ledger.init(target, name, key) as ledger:
        g = ledger.genesis
        if as_json:
            state.emit_json({"ledger": ledger.uuid, "name": name, "path": ledger.location,
                             "key": str(key.path), "key_created": created,
                             "fingerprint": key.public.fingerprint, "digest": g.digest})
        else:  # the genesis entry is the data; what was done, the confirmation
            print_appended([g], as_json=False)
            if created:
                print(f"logbook: created signing key {key.path}", file=sys.stderr)
            print(f"logbook: initialised ledger {name!r} ({ledger.uuid}) at "
                  f"{ledger.location}, signed by {key.public.fingerprint}", file=sys.stderr)


def append(
    file: str = typer.Argument(None, help="Entry draft {kind, body} as JSON, or - for stdin."),
    jsonl: bool = typer.Option(False, "--jsonl", help="FILE holds one draft per line: all "
                               "are appended, or none."),
    once: str = typer.Option(None, "--once", help="Idempotency key: if an append with this "
                             "key was already made of the same draft, return that entry "
                             "instead (another draft under the key is exit 2)."),
    source: str = typer.Option(None, "--from", help="Ingest a harness output instead: "
                               "lm-eval, inspect or jsonl."),
    plan: str = typer.Option(None, "--plan", help="With --from: the plan the runs belong to."),
    arm: str = typer.Option(None, "--arm", help="With --from: the arm."),
    session: str = typer.Option(None, "--session", help="With --from: the session id."),
    apparatus: str = typer.Option(None, "--apparatus", help="With --from: JSON file of "
                                  "declared apparatus to merge."),
    logs: list[str] = typer.Option([], "--log", help="With --from: a log file to hash and "
                                   "keep with the runs (repeatable); an engine's load log "
                                   "gives their apparatus.applied."),
    spool: bool = typer.Option(False, "--spool", help="Append the runs a harness integration "
                               "spooled beside the ledger when it could not append them "
                               "(docs/recording.md, \"When the append fails: the spool\")."),
    reproduces: str = typer.Option(None, "--reproduces", metavar="REF", help="The runs "
                                   "appended repeat this earlier run (@SEQ or digest): the "
                                   "same suite and metric (docs/format.md, Reproductions)."),
    exploratory: bool = typer.Option(False, "--exploratory", help="With --spool: a spooled "
                                     "run its plan refuses is appended as an exploratory run "
                                     "saying why (one whose log cannot be read, as a failed "
                                     "run saying why), instead of staying in the spool."),
    commit_items: str = typer.Option(None, "--commit-items", metavar="SALTS", help="Commit "
                                     "each run's items instead of showing them: the draft's "
                                     "outcomes.content (each row's item) is replaced by salted "
                                     "commitments; salts and content go to the file SALTS, "
                                     "which you keep (docs/format.md, Committed items)."),
    suite: str = suite_option(),
    split: str = split_option(),
    cost: str = cost_option(),
    tokens_in: int = tokens_option("in"),
    tokens_out: int = tokens_option("out"),
    as_json: bool = state.json_flag(),
) -> None:
    """Append an entry draft (or, with --from, the runs of a harness output).

    A run draft without a `session` gets LOGBOOK_SESSION's, when it is set."""
    if (suite is not None or split is not None) and source is None:
        raise InputError("--suite and --split go with --from; a run draft names them in its "
                         "apparatus (suite, split)")
    if exploratory and not spool:
        raise InputError("--exploratory goes with --spool")
    if logs and source is None:
        raise InputError("--log goes with --from (a run draft FILE names its logs itself)")
    from logbook.format.usage import from_options

    usage = from_options(cost, tokens_in, tokens_out)
    if usage is not None and source is None:
        option = "--cost" if cost is not None else "--tokens-in" if tokens_in is not None \
            else "--tokens-out"
        raise InputError(f"{option} goes with --from (a run draft FILE says its own usage)")
    if commit_items is not None and (spool or source is not None):
        raise InputError("--commit-items commits the items of a run draft FILE: not with "
                         "--spool or --from")
    if spool:
        if file is not None or source is not None or reproduces is not None:
            raise InputError("--spool appends what the spool holds: give no FILE, --from or "
                             "--reproduces")
        from logbook.cli.record import append_spool

        entries, left = append_spool(exploratory)
        print_appended(entries, as_json)
        if left:  # each was said as the spool was drained; exit 1: runs are not in the ledger
            print(f"logbook: {len(left)} spooled run(s) stay in {left[0][0].parent}: "
                  "`logbook spool list` shows them; amend the plan, or append them with "
                  "`logbook append --spool --exploratory`", file=sys.stderr)
            raise typer.Exit(1)
        return
    if source is not None:
        from logbook.cli.record import append_from

        print_appended(append_from(source, file, plan, arm, session, apparatus, once,
                                   reproduces, suite, split, logs, usage), as_json)
        return
    append_drafts(state.options().ledger, file, jsonl, once, as_json, reproduces, commit_items)


def _load_plan_file(file: str, what: str = "plan") -> dict[str, Any]:
    """A plan (or suite) file, TOML or JSON, read within the plan size limit."""
    import tomllib

    from logbook.files import read_bytes
    from logbook.limits import MAX_PLAN_BYTES, check_nesting, check_value_depth

    data = (state.read_input(file, f"{what} file") if file == "-" else
            read_bytes(file, f"{what} file", limit=MAX_PLAN_BYTES, kind=f"a {what}"))
    if len(data) > MAX_PLAN_BYTES:
        raise InputError(f"{what} file {file} is not a {what} (it is larger than "
                         f"{MAX_PLAN_BYTES} bytes)")
    if file.endswith(".json") or data.lstrip()[:1] == b"{":
        value = state.parse_json(data, file)
    else:
        check_nesting(data, file, toml=True)  # tomllib recurses: bound it before parsing
        try:
            value = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{file} is not valid TOML ({exc})") from None
        except RecursionError:  # pragma: no cover - check_nesting refuses such text first
            raise InputError(f"{file}: values nest too deeply") from None
        check_value_depth(value, file)  # dotted keys and table headers nest without brackets
    if not isinstance(value, dict):
        raise InputError(f"{file}: a {what} must be an object")
    due: Any = value.get("due")
    if hasattr(due, "isoformat"):  # a TOML date (or date-time) literal: keep its text
        value["due"] = due.isoformat()
    return value


def plan(
    file: str = typer.Argument(..., help="The plan, TOML or JSON: fields in docs/quickstart.md and "
                      "schemas/plan.json."),
    once: str = typer.Option(None, "--once", help="Idempotency key: if a plan with this key "
                             "was already appended, print it instead of appending again."),
    as_json: bool = state.json_flag(),
) -> None:
    """Pre-register a plan, before its runs."""
    from logbook.ledger.suite_door import complete_plan, suites_of

    body = _load_plan_file(file)
    key = _key()
    with state.open_ledger(write=True) as ledger:
        body = complete_plan(suites_of(ledger), body)
        entries = ledger.append_many([("plan", body)], key, once=once)
        print_appended(entries, as_json)
    _power_warning(body)


def _power_warning(body: dict[str, Any]) -> None:
    """Warn (stderr, never an error) when the plan cannot detect its own min_effect."""
    try:
        from logbook.analysis.power import plan_power_warning
    except ImportError:  # pragma: no cover - analysis is part of the package
        return
    message = plan_power_warning(body)
    if message:
        print(f"logbook: warning: {message}", file=sys.stderr)


def _parse_value(text: str) -> Any:
    import orjson

    from logbook.limits import loads_bounded

    try:
        return loads_bounded(text)  # an integer past 64 bits stays exact (and is refused)
    except orjson.JSONDecodeError:
        return text


def amend(
    plan_ref: str = typer.Argument(..., metavar="PLAN", help="The plan to amend (slug or "
                                   "digest)."),
    sets: list[str] = typer.Option(..., "--set", help="FIELD=VALUE (VALUE as JSON, else a "
                                   "string; FIELD may be dotted, e.g. suite.n_items)."),
    reason: str = typer.Option(..., "--reason", help="Why the plan changes (recorded "
                               "with the amendment)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Amend a plan: a new entry that links to it; the plan entry is never edited.

    Secrets in --reason are redacted first, as in a note."""
    from logbook.ledger.amendments import merge_changes

    assignments = []
    for item in sets:
        field, sep, value = item.partition("=")
        if not sep or not field:
            raise InputError(f"--set {item!r}: expected FIELD=VALUE")
        assignments.append((field, _parse_value(value)))
    fields, redacted = scrub_fields({"reason": reason})
    reason = str(fields["reason"])
    key = _key()
    with state.open_ledger(write=True) as ledger:
        digest = ledger.resolve(plan_ref, "PLAN")
        found = ledger.reads.kind_of(digest)
        current = ledger.plan_body(digest) if found is not None and found[1] == "plan" else {}
        changes = merge_changes(current, assignments)
        body = {"plan": digest, "changes": changes, "reason": reason}
        print_appended([ledger.append("amendment", body, key)], as_json)
    warn_redacted(redacted, "amendment's --reason")


def note(
    text: str = typer.Argument(..., help="The note (secrets in it are redacted)."),
    refs: list[str] = typer.Option([], "--ref", help="An entry the note speaks about."),
    as_json: bool = state.json_flag(),
) -> None:
    """Append a note: findings, context, the belief you held before.

    Secrets in the text (a pasted key, a URL with credentials) are redacted first."""
    append_note(state.options().ledger, text, refs, as_json)


def retract(
    ref: str = typer.Argument(..., metavar="REF", help="The entry to retract: a digest, a "
                              "unique digest prefix, @SEQ, or a plan's slug."),
    reason: str = typer.Option(..., "--reason", help="Why it is retracted."),
    category: str = typer.Option(..., "--category", help="harness_defect | data_error | "
                                 "analysis_error | superseded | other"),
    correction: str = typer.Option(None, "--correction", help="What is true instead (text, "
                                   "or the entry that corrects it)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Retract an entry: a new entry that links to it. Nothing is deleted.

    Secrets in --reason and --correction are redacted first, as in a note."""
    fields, redacted = scrub_fields({"reason": reason, "correction": correction})
    key = _key()
    body: dict[str, Any] = {"target": ref, "reason": fields["reason"], "category": category}
    if correction is not None:
        body["correction"] = fields["correction"]
    with state.open_ledger(write=True) as ledger:
        print_appended([ledger.append("retraction", body, key)], as_json)
    warn_redacted(redacted, "retraction's --reason or --correction")


def reindex(as_json: bool = state.json_flag()) -> None:
    """Rebuild every derived table from the stored entry bytes."""
    with state.open_ledger(write=True) as ledger:
        counts = ledger.reindex()
    if as_json:
        state.emit_json(counts)
    else:
        print(", ".join(f"{k}: {v}" for k, v in counts.items()))


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(append)
    app.command()(plan)
    app.command()(amend)
    app.command()(note)
    app.command()(retract)
    app.command()(reindex)
