"""`check contamination` and `spot-check`: what a careful evaluator checks besides the runs,
appended as `check` entries (logbook.model.checks; docs/recording.md, "Checks")."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from logbook.cli import state
from logbook.cli.append_and_note import scrub_fields, signing_key, warn_redacted
from logbook.errors import InputError

check_app = typer.Typer(help="Record a check: contamination of a suite for a model.",
                        no_args_is_help=True)
VERDICT_WORDS = {"a": "agree", "d": "disagree", "u": "unsure"}


@check_app.command("contamination")
def contamination(
    model: str = typer.Option(..., "--model", help="The model checked (as runs name it)."),
    suite: str = typer.Option(..., "--suite", help="The suite: its name (as plans name it) or "
                              "its dataset hash."),
    split: str = typer.Option(None, "--split", help="One split of the suite (e.g. test)."),
    method: str = typer.Option(..., "--method", help="How it was looked for: a name such as "
                               "ngram-overlap, completion-probe, guided-instruction."),
    result: str = typer.Option(..., "--result", help="What was found: clean, contaminated or "
                               "inconclusive."),
    rate: float = typer.Option(None, "--rate", help="The measured rate, from 0 to 1 (e.g. the "
                               "share of items with a 13-gram overlap)."),
    description: str = typer.Option(None, "--description", help="Free text: the threshold, "
                                    "the corpus searched, who ran it."),
    evidence: str = typer.Option(None, "--evidence", metavar="FILE", help="A file kept with "
                                 "the ledger as evidence (the probe's output, a report)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Record a contamination check of SUITE for MODEL (the report's contamination line)."""
    from logbook.capture.blobs import keep

    if result not in ("clean", "contaminated", "inconclusive"):
        raise InputError(f"--result {result!r}: give clean, contaminated or inconclusive (a "
                         "measured rate goes in --rate)")
    if rate is not None and not 0 <= rate <= 1:
        raise InputError(f"--rate {rate:g}: give a share from 0 to 1")
    fields, redacted = scrub_fields({"description": description})
    body: dict[str, Any] = {"type": "contamination", "model": model, "suite": suite,
                            "method": method, "result": {"verdict": result}}
    if split is not None:
        body["split"] = split
    if rate is not None:
        body["result"]["rate"] = rate
    if fields["description"] is not None:
        body["description"] = fields["description"]
    data = state.read_input(evidence, "--evidence") if evidence is not None else None
    key = signing_key()
    with state.open_ledger(write=True) as ledger:
        if data is not None:
            body["evidence"] = keep(ledger.entry_log.keep_blob, Path(str(evidence)).name, data)
        state.print_appended([ledger.append("check", body, key)], as_json)
    warn_redacted(redacted, "check's --description")


def spot_check(
    ref: str = typer.Argument(..., metavar="RUN", help="The run (@SEQ, digest or prefix)."),
    n: int = typer.Option(20, "--n", help="How many items to draw."),
    seed: int = typer.Option(0, "--seed", help="The draw's seed (recorded)."),
    verdicts: str = typer.Option(None, "--verdicts", metavar="FILE", help="The verdicts, for "
                                 "agents: a JSON list (or JSON Lines) of {id, verdict: agree | "
                                 "disagree | unsure, note?}, one per item drawn."),
    reviewer: str = typer.Option(None, "--reviewer", help="Who judged (a name)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the items drawn with their "
                                 "traces; append nothing."),
    as_json: bool = state.json_flag(),
) -> None:
    """Check the scorer by hand on a reproducible random draw of RUN's items.

    Shows each drawn item's trace and takes your verdict (agree, disagree or unsure with the
    scorer, and a note), then appends a `check` entry of type spot-check. Without a terminal,
    give --verdicts FILE."""
    from logbook.analysis.items import items_of
    from logbook.format.spotcheck import draw

    if not 1 <= n <= 10_000:
        raise InputError(f"--n {n}: draw from 1 to 10000 items")
    if not 0 <= seed < 2**53:
        raise InputError(f"--seed {seed}: give a whole number from 0 to 2^53 - 1")
    given = _read_verdicts(verdicts) if verdicts is not None else None
    with state.open_ledger() as ledger:
        e = ledger.get(ref)
        if e.kind != "run":
            raise InputError(f"{ref}: entry @{e.seq} is a {e.kind}, not a run")
        rows = items_of(e.body, ledger.entry_log.blob)
    if not rows:
        raise InputError(f"{ref}: run @{e.seq} has no items to spot-check")
    drawn = draw(e.digest, [r.id for r in rows], n, seed)
    by_id: dict[str, list[Any]] = {}
    for r in rows:
        by_id.setdefault(r.id, []).append(r)
    if dry_run:
        out = [{"id": i, "rows": [r.as_json() for r in by_id[i]]} for i in drawn]
        if as_json:
            state.emit_json({"run": e.digest, "seq": e.seq, "n": n, "seed": seed, "items": out})
        else:
            print(f"run @{e.seq}: {len(drawn)} items drawn (seed {seed}): {', '.join(drawn)}")
        return
    if given is None:
        if not sys.stdin.isatty():
            raise InputError("--verdicts FILE: no terminal to ask for verdicts (give them in a "
                             "file: see `logbook spot-check --help`)")
        given = _ask(drawn, by_id)
    fields, redacted = scrub_fields({str(i): v.get("note") for i, v in enumerate(given)})
    judged = []
    for i, v in enumerate(given):
        one = {"id": v["id"], "verdict": v["verdict"]}
        if fields[str(i)]:
            one["note"] = fields[str(i)]
        judged.append(one)
    body: dict[str, Any] = {"type": "spot-check", "run": e.digest,
                            "draw": {"n": n, "seed": seed}, "verdicts": judged}
    if reviewer is not None:
        body["reviewer"] = reviewer
    key = signing_key()
    with state.open_ledger(write=True) as ledger:
        state.print_appended([ledger.append("check", body, key)], as_json)
    warn_redacted(redacted, "verdicts' notes")


def _read_verdicts(path: str) -> list[dict[str, Any]]:
    data = state.read_input(path, "--verdicts")
    text = data.decode("utf-8", "replace").strip()
    if text.startswith("["):
        value = state.parse_json(data, path)
    else:
        value = [state.parse_json(line.encode(), f"{path} line {k}")
                 for k, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(f"--verdicts {path}: expected a list of objects {{id, verdict, note?}}")
    for k, v in enumerate(value):
        if not isinstance(v.get("id"), str) or v.get("verdict") not in VERDICT_WORDS.values():
            raise InputError(f"--verdicts {path}: verdicts[{k}] needs an id (text) and a "
                             "verdict: agree, disagree or unsure")
        if v.get("note") is not None and not isinstance(v["note"], str):
            raise InputError(f"--verdicts {path}: verdicts[{k}].note must be text")
        extra = sorted(set(v) - {"id", "verdict", "note"})
        if extra:
            raise InputError(f"--verdicts {path}: verdicts[{k}].{extra[0]} is not a field "
                             "(id, verdict, note)")
    return value


def _ask(drawn: list[str], by_id: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Each drawn item's trace shown on the terminal, its verdict and note asked."""
    out = []
    for k, item in enumerate(drawn, 1):
        print(f"\n--- item {k} of {len(drawn)}: {item}")
        for r in by_id[item]:
            print(f"score {r.score if r.score is not None else 'missing'}"
                  + (f" (sample {r.sample})" if r.sample is not None else "")
                  + (f"  error {r.error}" if r.error else ""))
            for name in ("prompt", "output", "target", "verdict", "explanation"):
                if name in r.trace:
                    print(f"{name}: {r.trace[name]}")
        word = ""
        while word not in VERDICT_WORDS:
            word = input("the scorer is right? [a]gree / [d]isagree / [u]nsure: ").strip()[:1]
        note = input("note (Enter for none): ").strip()
        out.append({"id": item, "verdict": VERDICT_WORDS[word], "note": note or None})
    return out


def register(app: typer.Typer) -> None:
    app.add_typer(check_app, name="check")
    app.command("spot-check")(spot_check)
