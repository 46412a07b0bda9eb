"""Analysis commands: report (and, in their modules, compare, power, band, claim)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from logbook.cli import state
from logbook.errors import InputError

if TYPE_CHECKING:
    pass


def report(
    plan: str = typer.Argument(..., metavar="PLAN", help="Plan slug, digest prefix or @SEQ."),
    as_json: bool = state.json_flag(),
    markdown: bool = typer.Option(False, "--markdown", help="Print the report as Markdown "
                                  "(for a paper or a pull request) instead of text."),
    html: Path = typer.Option(None, "--html", metavar="FILE", help="Write a self-contained "
                              "HTML report to FILE (and say so on stderr) instead of printing "
                              "the text."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 unless the verdict is "
                                "success."),
) -> None:
    """Report on every run of a plan: intervals, the paired effect, the verdict."""
    from logbook.analysis.report import report_with_findings
    from logbook.analysis.report.formats import render, write
    from logbook.analysis.view import LedgerView

    chosen = [form for form, on in (("json", as_json), ("markdown", markdown)) if on]
    if len(chosen) > 1:
        raise InputError("choose one of --json and --markdown")
    # a bar on a terminal over a large ledger: the check, the report, the audit
    with state.open_verified(label=f"report {plan}", steps=3) as (ledger, checked, step):
        rep = report_with_findings(LedgerView(ledger, checked), plan, lambda: step(2, 3))
        step(3, 3)
    if html is not None:
        if chosen:
            raise InputError(f"--html writes a file; --{chosen[0]} prints to stdout: give one")
        write(rep, "html", html, "--html")
        print(f"wrote {html}", file=sys.stderr)  # the file is the output; stdout stays empty
    else:
        sys.stdout.write(render(rep, chosen[0] if chosen else "text"))
    if strict and rep.verdict.status != "success":
        raise typer.Exit(1)


def compare(
    a: str = typer.Argument(..., metavar="A", help="Selector: PLAN:ARM, session:ID or "
                            "FIELD=VALUE, combined with commas."),
    b: str = typer.Argument(..., metavar="B", help="The other side, a selector as for A."),
    variable: list[str] = typer.Option([], "--variable", help="The apparatus field you mean "
                                       "to vary (repeatable); every other difference is a "
                                       "confound."),
    items: bool = typer.Option(False, "--items", help="Instead: the per-item flip list "
                               "(improved, regressed, unchanged, not comparable) and the "
                               "discordance `logbook power --paired` takes; A or B may be "
                               "one run (@SEQ or a digest prefix)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Compare two sets of runs: confounds and left-out runs first, then the paired effect
    (or, with --items, which items changed)."""
    from logbook.analysis.compare import compare as do_compare
    from logbook.analysis.compare import compare_lines
    from logbook.analysis.compare_items import compare_items, item_lines
    from logbook.analysis.view import LedgerView

    if items and variable:
        raise InputError("--variable names the confound check of the paired effect; "
                         "--items takes none")
    with state.open_verified() as (ledger, checked, _):
        view = LedgerView(ledger, checked)
        if items:
            flips = compare_items(view, a, b)
            out, lines = flips.as_json(), item_lines(flips)
        else:
            res = do_compare(view, a, b, variable)
            out, lines = res.as_json(), compare_lines(res)
    if as_json:
        state.emit_json(out)
    else:
        print("\n".join(lines))


def power(
    p: float = typer.Option(..., "--p", help="Baseline score (a proportion in (0, 1))."),
    delta: float = typer.Option(None, "--delta", help="The difference to detect: prints the "
                                "items needed."),
    n: int = typer.Option(None, "--n", help="Items in the suite: prints the minimum "
                          "detectable effect."),
    alpha: float = typer.Option(0.05, "--alpha", help="Two-sided significance level "
                                "(default 0.05)."),
    target: float = typer.Option(0.8, "--power", help="The power wanted (default 0.8)."),
    paired: bool = typer.Option(False, "--paired", help="Both systems on the same items."),
    discordance: float = typer.Option(None, "--discordance", help="Paired: share of items "
                                      "the two systems score differently."),
    as_json: bool = state.json_flag(),
) -> None:
    """Items needed for a difference, or the minimum detectable effect of a suite."""
    from logbook.analysis.power import power_table

    if delta is None and n is None:
        raise InputError("give --delta (items needed) or --n (minimum detectable effect)")
    try:
        res = power_table(p, delta, n, alpha, target, paired, discordance)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if as_json:
        state.emit_json(res)
        return
    kind = "paired" if paired else "unpaired"
    if "items_needed" in res:
        print(f"{res['items_needed']} items detect a difference of {delta:g} from {p:g} "
              f"({kind}, alpha {alpha:g}, power {target:g})")
    if "min_detectable_effect" in res:
        print(f"{n} items detect a difference of {res['min_detectable_effect']:.4g} from {p:g} "
              f"({kind}, alpha {alpha:g}, power {target:g})")


def band(
    selector: str = typer.Argument(..., metavar="SELECTOR", help="The runs of the pipeline: "
                                   "PLAN:ARM, session:ID or FIELD=VALUE, combined with "
                                   "commas."),
    z: float = typer.Option(2.0, "--z", help="The band's half-width in sds (default 2)."),
    as_json: bool = state.json_flag(),
) -> None:
    """Measure a pipeline's run-to-run band and append it as a `band` entry."""
    from logbook.analysis.bands import band_body, band_summary
    from logbook.analysis.view import LedgerView
    from logbook.cli.state import print_appended
    from logbook.cli.write import _key
    from logbook.ledger.read_model import ANALYSED_KINDS, checked_reading

    key = _key()
    with state.open_ledger(write=True) as ledger:
        # the band's figures come from checked bytes
        with checked_reading(ledger, ANALYSED_KINDS) as checked:
            body = band_body(LedgerView(ledger, checked), selector, z)
        print_appended([ledger.append("band", body, key)], as_json)
        lines = band_summary(LedgerView(ledger), body)
    warnings = [ln for ln in lines if ln.startswith("warning:")]
    if not as_json:
        print("\n".join(ln for ln in lines if ln not in warnings))
    for w in warnings:
        print(f"logbook: {w}", file=sys.stderr)


def claim(
    args: list[str] = typer.Argument(..., metavar="PLAN | check REF",
                                     help="`claim PLAN --statement TEXT` appends a claim; "
                                     "`claim check REF` recomputes one."),
    statement: str = typer.Option(None, "--statement", help="The sentence as published."),
    arm: str = typer.Option(None, "--arm", help="Claim this arm's mean."),
    effect: str = typer.Option(None, "--effect", help="Claim this treatment's effect."),
    as_json: bool = state.json_flag(),
) -> None:
    """Append a claim computed from the report at the current head, or check one
    (`claim check REF`: exit 1 when the figure no longer stands)."""
    if args[0] == "check":
        if len(args) != 2:
            raise InputError("usage: logbook claim check REF")
        _claim_check(args[1], as_json)
        return
    if len(args) != 1:
        raise InputError("usage: logbook claim PLAN --statement TEXT")
    if statement is None:
        raise InputError("--statement is required: the sentence as published")
    from logbook.analysis.claims import claim_body
    from logbook.analysis.view import LedgerView
    from logbook.cli.state import print_appended
    from logbook.cli.write import _key, scrub_fields, warn_redacted
    from logbook.ledger.read_model import ANALYSED_KINDS, checked_reading

    fields, redacted = scrub_fields({"statement": statement})
    statement = str(fields["statement"])
    key = _key()
    with state.open_ledger(write=True) as ledger:
        # the claim's figures come from checked bytes
        with checked_reading(ledger, ANALYSED_KINDS) as checked:
            view = LedgerView(ledger, checked)
            body = claim_body(view, args[0], statement, arm, effect)
            from logbook.analysis.checks import search_budget

            budget = search_budget(view, view.plan(args[0]))
        print_appended([ledger.append("claim", body, key)], as_json)
        if budget["configurations"] > 1:
            print(f"logbook: this figure is one of {budget['configurations']} configurations "
                  f"tried on suite {budget['suite']} (runs @{budget['first']}–@{budget['last']}"
                  f", {budget['before_plan']} before the plan): say so where it is published",
                  file=sys.stderr)
    warn_redacted(redacted, "claim's --statement")


def _claim_check(ref: str, as_json: bool) -> None:
    from logbook.analysis.claims import check_claim
    from logbook.analysis.view import LedgerView

    with state.open_verified() as (ledger, checked, _):
        view = LedgerView(ledger, checked)
        res = check_claim(view, ref)
    if as_json:
        state.emit_json(res)
    else:
        print(f"claim @{res['seq']}: {res['statement']}")
        s = res["scale"]  # points for a proportion, as every text output prints
        lo, hi = res["interval"]
        print(f"  claimed {res['value'] * s:.4g} ({lo * s:.4g} to {hi * s:.4g})")
        if res["now"]:
            nlo, nhi = res["now"]["interval"]
            print(f"  now     {res['now']['value'] * s:.4g} ({nlo * s:.4g} to {nhi * s:.4g})")
        budget = res["search_budget"]
        if budget and budget["configurations"] > 1:
            print(f"  best of {budget['configurations']} configurations tried on suite "
                  f"{budget['suite']} (runs @{budget['first']}–@{budget['last']})")
        if res["reproduced_by"]:
            print(f"  reproduced by {len(res['reproduced_by'])} independent signer(s) in "
                  "agreement")
        for p in res["problems"]:
            if not p.startswith("the audit finds an error"):  # printed below, as the audit
                print(f"  - {p}")
        for f in res["findings"]:
            print(f"  AUDIT {f['check']} [{f['severity']}]: {f['message']}")
        errors = sum(f["severity"] == "error" for f in res["findings"])
        print("  STANDS" if res["stands"] else
              f"  FAILS: the audit finds {errors} error(s) about it or its plan"
              if errors and len(res["problems"]) == errors else "  DOES NOT STAND")
    if not res["stands"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(report)
    app.command()(compare)
    app.command()(power)
    app.command()(band)
    app.command()(claim)
