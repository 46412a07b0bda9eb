"""Corrections for running many comparisons against the same data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._results import MultipleTestResult
from ._validate import as_float_array, check_open_unit

PValues = Sequence[float] | NDArray[np.floating[Any]]


def _pvalues(pvalues: PValues) -> NDArray[np.float64]:
    p = as_float_array("pvalues", pvalues)
    if ((p < 0) | (p > 1)).any():
        raise ValueError("pvalues: every p-value must lie in [0, 1]")
    return p


def _result(adj: NDArray[np.float64], alpha: float, method: str) -> MultipleTestResult:
    return MultipleTestResult(
        tuple(float(x) for x in adj), tuple(bool(x) for x in adj <= alpha), alpha, method
    )


def bonferroni(pvalues: PValues, alpha: float = 0.05) -> MultipleTestResult:
    """Bonferroni (Dunn 1961): adjusted p = min(1, m·p); controls the family-wise error rate."""
    p = _pvalues(pvalues)
    alpha = check_open_unit("alpha", alpha)
    return _result(np.minimum(1.0, p * p.size), alpha, "bonferroni")


def benjamini_hochberg(pvalues: PValues, alpha: float = 0.05) -> MultipleTestResult:
    """Benjamini & Hochberg (1995) step-up: controls the false discovery rate.

    Adjusted p for the i-th smallest of m is min over j >= i of m·p_(j)/j, capped at 1; reject
    where adjusted p <= alpha (identical to the step-up rule p_(i) <= i·alpha/m).
    """
    p = _pvalues(pvalues)
    alpha = check_open_unit("alpha", alpha)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    adj = np.empty(m)
    # max with p: p·m/m can round a hair below p, and an adjusted p below the raw one is absurd.
    adj[order] = np.minimum(1.0, np.maximum(stepped, p[order]))
    return _result(adj, alpha, "benjamini-hochberg")
