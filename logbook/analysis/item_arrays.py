"""Runs lined up item by item: each run's item array (`RunView.item_arrays`) put on one
axis of item ids, as the report, compare and the audit's item rules read them."""

from __future__ import annotations

from typing import Any

from logbook.analysis.run_view import RunView


def clusters_of(runs: list[RunView]) -> dict[str, str]:
    """Item id -> cluster, over the runs (a later run's label wins, as each run's own does)."""
    clusters: dict[str, str] = {}
    for r in runs:
        clusters.update(r.clusters)
    return clusters


def item_mean_arrays(runs: list[RunView]) -> tuple[list[str], Any, dict[str, str]]:
    """(ids, each item's mean over the runs that scored it (NaN if none did), clusters)."""
    from logbook.stats.items import mean_over_runs

    ids, means = mean_over_runs([r.item_arrays[0] for r in runs],
                                [r.item_arrays[1] for r in runs])
    return ids, means, clusters_of(runs)


def paired_arrays(a_runs: list[RunView], b_runs: list[RunView]) -> tuple[list[str], Any, Any]:
    """Items of both sets on one id axis: each item's mean per set, NaN where a set lacks it."""
    from logbook.stats.items import align

    ids_a, ma, _ = item_mean_arrays(a_runs)
    ids_b, mb, _ = item_mean_arrays(b_runs)
    return align(ids_a, ma, ids_b, mb)


def item_stack(runs: list[RunView], ids: list[str]) -> Any:
    """Runs x items scores on the axis ``ids`` (NaN where a run has no score for an item)."""
    from logbook.stats.items import stack_on

    return stack_on([r.item_arrays[0] for r in runs], [r.item_arrays[1] for r in runs], ids)
