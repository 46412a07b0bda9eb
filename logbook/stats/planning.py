"""Inputs to the power formulas (``power.py``) as the logbook's planning checks use them."""

from __future__ import annotations

BASELINE_FLOOR, BASELINE_CEILING = 0.01, 0.99


def working_baseline(p: float) -> float:
    """A baseline proportion held inside [0.01, 0.99]: at 0 or 1 the normal approximation
    behind ``min_detectable_effect`` and ``sample_size`` has no variance to work with."""
    return min(max(p, BASELINE_FLOOR), BASELINE_CEILING)
