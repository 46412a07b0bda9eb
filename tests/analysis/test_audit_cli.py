"""`logbook audit` options, its place in report / claim check / brief, docs/audit.md's commands,
and the small helpers the rules rest on (issue 8)."""

from __future__ import annotations

import math
import re
import shlex
from pathlib import Path

import pytest
from conftest import run_cli
from test_audit import (
    append,
    audit,
    checks,
    clean_ledger,
    hand_claim,
    honest_runs,
    make_plan,
    scored,
)

from logbook.analysis.audit.registry import rule_ids

DOCS = Path(__file__).resolve().parents[2] / "docs"
ALL = rule_ids()
SEVERITY = {"A01": "error", "A02": "error", "A03": "warning", "A04": "error", "A05": "error",
            "A06": "warning", "A07": "warning", "A08": "warning", "A09": "error",
            "A10": "error", "A11": "warning", "A12": "warning", "A13": "warning", "A14": "info",
            "A15": "error", "A16": "warning", "A17": "info", "A18": "warning",
            "A19": "warning", "A20": "warning", "A21": "warning", "A22": "error",
            "A23": "warning", "A24": "warning", "A25": "error", "A26": "warning",
            "A27": "error", "A28": "error", "A29": "info", "A30": "warning",
            "A31": "error", "A32": "info", "A33": "info", "A34": "warning", "A35": "info",
            "A36": "warning", "A37": "error", "A38": "warning", "A39": "warning"}


def best_of_n(tmp: Path) -> tuple[str, str]:
    """A plan whose only claim gives the best q8 run (A02), and no checkpoint (A17)."""
    plan = make_plan(tmp, anchor=False)
    runs = append(tmp, honest_runs(plan, treatment=(0.70, 0.66, 0.74)))
    return plan, hand_claim(tmp, plan, "q8", 0.74, [0.62, 0.78], runs[1::2], "q8 scores 74%")


def test_rules_lists_ids_severities_and_descriptions(ledger_dir: Path) -> None:
    r = run_cli("audit", "--rules")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert [ln.split()[0] for ln in lines] == ALL
    assert {ln.split()[0]: ln.split()[1] for ln in lines} == SEVERITY
    rows = run_cli("audit", "--rules", "--json").json
    assert [(x["id"], x["severity"]) for x in rows] == list(SEVERITY.items())
    assert all(x["title"] and x["description"] for x in rows)
    assert [x["id"] for x in run_cli("audit", "--rules", "--only", "a02,A05", "--json").json] \
        == ["A02", "A05"]


def test_rules_need_no_ledger(tmp_path: Path) -> None:
    assert run_cli("audit", "--rules").code == 0
    r = run_cli("audit")
    assert r.code == 3 and "no ledger" in r.err


def test_only_and_skip(ledger_dir: Path, tmp_path: Path) -> None:
    best_of_n(tmp_path)
    assert checks(audit(code=1)) == ["A02", "A17"]
    only = audit("--only", "A17", code=0)
    assert only["rules_run"] == ["A17"] and checks(only) == ["A17"]
    both = audit("--only", "A02", "--only", "A17,A05", code=1)
    assert both["rules_run"] == ["A02", "A05", "A17"]
    skipped = audit("--skip", "A02", code=0)
    assert "A02" not in skipped["rules_run"] and checks(skipped) == ["A17"]
    assert audit("--only", "A02,A17", "--skip", "A02", code=0)["rules_run"] == ["A17"]
    for bad in (["--only", "A99"], ["--skip", "A2x"], ["--rules", "--only", "B01"]):
        r = run_cli("audit", *bad)
        assert r.code == 2 and "is not an audit rule" in r.err, (bad, r.err)
        assert r.out == ""


def test_text_output_numbers_findings_with_their_entries(ledger_dir: Path,
                                                         tmp_path: Path) -> None:
    plan, claim = best_of_n(tmp_path)
    r = run_cli("audit")
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[0].startswith("1. A02 [error] @")
    assert lines[1] == f"   entries: {claim[:12]}, {plan[:12]}, " + lines[1].split(", ")[-1]
    assert lines[2].startswith("2. A17 [info] @1: plan kv @1")
    assert lines[-1].startswith(f"2 finding(s): 1 error, 1 info ({len(ALL)} rules over ")


def test_plan_scope(ledger_dir: Path, tmp_path: Path) -> None:
    plan, _ = best_of_n(tmp_path)
    other = make_plan(tmp_path, slug="other")
    append(tmp_path, honest_runs(other, seed=30), "other.jsonl")
    everything = audit(code=1)
    assert any(f["check"] == "A11" for f in everything["findings"])  # same suite
    mine = audit("--plan", "kv", code=1)
    assert mine["plan"] == plan
    assert all(plan in f["entries"] for f in mine["findings"])
    theirs = audit("--plan", "other", code=0)
    assert checks(theirs) == ["A11"]  # the suite they share concerns both plans
    r = run_cli("audit", "--plan", "nope-plan")
    assert r.code == 2 and "nope-plan" in r.err


def test_findings_are_reproducible(ledger_dir: Path, tmp_path: Path) -> None:
    best_of_n(tmp_path)
    append(tmp_path, [scored(None, "q8", s, 60 + k) for k, s in
                      enumerate((0.70, 0.71, 0.70, 0.85))], "explore.jsonl")
    first, second = run_cli("audit", "--json"), run_cli("audit", "--json")
    assert first.out == second.out and first.code == second.code == 1
    assert run_cli("audit").out == run_cli("audit").out
    found = first.json["findings"]
    assert found == sorted(found, key=lambda f: (f["check"], f["seq"]))
    assert set(found[0]) == {"check", "severity", "message", "seq", "entries"}


def test_report_and_claim_check_show_the_plans_findings(ledger_dir: Path,
                                                        tmp_path: Path) -> None:
    plan, claim = best_of_n(tmp_path)
    rep = run_cli("report", "kv", "--json")
    assert rep.code == 0, rep.err
    assert [f["check"] for f in rep.json["findings"]] == ["A02", "A17"]
    assert all(plan in f["entries"] for f in rep.json["findings"])
    assert "AUDIT A02 [error]" in run_cli("report", "kv").out
    check = run_cli("claim", "check", claim)
    assert "AUDIT A02 [error]: claim @" in check.out
    js = run_cli("claim", "check", claim, "--json").json
    assert [f["check"] for f in js["findings"]] == ["A02", "A17"]


def test_the_api_gives_the_same_findings(ledger_dir: Path, tmp_path: Path) -> None:
    from logbook.analysis.audit import findings_for_plan, run_audit
    from logbook.analysis.view import LedgerView
    from logbook.findings import Finding
    from logbook.ledger.service import Ledger

    plan, _ = best_of_n(tmp_path)
    with Ledger.open(ledger_dir, write=False) as ledger:
        view = LedgerView(ledger)
        mine = findings_for_plan(view, plan)
        everything = run_audit(view).findings
    assert all(isinstance(f, Finding) for f in mine)
    assert [f.as_dict() for f in mine] == audit("--plan", plan)["findings"]
    assert mine == everything


def test_a_whole_audit_is_kept_for_brief(ledger_dir: Path, tmp_path: Path) -> None:
    best_of_n(tmp_path)
    assert run_cli("audit", "--only", "A17").code == 0
    assert run_cli("brief", "--json").json["audit"] is None  # a partial audit is not kept
    assert run_cli("audit").code == 1
    b = run_cli("brief", "--json").json
    assert [f["check"] for f in b["audit"]["errors"]] == ["A02"]
    assert b["audit"]["size"] == b["ledger"]["size"]


def test_clean_ledger_report_has_no_findings(ledger_dir: Path, tmp_path: Path) -> None:
    clean_ledger(tmp_path)
    assert run_cli("report", "kv", "--json").json["findings"] == []


# -- docs/audit.md ----------------------------------------------------------------------------
def doc_steps(text: str) -> list[tuple[list[str], int, list[str]]]:
    """(argv after `$`, expected exit, expected output lines) of every console block."""
    steps: list[tuple[list[str], int, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            m = re.match(r"^\$ (.*?)(?:\s+#\s*exits (\d))?$", line)
            if m:
                steps.append((shlex.split(m.group(1)), int(m.group(2) or 0), []))
            elif line.strip():
                steps[-1][2].append(line.rstrip())
    return steps


def test_audit_doc_commands_run(ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("LOGBOOK_DIR", "LOGBOOK_KEY"):  # `demo` sets them; restore them afterwards
        monkeypatch.setenv(var, "unset")
        monkeypatch.delenv(var)
    steps = doc_steps((DOCS / "audit.md").read_text())
    assert len(steps) >= 12
    seen = set()
    for argv, code, expected in steps:
        if argv[0] == "export":
            for pair in argv[1:]:
                name, _, value = pair.partition("=")
                monkeypatch.setenv(name, value)
            continue
        assert argv[0] == "logbook", argv
        r = run_cli(*argv[1:])
        assert r.code == code, (argv, r.out, r.err)
        got = [ln.rstrip() for ln in r.out.splitlines()]
        for line in expected:
            assert line in got, (argv, line, r.out)
        seen |= {m for m in re.findall(r"\bA\d\d\b", r.out)}
    assert {"A05", "A08", "A10", "A17"} <= seen


def test_audit_doc_documents_every_rule() -> None:
    text = (DOCS / "audit.md").read_text()
    for rule, severity in SEVERITY.items():
        assert re.search(rf"^### {rule} .+ \({severity}\)$", text, flags=re.M), rule
        section = text.split(f"### {rule} ")[1].split("\n### ")[0]
        for part in ("**Fires when**", "**Why it matters.**", "**When it fires.**"):
            assert part in section, (rule, part)
    for source in ("Rosenthal", "Armitage", "Simmons", "Benjamini", "Measure Twice"):
        assert source in text


def test_rule_table_is_the_registry() -> None:
    """docs/audit.md's rule table and section headings list the registered rules: the same ids,
    in order, with the same severities and names."""
    from logbook.analysis.audit.registry import registered

    text = (DOCS / "audit.md").read_text()
    table = re.findall(r"^\| (A\d\d) \| (\w+) \| ([^|]+?) \|", text, flags=re.M)
    registry = [(r.id, r.severity, r.title) for r in registered()]
    assert table == registry
    headings = re.findall(r"^### (A\d\d) (.+) \((\w+)\)$", text, flags=re.M)
    assert [(rid, sev, name) for rid, name, sev in headings] == registry


# -- helpers the rules rest on ----------------------------------------------------------------
def test_printed_numbers_skip_identifiers() -> None:
    from logbook.analysis.audit.rules.statements import printed_numbers

    got = printed_numbers("q8 on m-7b (f16, b1234, v2.1) scores 70.5% (67.5-72.5) over 3 runs, "
                          "-1.25 points.")
    assert [(t, d) for t, _v, d in got] == [("70.5", 1), ("67.5", 1), ("72.5", 1), ("3", 0),
                                            ("-1.25", 2)]
    assert got[-1][1] == 1.25  # signs are set aside


def test_interval_p_and_two_proportion_p() -> None:
    from logbook.stats.significance import interval_p, two_proportion_p

    # an interval of +-1.96 se around 1.96 se: z = 1.96, p = 0.05
    assert interval_p(1.96, 0.0, 3.92, 0.05) == pytest.approx(0.05, rel=1e-3)
    assert interval_p(0.0, -1.0, 1.0, 0.05) == pytest.approx(1.0)
    assert interval_p(0.1, 0.1, 0.1, 0.05) == 0.0
    # pooled z-test: 12/600 vs 0/600
    z = 0.02 / math.sqrt(0.01 * 0.99 * (2 / 600))
    assert two_proportion_p(12, 600, 0, 600) == pytest.approx(math.erfc(z / math.sqrt(2)))
    assert two_proportion_p(0, 600, 0, 600) is None
    assert two_proportion_p(1, 0, 0, 10) is None


def test_spread_and_variance_ratio() -> None:
    import numpy as np
    from scipy import special

    from logbook.stats.significance import bonferroni_threshold, variance_ratio_test
    from logbook.stats.spread import (
        margin_of_mean,
        mean_sd,
        pooled_standard_errors,
        population_variance,
    )

    xs = [0.70, 0.71, 0.69, 0.74]
    m, sd = mean_sd(xs)
    assert m == pytest.approx(np.mean(xs)) and sd == pytest.approx(np.std(xs, ddof=1))
    assert mean_sd([0.5]) == (0.5, 0.0)
    assert margin_of_mean(xs, 3.0) == pytest.approx(3.0 * sd / 2.0) and margin_of_mean([], 3.0) == 0
    assert population_variance([1.0, 0.0, 1.0, 1.0]) == (pytest.approx(0.1875), 4)
    assert population_variance([]) == (0.0, 0)
    # a run whose items all agree takes the spread pooled with its neighbour's
    assert pooled_standard_errors([(0.0, 100), (0.25, 100), (0.1, 0)]) == [
        pytest.approx(math.sqrt(0.125 / 100)), pytest.approx(math.sqrt(0.125 / 100)), 0.0]
    f, p = variance_ratio_test(0.03, 4, 0.01, 8)
    assert f == pytest.approx(9.0) and p == pytest.approx(special.fdtrc(3, 7, 9.0), rel=1e-9)
    assert bonferroni_threshold(0.05, 4) == 0.0125


def test_rounds_to_the_printed_digits() -> None:
    from logbook.stats.rounding import half_unit, rounds_to

    assert rounds_to(70.5, 1, 70.54) and not rounds_to(70.5, 1, 70.56)
    assert rounds_to(1.25, 2, -1.2549)  # signs are set aside
    assert half_unit(1) == pytest.approx(0.05) and half_unit(0, 100.0) == pytest.approx(0.005)
