"""Calibration of the audit: each rule's false-alarm rate on honest ledgers and its power on
its own violation, measured by simulation (docs/audit.md, Calibration).

Honest ledgers come in many shapes (`logbook.calibration.scenarios.shapes`: 2-10 runs per arm,
100-10,000 items, accuracies 0.1-0.95, true effects 0-5 points, missing items within the plan's
limit, an exploratory series of one unchanged apparatus, sometimes with its band, a calibration
plan and band on the treatment's pipeline, runs recorded through the Python API, `logbook run`
and `logbook append --from`, mixed). Each rule's violation (`logbook.calibration.violations`) is
built on shapes drawn the same way. Every ledger is a real one, in a temporary folder, written
through the public API and command line, and audited whole.

A rule is calibrated when it raises a warning or an error in at most 1% of honest ledgers and
fires (at any severity) on at least 95% of its violations. The script prints both per rule and
exits 0 either way, like the other benchmarks; tests/analysis/test_audit_calibration.py holds
the bounds.

Then the adversary (`tests/adversary.py`, scaffolding kept out of the package): strategies
that adapt to the rules, on data of persistent item difficulty, run noise and run-varying
missingness, each flagged (any warning or error) on at least 95% of its ledgers, and their
honest twins (a fix re-run, missingness varying by run, greedy reruns, a smoke test, a failure
said, one judge), on which every rule raises a warning or an error on at most 1%.
tests/analysis/test_adversary.py holds those bounds.

    python benchmarks/audit_calibration.py [--honest 250] [--violations 25] [--seed 1]
                                           [--workers CORES] [--twins 40] [--attacks 25]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from logbook.analysis.audit.registry import rule_ids
from logbook.calibration.book import Book
from logbook.calibration.scenarios import honest, shapes
from logbook.calibration.violations import VIOLATIONS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the adversary

FALSE_ALARM_MAX = 0.01
POWER_MIN = 0.95


def cli_runner(argv: list[str], env: dict[str, str]) -> int:
    """`logbook ARGV` in this process, its output discarded, with `env` set meanwhile."""
    from logbook.cli.main import run

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    sink = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # has .buffer, as `run` needs
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            return run(argv)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def calibrate(n_honest: int, n_violations: int, seed: int,
              rules: list[str] | None = None, part: int = 0, parts: int = 1) -> dict[str, Any]:
    """{rule: {"false_alarms", "honest", "fired", "violations"}} and the honest findings
    ("examples": a message of the first honest ledger each rule warned on, "first": that
    ledger's number). ``part`` of ``parts``: only the honest ledgers whose number is ``part``
    modulo ``parts`` (their shapes are those of the whole run: `calibrated` adds the parts)."""
    rules = rules or rule_ids()
    out = {r: {"false_alarms": 0, "honest": 0, "fired": 0, "violations": 0} for r in rules}
    examples: dict[str, str] = {}
    first: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="logbook-calibration-") as tmp:
        for i, shape in enumerate(shapes(n_honest, seed)):
            if i % parts != part:
                continue
            with Book(Path(tmp) / f"h{i}", runner=cli_runner) as book:
                honest(book, shape)
                found = book.audit()
            for x in out.values():
                x["honest"] += 1
            for r in {f.check for f in found if f.severity in ("warning", "error")}:
                if r in out:
                    out[r]["false_alarms"] += 1
                    if r not in examples:
                        examples[r] = next(f.message for f in found if f.check == r)
                        first[r] = i
        for r in rules:
            if r not in VIOLATIONS:
                continue
            for j, shape in enumerate(shapes(n_violations, seed + 7919, cli=False)):
                with Book(Path(tmp) / f"{r}-{j}") as book:
                    VIOLATIONS[r](book, shape)
                    fired = any(f.check == r for f in book.audit())
                out[r]["violations"] += 1
                out[r]["fired"] += fired
    return {"rules": out, "examples": examples, "first": first}


def calibrated(n_honest: int, n_violations: int, seed: int, workers: int) -> dict[str, Any]:
    """What ``calibrate(n_honest, n_violations, seed)`` returns, worked out in parts that share
    nothing (the honest ledgers by number; the rules' violations, whose shapes depend only on
    the seed) on ``workers`` processes: the same ledgers, counts and examples."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    rules = rule_ids()
    parts = 2 * workers  # smaller parts even out the ledgers' sizes between the workers
    context = multiprocessing.get_context("spawn")  # each part starts from a clean process
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        honest_parts = [pool.submit(calibrate, n_honest, 0, seed, None, k, parts)
                        for k in range(parts)]
        violation_parts = [pool.submit(calibrate, 0, n_violations, seed, rules[k::parts])
                           for k in range(parts)]
        h = [f.result() for f in honest_parts]
        v = {r: x for f in violation_parts for r, x in f.result()["rules"].items()}
    return merged(h, v, rules)


def merged(honest_parts: list[dict[str, Any]], violations: dict[str, dict[str, int]],
           rules: list[str]) -> dict[str, Any]:
    """`calibrate`'s result from its honest parts and the rules' violation counts: the honest
    counts added, and each rule's example from the lowest-numbered ledger it warned on."""
    out = {r: {"false_alarms": sum(p["rules"][r]["false_alarms"] for p in honest_parts),
               "honest": sum(p["rules"][r]["honest"] for p in honest_parts),
               "fired": violations[r]["fired"], "violations": violations[r]["violations"]}
           for r in rules}
    examples: dict[str, str] = {}
    first: dict[str, int] = {}
    for i, r, message in sorted((p["first"][r], r, p["examples"][r])
                                for p in honest_parts for r in p["first"]):
        if r not in examples:
            examples[r], first[r] = message, i
    return {"rules": out, "examples": examples, "first": first}


def adversarial(n_twins: int, n_attacks: int, seed: int,
                names: list[str] | None = None) -> dict[str, Any]:
    """{"strategies": {name: [flagged, ledgers, {rule: count}]}, "twins": {name: ledgers},
    "false_alarms": {rule: honest ledgers it warned or erred on}, "examples": {rule: message},
    "honest": ledgers}: each strategy's ledgers and each honest twin's, worlds drawn from
    ``seed`` (``names``: only those strategies and twins)."""
    from adversary import ADVERSARY, HONEST, Sim, worlds

    out: dict[str, Any] = {"strategies": {}, "twins": {}, "false_alarms": {}, "examples": {},
                           "honest": 0}
    with tempfile.TemporaryDirectory(prefix="logbook-adversary-") as tmp:
        for name, play in HONEST.items():
            if names and name not in names:
                continue
            for j, world in enumerate(worlds(n_twins, seed)):
                with Book(Path(tmp) / f"twin-{name}-{j}") as book:
                    play(Sim(book, world))
                    found = [f for f in book.audit() if f.severity in ("warning", "error")]
                out["honest"] += 1
                out["twins"][name] = out["twins"].get(name, 0) + 1
                for r in sorted({f.check for f in found}):
                    out["false_alarms"][r] = out["false_alarms"].get(r, 0) + 1
                    out["examples"].setdefault(r, f"{name}: " + next(
                        f.message for f in found if f.check == r))
        for name, play in ADVERSARY.items():
            if names and name not in names:
                continue
            row: list[Any] = [0, 0, {}]
            for j, world in enumerate(worlds(n_attacks, seed + 104_729)):
                with Book(Path(tmp) / f"attack-{name}-{j}") as book:
                    play(Sim(book, world))
                    rules = {f.check for f in book.audit() if f.severity in ("warning", "error")}
                row[0] += bool(rules)
                row[1] += 1
                for r in rules:
                    row[2][r] = row[2].get(r, 0) + 1
            out["strategies"][name] = row
    return out


def adversarial_parts(n_twins: int, n_attacks: int, seed: int, workers: int) -> dict[str, Any]:
    """`adversarial` worked out a strategy or a twin per task on ``workers`` processes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from adversary import ADVERSARY, HONEST

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        parts = [pool.submit(adversarial, n_twins, n_attacks, seed, [name])
                 for name in [*HONEST, *ADVERSARY]]
        done = [f.result() for f in parts]
    out: dict[str, Any] = {"strategies": {}, "twins": {}, "false_alarms": {}, "examples": {},
                           "honest": 0}
    for part in done:
        out["strategies"].update(part["strategies"])
        out["twins"].update(part["twins"])
        out["honest"] += part["honest"]
        for r, n in part["false_alarms"].items():
            out["false_alarms"][r] = out["false_alarms"].get(r, 0) + n
        for r, m in part["examples"].items():
            out["examples"].setdefault(r, m)
    return out


def adversary_lines(result: dict[str, Any]) -> list[str]:
    rows = ["strategy                 flagged (its ledgers)   by rule                     holds"]
    for name, (flagged, n, by) in result["strategies"].items():
        rate = flagged / n if n else 0.0
        rules = ", ".join(f"{r} {c}" for r, c in sorted(by.items()))
        rows.append(f"{name:24} {flagged:>3}/{n:<4} {rate:>6.1%}   {rules:27} "
                    f"{'yes' if rate >= POWER_MIN else 'NO'}")
    n = result["honest"]
    twins = ", ".join(f"{k} {v}" for k, v in result["twins"].items())
    rows.append(f"honest twins: {n} ledgers ({twins})")
    for r in rule_ids():
        fa = result["false_alarms"].get(r, 0)
        if fa:
            rows.append(f"  {r} warned or erred on {fa}/{n} ({fa / n:.1%}) "
                        f"{'' if fa / n <= FALSE_ALARM_MAX else 'NO'}  e.g. "
                        f"{result['examples'][r][:140]}")
    if not result["false_alarms"]:
        rows.append("  no rule warned or erred on any of them")
    return rows


def lines(result: dict[str, Any]) -> list[str]:
    rows = ["rule  false alarms (honest)   power (its violation)   holds"]
    for r, x in result["rules"].items():
        fa = x["false_alarms"] / x["honest"] if x["honest"] else 0.0
        pw = x["fired"] / x["violations"] if x["violations"] else 0.0
        ok = fa <= FALSE_ALARM_MAX and pw >= POWER_MIN
        rows.append(f"{r}   {x['false_alarms']:>3}/{x['honest']:<4} {fa:>6.1%}        "
                    f"{x['fired']:>3}/{x['violations']:<4} {pw:>6.1%}        "
                    f"{'yes' if ok else 'NO'}")
    for r, msg in result["examples"].items():
        rows.append(f"  e.g. {r} on an honest ledger: {msg[:160]}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--honest", type=int, default=250)
    ap.add_argument("--violations", type=int, default=25)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--twins", type=int, default=40)
    ap.add_argument("--attacks", type=int, default=25)
    args = ap.parse_args()
    t = time.perf_counter()
    result = (calibrated(args.honest, args.violations, args.seed, args.workers)
              if args.workers > 1 else calibrate(args.honest, args.violations, args.seed))
    print("\n".join(lines(result)))
    print(f"({args.honest} honest ledgers, {args.violations} violations per rule, seed "
          f"{args.seed}, {time.perf_counter() - t:.0f} s; bounds: false alarms <= "
          f"{FALSE_ALARM_MAX:.0%}, power >= {POWER_MIN:.0%})")
    sys.stdout.flush()
    t = time.perf_counter()
    adv = (adversarial_parts(args.twins, args.attacks, args.seed, args.workers)
           if args.workers > 1 else adversarial(args.twins, args.attacks, args.seed))
    print("\n".join(adversary_lines(adv)))
    print(f"({args.attacks} ledgers per strategy, {args.twins} per honest twin, seed "
          f"{args.seed}, {time.perf_counter() - t:.0f} s; bounds: flagged >= {POWER_MIN:.0%}, "
          f"false alarms <= {FALSE_ALARM_MAX:.0%} per rule)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
