"""`logbook band SELECTOR`: the run-to-run band of a pipeline, from every run that matches."""

from __future__ import annotations

import math
from typing import Any

from logbook.analysis.selectors import select
from logbook.analysis.view import LedgerView, RunView, is_identity
from logbook.errors import InputError
from logbook.ledger.entry import Entry

MIN_RUNS = 5
WARN_RUNS = 8  # below this a band's sd is itself uncertain by more than a quarter


def band_body(view: LedgerView, selector: str, z: float = 2.0) -> dict[str, Any]:
    from logbook import stats

    if not (math.isfinite(z) and z > 0):
        raise InputError(f"--z {z}: must be a positive number (2 gives ± 2 sd)")
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
            # the stamp: a band describes one evaluator configuration (docs/format.md)
            "evaluator_config_hash": first.get("evaluator.config_hash"),
            "k": vb.k, "mean": vb.mean, "sd": vb.sd, "band": vb.band, "z": vb.z,
            "runs": [r.digest for r in runs]}



def band_summary(view: LedgerView, body: dict[str, Any]) -> list[str]:
    """What `logbook band` prints about the band it appended, on the metric's scale."""
    from logbook import stats
    from logbook.analysis import display

    runs = [view.runs_by_digest[d] for d in body["runs"] if d in view.runs_by_digest]
    kinds = {(view.plans[r.plan].body.get("metric") or {}).get("kind") for r in runs
             if r.plan in view.plans}
    kind = kinds.pop() if len(kinds) == 1 else None
    scale, unit = display.scale_of(kind), display.unit_of(kind)
    vb = stats.variance_band([r.score for r in runs if r.score is not None], z=body["z"])
    lines = [f"k={vb.k} runs, mean {vb.mean * scale:.2f}, sd {vb.sd * scale:.2f} (itself "
             f"uncertain by about ±{vb.sd_rel_uncertainty:.0%}), band ±{vb.band * scale:.2f}"
             f"{unit} ({vb.z:g} sd), range {vb.observed_range * scale:.2f}{unit}",
             f"stamped with evaluator config hash "
             f"{body.get('evaluator_config_hash') or '(none recorded)'}"]
    if vb.k < WARN_RUNS:
        lines.append(f"warning: a band from {vb.k} runs is rough (its sd is uncertain by "
                     f"±{vb.sd_rel_uncertainty:.0%}); measure at least {WARN_RUNS}")
    return lines


def latest_bands(view: LedgerView) -> dict[tuple[Any, ...], Entry]:
    """The latest standing band of each apparatus (LedgerView.apparatus_key of its first run;
    the key includes the evaluator config hash the band is stamped with)."""
    bands: dict[tuple[Any, ...], Entry] = {}
    for b in view.entries_of("band"):
        runs = [view.runs_by_digest.get(d) for d in b.body.get("runs") or []]
        standing = [r for r in runs if r is not None and r.usable]
        # a band stands while it stands and at least two of its runs still count: a band
        # whose calibration runs were retracted describes nothing
        if len(standing) >= 2 and runs[0] is not None and not view.retracted_by(b.digest):
            bands[view.apparatus_key(runs[0])] = b
    return bands


def band_of(view: LedgerView, runs: list[RunView],
            bands: dict[tuple[Any, ...], Entry]) -> dict[str, Any] | None:
    """The band measured on the apparatus these runs share, and the runs outside it; None
    when they do not share one apparatus or no band was measured on it."""
    keys = {view.apparatus_key(r) for r in runs}
    band = bands.get(keys.pop()) if len(keys) == 1 else None
    if band is None:
        return None
    b = band.body
    outside = [r.seq for r in runs
               if r.score is not None and abs(r.score - b["mean"]) > b["band"] + 1e-9]
    return {"seq": band.seq, "digest": band.digest, "mean": b["mean"], "band": b["band"],
            "sd": b["sd"], "k": b["k"], "evaluator_config_hash": b.get("evaluator_config_hash"),
            "outside": outside}
