"""Repeated runs of one apparatus: is a new run what the earlier ones predict?

Each run's score is a mean over items, so it carries its own sampling error (se, from the
spread of its items); runs of one apparatus also differ by a between-run component (batching,
non-determinism, a changed dependency) that only repeats show. A new run x with standard error
se_x, against k earlier runs with mean m, sample variance s² and mean squared standard error
q, is predicted by

    tau² = max(0, s² − q)                      (between-run variance; 0 when k < 2)
    var  = se_x² + tau² + (tau² + q) / k       (the new run, plus the error of m)

and judged by z = (x − m) / sqrt(var). Because the sampling part is known from the items, not
estimated from the few runs, one earlier run is enough to judge from, and two runs that agree
by chance do not make the next honest run a "surprise".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RunPrediction:
    mean: float      # of the earlier runs
    sd: float        # the prediction's standard deviation for the new run
    between: float   # estimated between-run sd (tau)
    z: float         # (x - mean) / sd; inf when sd is 0 and x differs
    k: int           # earlier runs


def predict_run(x: float, se_x: float, earlier: Sequence[float],
                earlier_se: Sequence[float], tau2: float | None = None) -> RunPrediction:
    """How far run score `x` (standard error `se_x`) lies from what `earlier` predict; the
    between-run variance is estimated from `earlier` (method of moments), or given (``tau2``,
    estimated from more runs than these)."""
    k = len(earlier)
    if k < 1 or len(earlier_se) != k:
        raise ValueError("earlier: need at least one earlier run, each with its se")
    for name, v in (("x", x), ("se_x", se_x), *(("earlier", e) for e in earlier),
                    *(("earlier_se", s) for s in earlier_se)):
        if not math.isfinite(v) or (name in ("se_x", "earlier_se") and v < 0):
            raise ValueError(f"{name}: must be finite (and a se non-negative), got {v!r}")
    m = math.fsum(earlier) / k
    q = math.fsum(s * s for s in earlier_se) / k
    s2 = math.fsum((e - m) * (e - m) for e in earlier) / (k - 1) if k > 1 else 0.0
    tau2 = max(0.0, s2 - q) if tau2 is None else max(0.0, tau2)
    var = se_x * se_x + tau2 + (tau2 + q) / k
    sd = math.sqrt(var)
    d = x - m
    z = d / sd if sd > 0 else (0.0 if d == 0 else math.copysign(math.inf, d))
    return RunPrediction(m, sd, math.sqrt(tau2), z, k)


def disagreement(x: float, se_x: float, y: float, se_y: float) -> float:
    """z of two runs' difference against their sampling errors alone (no third run to
    estimate a between-run component): (x − y) / sqrt(se_x² + se_y²)."""
    return predict_run(x, se_x, [y], [se_y]).z
