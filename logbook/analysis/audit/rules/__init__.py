"""The audit's rules, one module per theme; importing this package registers every rule
(`registry.registered()`).

A new rule is one function with `@rule(id, severity=..., title=..., finds=...)` in its theme's
module (or a new theme module, imported here), its row and section in docs/audit.md, and its
violation scenario in `logbook/calibration/violations.py` (for `logbook audit --selftest`).
"""

from logbook.analysis.audit.rules import (
    admissions,
    applied,
    arms,
    bands,
    checks,
    claims,
    clusters,
    comparisons,
    holdouts,
    plans,
    repeats,
    reproductions,
    retractions,
    runs,
    statements,
    timestamps,
)

__all__ = ["admissions", "applied", "arms", "bands", "checks", "claims", "clusters",
           "comparisons", "holdouts", "plans", "repeats", "reproductions", "retractions", "runs",
           "statements", "timestamps"]
