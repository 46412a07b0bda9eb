"""`logbook audit --selftest`: each rule fires on its violation and stays quiet on honest work.

For every rule, its violation scenario (`violations`) and the honest ledger it breaks
(`scenarios.honest`, the twin) are written into temporary ledgers through the public API and
audited; a rule holds when it finds its violation and finds nothing in the twin. An auditor can
see the rules work before trusting "no findings". Nothing touches the user's ledger.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from logbook.calibration.book import Book
from logbook.calibration.scenarios import Shape, honest

# the honest twin holds an honest reproduction by a second lab, stamps its checkpoints,
# checks its suite and scorer and names its engine's load logs (quiet for A30-A38 and the rest)
SHAPE = Shape(n=200, k=3, p=0.7, effect=0.0, explore=5, band=True, seed=14, reproduce=True,
              stamp=True, checks=True, applied="honest")


def run_selftest(rule_ids: list[str], shape: Shape = SHAPE) -> dict[str, Any]:
    from logbook.analysis.audit.registry import registered
    from logbook.calibration.violations import VIOLATIONS

    titles = {r.id: r.title for r in registered()}
    rows = []
    with tempfile.TemporaryDirectory(prefix="logbook-selftest-") as tmp:
        with Book(Path(tmp) / "honest") as book:
            honest(book, shape)
            twin = book.audit()
        for rid in rule_ids:
            if rid not in VIOLATIONS:  # a rule nobody has shown to work does not hold
                rows.append({"id": rid, "title": titles[rid], "fired": False,
                             "quiet": not any(f.check == rid for f in twin), "ok": False,
                             "violation": None, "honest": sorted({f.check for f in twin})})
                continue
            with Book(Path(tmp) / rid) as book:
                VIOLATIONS[rid](book, shape)
                found = book.audit()
            fired = any(f.check == rid for f in found)
            quiet = not any(f.check == rid for f in twin)
            rows.append({"id": rid, "title": titles[rid], "fired": fired, "quiet": quiet,
                         "ok": fired and quiet,
                         "violation": sorted({f.check for f in found}),
                         "honest": sorted({f.check for f in twin})})
    return {"ok": all(r["ok"] for r in rows), "rules": rows}


def selftest_lines(result: dict[str, Any]) -> list[str]:
    out = ["each rule against its violation and an honest twin, in temporary ledgers:"]
    width = max((len(r["title"]) for r in result["rules"]), default=0)
    for r in result["rules"]:
        if r["violation"] is None:
            out.append(f"{r['id']} {r['title']:<{width}}  has no violation scenario (add one "
                       "to logbook/calibration/violations.py)  FAILED")
            continue
        out.append(f"{r['id']} {r['title']:<{width}}  fires on its violation: "
                   f"{'yes' if r['fired'] else 'NO '}  quiet on the honest twin: "
                   f"{'yes' if r['quiet'] else 'NO '}  {'ok' if r['ok'] else 'FAILED'}")
    held = sum(r["ok"] for r in result["rules"])
    out.append(f"{held} of {len(result['rules'])} rules hold" + ("" if result["ok"] else
               "; the audit cannot be trusted to find what the failed rules look for"))
    return out
