"""One run per task of an lm-evaluation-harness 0.4.x results object (a results file's, or
simple_evaluate's), each task's per-item lines given by its caller (logbook.ingest.lm_eval).

A group (``group_subtasks``) is one run whose items are its subtasks' items (ids
``subtask/doc_id``, the subtask in the ``component`` column). Per-item scores come from the
samples (``--log_samples``), keyed by ``doc_id``; the primary metric is the first of the task's
``metric_list`` under its first filter, named ``metric`` (filter ``none``) or
``metric,filter``; the other per-item numeric metrics go to ``extra``. A run whose per-item mean
is not the figure lm-eval reports (a ``mean`` metric) is refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logbook.format.usage import given_to_one
from logbook.ingest._common import (
    MAX_SAFE_INT,
    as_dict,
    as_list,
    build_outcomes,
    fail,
    float_of,
    item_id,
    number,
    prune,
    rfc3339,
    shown,
    whole,
)
from logbook.ingest.lm_eval_apparatus import ITEMS, apparatus, item_triples, suite_identity
from logbook.ingest.lm_eval_apparatus import sub as table_entry
from logbook.ingest.traces import lm_eval_trace

Lines = list[tuple[int, dict[str, Any]]]


def runs_of(doc: dict[str, Any], path: Path | str,
            samples: Callable[[str], tuple[Path | str, Lines]], source: dict[str, Any],
            metric: str | None = None) -> list[dict[str, Any]]:
    """One run per evaluated task of an lm-eval results object that passed ``check_doc`` (a
    results file's, or simple_evaluate's), each task's per-item lines from ``samples(task)``
    (where they are, for messages, and the numbered lines), each run given ``source``."""
    results, configs = doc["results"], doc["configs"]
    listed = doc.get("group_subtasks")
    groups: dict[str, Any] = listed if isinstance(listed, dict) else {}
    parents = _parents(groups)
    runs = []
    for task in configs:
        if task in groups or task not in results or not isinstance(configs[task], dict):
            continue  # a group: its subtasks carry the items
        if "/" in task or "\x00" in task:
            raise fail(path, f"field configs names task {shown(task)}, which cannot be part of "
                             "a samples file name")
        runs.append(_task_run(doc, path, task, samples(task), parents, metric))
    if not runs:
        raise fail(path, "field results names no task with a config")
    from logbook.ingest.lm_eval_groups import group_runs

    runs = group_runs(Path(path), doc, groups, runs)
    for run in runs:
        run.pop(ITEMS, None)
        check_headline(path, run)
        run["source"] = {**source, "part": run["task"]}
    said = doc.get("total_evaluation_time_seconds")  # lm-eval writes it as text
    wall = None if isinstance(said, bool) else float_of(said)
    if wall is not None and wall >= 0:  # the evaluation's, so its one run's (format.usage)
        given_to_one(runs, {"wall_seconds": wall})
    return runs


def check_headline(path: Path | str, run: dict[str, Any]) -> None:
    """A mean metric's per-item mean must be lm-eval's own figure (within 1e-9)."""
    reported = run.get("reported") or {}
    value = reported.get("value")
    if reported.get("aggregation") != "mean" or value is None:
        return
    scores = [s for s in run["outcomes"]["score"] if s is not None]
    if not scores:
        return
    mine = math.fsum(scores) / len(scores)
    if abs(mine - value) > 1e-9:
        key = f"{reported.get('metric')},{reported.get('filter')}"
        raise fail(path, f"field results.{run['task']}.{key} is {value!r}, but the mean of its "
                         f"{len(scores)} per-item scores is {mine!r}: an edited file or a "
                         "misread one, so it is not recorded")


def _parents(group_subtasks: dict[str, Any]) -> dict[str, str]:
    parents: dict[str, str] = {}
    for group, subtasks in group_subtasks.items():
        for sub in as_list(subtasks):
            if isinstance(sub, str):
                parents[sub] = group
    return parents


def _task_run(doc: dict[str, Any], path: Path | str, task: str,
              samples: tuple[Path | str, Lines], parents: dict[str, str],
              wanted: str | None) -> dict[str, Any]:
    config: dict[str, Any] = doc["configs"][task]
    reported = doc["results"][task]
    if not isinstance(reported, dict):
        raise fail(path, f"field results.{task} is not an object")
    samples_path, lines = samples
    metric, filt = _primary(config, reported, lines, wanted, path, task)
    by_filter: dict[str, dict[str, dict[str, Any]]] = {}
    for lineno, line in lines:
        did = item_id(line.get("doc_id"))
        if did is None:
            raise fail(samples_path, f"line {lineno}: field doc_id is missing or not an id")
        name = line.get("filter", "none")
        if not isinstance(name, str):
            raise fail(samples_path, f"line {lineno}: field filter is {shown(name)}, not a string")
        kept = by_filter.setdefault(name, {})
        if did in kept:
            raise fail(samples_path, f"line {lineno}: doc_id {did} appears twice")
        kept[did] = line
    primary = by_filter.get(filt, {})
    if not primary:
        raise fail(samples_path, f"no line has filter {filt!r} (the filter of {metric})")
    if not any(metric in line for line in primary.values()):
        raise fail(samples_path, f"no line has a value for metric {metric!r}")
    expected = _expected_count(doc, task, reported)
    if expected is not None and expected != len(primary):
        raise fail(samples_path, f"has {len(primary)} documents for filter {filt!r} but the "
                                 f"results file says n-samples effective = {expected}")
    ids = list(primary)
    rows: list[tuple[str, float | None, str | None, int | None, str | None]] = []
    for did in ids:
        value = primary[did].get(metric)
        score = number(value)
        error = None if score is not None else (
            f"no {metric} value logged" if value is None else f"{metric} is not a number")
        rows.append((did, score, error, None, None))
    extra = _extra(by_filter, ids, metric, filt, config)
    triples = item_triples(primary)
    run: dict[str, Any] = prune({
        "status": "completed",
        "task": task,
        "group": _root(task, parents),
        "apparatus": apparatus(doc, task, config, metric, suite_identity(ids, triples)),
        "outcomes": build_outcomes(metric_name(metric, filt), rows, extra),
        "reported": {**_reported(reported, metric, filt),
                     "aggregation": _aggregation(config, metric)},
        # "date" is when evaluation began; no end time is logged (total_evaluation_time_seconds
        # also counts model loading, before "date"), so "finished" stays absent.
        "started": rfc3339(doc.get("date")),
        "note": _note(doc, task),
    })
    run[ITEMS] = triples  # for a group's identity; runs_of takes it out
    run["traces"] = [lm_eval_trace(did, primary[did], metric) for did in ids]
    return run


def metric_name(metric: str, filt: str) -> str:
    """lm-eval's ``acc,none`` is ``acc``; under another filter, ``exact_match,strict-match``."""
    return metric if filt == "none" else f"{metric},{filt}"


def _aggregation(config: dict[str, Any], metric: str) -> str | None:
    for m in as_list(config.get("metric_list")):
        if isinstance(m, dict) and m.get("metric") == metric:
            agg = m.get("aggregation")
            return agg if isinstance(agg, str) else None
    return None


def _primary(config: dict[str, Any], reported: dict[str, Any], lines: list[Any],
             wanted: str | None, path: Path | str, task: str) -> tuple[str, str]:
    """(metric, filter): the requested one, else the first of metric_list under filter 1."""
    filters = [f.get("name") for f in as_list(config.get("filter_list")) if isinstance(f, dict)]
    filt = filters[0] if filters and isinstance(filters[0], str) and filters[0] else "none"
    if wanted:
        metric, _, chosen = wanted.partition(",")
        return metric, chosen or filt
    listed = [m.get("metric") for m in as_list(config.get("metric_list")) if isinstance(m, dict)]
    names: list[str] = [n for n in listed if isinstance(n, str) and n]
    if not names:  # older configs: the results keys are "metric,filter"
        names = [k.split(",")[0] for k in reported
                 if "," in k and "_stderr," not in k and not k.startswith(",")]
    if not names:
        raise fail(path, f"field configs.{task}.metric_list is missing or empty")
    if f"{names[0]},{filt}" not in reported:
        keys = [k for k in reported if k.startswith(f"{names[0]},")]
        filt = keys[0].split(",", 1)[1] if keys else filt
    # a corpus-level metric (bleu, ...) has no per-item score: use the first that does
    per_item = [n for n in names if any(number(line.get(n)) is not None for _, line in lines)]
    return (per_item[0] if per_item and names[0] not in per_item else names[0]), filt


def _expected_count(doc: dict[str, Any], task: str, reported: dict[str, Any]) -> int | None:
    counts = as_dict(table_entry(doc, "n-samples", task))
    effective = whole(counts.get("effective"), 0, MAX_SAFE_INT)
    if effective is not None:
        return effective
    return whole(reported.get("sample_len"), 0, MAX_SAFE_INT)


def _extra(by_filter: dict[str, dict[str, dict[str, Any]]], ids: list[str], metric: str,
           filt: str, config: dict[str, Any]) -> dict[str, list[float | None]]:
    listed = [m.get("metric") for m in as_list(config.get("metric_list")) if isinstance(m, dict)]
    extra: dict[str, list[float | None]] = {}
    for name_filter, rows in by_filter.items():
        names = [n for n in listed if isinstance(n, str)]
        for line in rows.values():  # metrics a config does not list still show up per line
            names += [n for n in as_list(line.get("metrics"))
                      if isinstance(n, str) and n not in names]
            break
        for name in names:
            if name == metric and name_filter == filt:
                continue
            column = [number(rows[i].get(name)) if i in rows else None for i in ids]
            if any(v is not None for v in column):
                extra[name if name_filter == filt else f"{name},{name_filter}"] = column
    return extra


def _reported(results: dict[str, Any], metric: str, filt: str) -> dict[str, Any]:
    value = results.get(f"{metric},{filt}")
    stderr = results.get(f"{metric}_stderr,{filt}")
    return {"metric": metric, "filter": filt, "value": number(value),
            "stderr": number(stderr), "n": results.get("sample_len"), "results": results}


def _root(task: str, parents: dict[str, str]) -> str | None:
    group, seen = parents.get(task), {task}
    while group is not None and group in parents and group not in seen:
        seen.add(group)
        group = parents[group]
    return group


def _note(doc: dict[str, Any], task: str) -> str | None:
    counts = table_entry(doc, "n-samples", task)
    if isinstance(counts, dict) and counts.get("effective") != counts.get("original"):
        return (f"limit: {counts.get('effective')} of {counts.get('original')} documents "
                "evaluated")
    return None
