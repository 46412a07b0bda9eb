"""lm-eval groups: a group and its subtasks become one run (docs/recording.md).

Its items are every subtask's items, with ids ``subtask/doc_id`` (doc ids repeat across tasks
and are never paired across them) and the subtask in the ``component`` column. The run's figure
is the mean over all its items, which is lm-eval's size-weighted group aggregate
(``weight_by_size: true``, its default); the group's own reported figure is kept in
``reported`` and checked against it. Its suite identity is the subtasks' one rule applied to
all its items (lm_eval_apparatus): over ``[subtask/doc_id, doc_hash, target_hash]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logbook.ingest._common import as_dict, as_list, digest, fail, prune
from logbook.ingest.lm_eval_apparatus import ITEMS, suite_identity


def _leaves(group: str, groups: dict[str, Any], seen: frozenset[str]) -> list[str]:
    out: list[str] = []
    for sub in as_list(groups.get(group)):
        if not isinstance(sub, str) or sub in seen:
            continue
        out += _leaves(sub, groups, seen | {sub}) if sub in groups else [sub]
    return out


def group_runs(path: Path, doc: dict[str, Any], groups: dict[str, Any],
               runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The task runs with each top-level group's subtasks merged into one run."""
    if not groups:
        return runs
    inner = {s for subs in groups.values() for s in as_list(subs) if isinstance(s, str)}
    by_task = {r["task"]: r for r in runs}
    merged: list[dict[str, Any]] = []
    taken: set[str] = set()
    for group in groups:
        if group in inner:
            continue
        leaves = [t for t in _leaves(group, groups, frozenset({group})) if t in by_task]
        if leaves:
            merged.append(_merge(path, doc, group, [by_task[t] for t in leaves]))
            taken.update(leaves)
    return merged + [r for r in runs if r["task"] not in taken]


def _merge(path: Path, doc: dict[str, Any], group: str,
           parts: list[dict[str, Any]]) -> dict[str, Any]:
    metrics = {p["task"]: p["outcomes"]["metric"] for p in parts}
    if len(set(metrics.values())) > 1:
        listed = ", ".join(f"{t}: {m}" for t, m in metrics.items())
        raise fail(path, f"group {group}'s subtasks score different metrics ({listed}), so "
                         "they cannot be one run")
    metric = parts[0]["outcomes"]["metric"]
    ids: list[Any] = []
    scores: list[Any] = []
    errors: list[Any] = []
    components: list[Any] = []
    extra_names = list(dict.fromkeys(k for p in parts for k in p["outcomes"].get("extra") or {}))
    extra: dict[str, list[float | None]] = {k: [] for k in extra_names}
    for p in parts:
        o = p["outcomes"]
        n = len(o["id"])
        ids += [f"{p['task']}/{i}" for i in o["id"]]
        scores += o["score"]
        errors += o.get("error") or [None] * n
        components += [p["task"]] * n
        for k in extra_names:
            extra[k] += (o.get("extra") or {}).get(k) or [None] * n
    outcomes: dict[str, Any] = {"metric": metric, "id": ids, "score": scores,
                                "component": components}
    if any(e is not None for e in errors):
        outcomes["error"] = errors
    traces = [{**t, "id": f"{p['task']}/{t['id']}"} for p in parts for t in p.get("traces") or []]
    if extra:
        outcomes["extra"] = extra
    apparatus = dict(parts[0]["apparatus"])
    # the suite: the same identity over the group's items (ids subtask/doc_id)
    triples = [None if p.get(ITEMS) is None else
               [(f"{p['task']}/{i}", d, t) for i, d, t in p[ITEMS]] for p in parts]
    apparatus["dataset_hash"] = suite_identity(
        ids, None if None in triples else [t for part in triples if part for t in part])
    prompts = {p["task"]: p["apparatus"].get("prompt_hash") for p in parts}
    apparatus["prompt_hash"] = digest(prompts) if all(prompts.values()) else None
    apparatus["prompt_template_hash"] = digest(
        {p["task"]: p["apparatus"].get("prompt_template_hash") for p in parts})
    evaluator = dict(apparatus.get("evaluator") or {})
    evaluator["config_hash"] = digest(
        {p["task"]: (p["apparatus"].get("evaluator") or {}).get("config_hash") for p in parts})
    apparatus["evaluator"] = evaluator
    shots = {(p["apparatus"].get("harness_config") or {}).get("num_fewshot") for p in parts}
    apparatus["harness_config"] = {**as_dict(apparatus.get("harness_config")),
                                   "num_fewshot": shots.pop() if len(shots) == 1 else None,
                                   "components": [p["task"] for p in parts]}
    first = parts[0]["reported"]
    figures = as_dict(as_dict(doc.get("groups")).get(group)) or as_dict(
        as_dict(doc.get("results")).get(group))
    key = f"{first.get('metric')},{first.get('filter')}"
    value = figures.get(key)
    reported = {"metric": first.get("metric"), "filter": first.get("filter"),
                "value": value if isinstance(value, int | float) else None,
                "stderr": figures.get(f"{first.get('metric')}_stderr,{first.get('filter')}"),
                "n": figures.get("sample_len"), "results": figures,
                "aggregation": "mean" if first.get("aggregation") == "mean" else None,
                "components": {p["task"]: p["reported"].get("value") for p in parts}}
    notes = [p["note"] for p in parts if p.get("note")]
    return prune({
        "status": "completed", "task": group, "apparatus": apparatus, "outcomes": outcomes,
        "reported": reported, "started": parts[0].get("started"),
        "note": "; ".join(f"{p['task']}: {p['note']}" for p in parts if p.get("note"))
        if notes else None,
        "traces": traces or None,
    })
