"""`logbook band SELECTOR`: the run-to-run band of a pipeline, from every run that matches."""

from __future__ import annotations

from typing import Any

from logbook.analysis.selectors import select
from logbook.analysis.view import LedgerView, is_identity
from logbook.errors import InputError

MIN_RUNS = 5


def band_body(view: LedgerView, selector: str, z: float = 2.0) -> dict[str, Any]:
    from logbook import stats

    runs = [r for r in select(view, selector) if r.usable and r.score is not None]
    if len(runs) < MIN_RUNS:
        raise InputError(f"selector {selector!r} matches {len(runs)} completed runs; a band "
                         f"needs at least {MIN_RUNS} of identical apparatus apart from seeds")
    first = {k: v for k, v in runs[0].apparatus.items() if not is_identity(k)}
    for r in runs[1:]:
        other = {k: v for k, v in r.apparatus.items() if not is_identity(k)}
        if other != first:
            diff = sorted(k for k in set(first) | set(other) if first.get(k) != other.get(k))
            raise InputError(f"selector {selector!r}: runs differ in apparatus beyond seeds "
                             f"({', '.join(diff[:5])}); narrow the selector")
    vb = stats.variance_band([r.score for r in runs], z=z)  # type: ignore[misc]
    return {"selector": selector,
            "evaluator_config_hash": first.get("evaluator.config_hash"),
            "k": vb.k, "mean": vb.mean, "sd": vb.sd, "band": vb.band, "z": vb.z,
            "runs": [r.digest for r in runs]}

