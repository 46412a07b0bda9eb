"""lm-evaluation-harness 0.4.x: ``results_<ts>.json`` + ``samples_<task>_<ts>.jsonl`` -> runs.

One run per task; a group (``group_subtasks``) is one run whose items are its subtasks' items
(ids ``subtask/doc_id``, the subtask in the ``component`` column). Per-item scores come from
the samples file (``--log_samples``), keyed by ``doc_id``; the primary metric is the first of
the task's ``metric_list`` under its first filter, named ``metric`` (filter ``none``) or
``metric,filter``; the other per-item numeric metrics go to ``extra``. Each run records its
``source`` (the results file, its SHA-256 and timestamp); a run whose per-item mean is not the
figure lm-eval reports (a ``mean`` metric) is refused.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

from logbook.capture.redact import redact_value
from logbook.ingest._common import (
    MAX_SAFE_INT,
    as_dict,
    as_list,
    build_outcomes,
    check_depth,
    digest,
    fail,
    float_of,
    int_of,
    item_id,
    loads,
    number,
    parse_kv_string,
    prune,
    read_bytes,
    rfc3339,
    sha256_tag,
    shown,
    text_of,
    whole,
)
from logbook.ingest.adapter import Adapter

HARNESS = "lm-evaluation-harness"
_RESULTS = re.compile(r"results_(?P<ts>.+)\.json")
# Task-config fields that shape the prompt; hashed as prompt_template_hash.
_PROMPT_FIELDS = ("description", "doc_to_text", "doc_to_choice", "doc_to_target", "gen_prefix",
                  "target_delimiter", "fewshot_delimiter", "fewshot_config", "num_fewshot")


class LmEval(Adapter):
    """``--from lm-eval``: ``metric`` is the primary metric (``acc`` or ``acc,filter``) to read
    instead of the task's first."""

    name = "lm-eval"
    globs = ("**/results_*.json",)

    def read_runs(self, path: Path, *, metric: str | None = None,
                  cut_off_ok: bool = False) -> list[dict[str, Any]]:
        """Runs from one results file, or from every ``results_*.json`` in a directory."""
        if path.is_dir():
            files = sorted(path.glob("results_*.json")) or sorted(path.glob("*/results_*.json"))
            if not files:
                raise fail(path, "no results_*.json file in this directory or its "
                                 "subdirectories")
        else:
            files = [path]
        runs: list[dict[str, Any]] = []
        for results_path in files:
            runs.extend(read_results(results_path, metric=metric))
        return runs


ADAPTER = LmEval()


def read_results(path: Path, *, metric: str | None = None) -> list[dict[str, Any]]:
    """One run per evaluated task of one lm-eval results file."""
    data = read_bytes(path)
    doc = loads(data, str(path))
    if not isinstance(doc, dict):
        raise fail(path, "expected a JSON object (an lm-eval results file)")
    check_depth(doc, str(path))  # its values are hashed and copied into the runs
    version = doc.get("lm_eval_version")
    if not isinstance(version, str) or not version.startswith("0.4."):
        found = "is missing" if version is None else f"is {version!r}"
        raise fail(path, f"field lm_eval_version {found}; only lm-evaluation-harness 0.4.x "
                         "results are supported")
    results, configs = doc.get("results"), doc.get("configs")
    if not isinstance(results, dict) or not isinstance(configs, dict):
        raise fail(path, "field results or configs is missing or not an object")
    match = _RESULTS.fullmatch(path.name)
    if match is None:
        raise fail(path, "file name is not results_<timestamp>.json, so its samples files "
                         "cannot be found")
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
        samples = path.with_name(f"samples_{task}_{match['ts']}.jsonl")
        runs.append(_task_run(doc, path, task, samples, parents, metric))
    if not runs:
        raise fail(path, "field results names no task with a config")
    source = {"harness": HARNESS, "file": path.name,
              "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
              "ids": {"results": path.name, "date": str(doc.get("date"))}}
    from logbook.ingest.lm_eval_groups import group_runs

    runs = group_runs(path, doc, groups, runs)
    for run in runs:
        check_headline(path, run)
        run["source"] = {**source, "part": run["task"]}
    return runs


def check_headline(path: Path, run: dict[str, Any]) -> None:
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


def _sub(doc: dict[str, Any], key: str, task: str) -> Any:
    """``doc[key][task]`` when both levels are objects, else None."""
    table = doc.get(key)
    return table.get(task) if isinstance(table, dict) else None


def _task_run(doc: dict[str, Any], path: Path, task: str, samples_path: Path,
              parents: dict[str, str], wanted: str | None) -> dict[str, Any]:
    config: dict[str, Any] = doc["configs"][task]
    reported = doc["results"][task]
    if not isinstance(reported, dict):
        raise fail(path, f"field results.{task} is not an object")
    lines = _read_samples(samples_path)
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
    return prune({
        "status": "completed",
        "task": task,
        "group": _root(task, parents),
        "apparatus": _apparatus(doc, task, config, metric),
        "outcomes": build_outcomes(metric_name(metric, filt), rows, extra),
        "reported": {**_reported(reported, metric, filt),
                     "aggregation": _aggregation(config, metric)},
        # "date" is when evaluation began; no end time is logged (total_evaluation_time_seconds
        # also counts model loading, before "date"), so "finished" stays absent.
        "started": rfc3339(doc.get("date")),
        "note": _note(doc, task),
    })


def metric_name(metric: str, filt: str) -> str:
    """lm-eval's ``acc,none`` is ``acc``; under another filter, ``exact_match,strict-match``."""
    return metric if filt == "none" else f"{metric},{filt}"


def _aggregation(config: dict[str, Any], metric: str) -> str | None:
    for m in as_list(config.get("metric_list")):
        if isinstance(m, dict) and m.get("metric") == metric:
            agg = m.get("aggregation")
            return agg if isinstance(agg, str) else None
    return None


def _read_samples(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise fail(path, "samples file not found (run lm_eval with --log_samples; per-item "
                         "scores are needed)")
    text = read_bytes(path)
    out = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        line = loads(raw, f"{path}: line {lineno}")
        if not isinstance(line, dict):
            raise fail(path, f"line {lineno}: expected a JSON object")
        out.append((lineno, line))
    return out


def _primary(config: dict[str, Any], reported: dict[str, Any], lines: list[Any],
             wanted: str | None, path: Path, task: str) -> tuple[str, str]:
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
    effective = whole(as_dict(_sub(doc, "n-samples", task)).get("effective"), 0, MAX_SAFE_INT)
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
    counts = _sub(doc, "n-samples", task)
    if isinstance(counts, dict) and counts.get("effective") != counts.get("original"):
        return (f"limit: {counts.get('effective')} of {counts.get('original')} documents "
                "evaluated")
    return None


def _env(info: Any, label: str) -> str | None:
    """One field of torch's collect_env text (``pretty_env_info``)."""
    if not isinstance(info, str):
        return None
    match = re.search(rf"^{re.escape(label)}:[ \t]*(.*)$", info, re.MULTILINE)
    value = match.group(1).strip() if match else ""
    if match and not value:  # several GPUs: one "GPU n: name" line each below the label
        below = info[match.end():].lstrip("\n").splitlines()
        value = "; ".join(line.strip() for line in below[:16] if line.startswith("GPU "))
    return value if value and value not in ("N/A", "Could not collect", "None") else None


def _apparatus(doc: dict[str, Any], task: str, config: dict[str, Any],
               metric: str) -> dict[str, Any]:
    run_config = as_dict(doc.get("config"))
    model_args = run_config.get("model_args")
    if isinstance(model_args, str):
        model_args = parse_kv_string(model_args)
    model_args = redact_value(model_args) if isinstance(model_args, dict) else {}
    gen = dict(as_dict(config.get("generation_kwargs")))
    cli_gen = run_config.get("gen_kwargs")
    gen.update(parse_kv_string(cli_gen) if isinstance(cli_gen, str) else as_dict(cli_gen))
    env = doc.get("pretty_env_info")
    python = _env(env, "Python version")
    task_hash = _sub(doc, "task_hashes", task)
    task_config = {k: v for k, v in config.items() if k != "metadata"}
    prompt = {k: config.get(k) for k in _PROMPT_FIELDS} | {
        k: doc.get(k) for k in ("system_instruction_sha", "chat_template_sha",
                                "fewshot_as_multiturn")}
    transformers = doc.get("transformers_version")
    return {
        "model": doc.get("model_name") or model_args.get("pretrained") or model_args.get("model")
        or run_config.get("model"),
        "model_digest": run_config.get("model_sha"),
        "engine": run_config.get("model"),
        "weights_precision": run_config.get("model_dtype") or model_args.get("dtype"),
        "kv_cache_precision": model_args.get("kv_cache_dtype"),
        "placement": run_config.get("device"),
        "hardware": {"cpu": _env(env, "Model name"), "gpu": _env(env, "GPU models and "
                     "configuration"), "nvidia_driver": _env(env, "Nvidia driver version")},
        "decoding": _decoding(gen, run_config),
        "dataset_hash": sha256_tag(task_hash),
        "prompt_template_hash": digest(prompt),
        "harness": {"name": HARNESS, "version": doc.get("lm_eval_version"),
                    "commit": doc.get("git_hash")},
        "evaluator": {"name": metric, "version": text_of(_sub(doc, "versions", task)),
                      "config_hash": digest(task_config)},
        "python": python.split()[0] if python else None,
        "harness_config": redact_value({
            "model_source": doc.get("model_source"),
            "model_args": model_args,
            "model_revision": run_config.get("model_revision"),
            "batch_size": run_config.get("batch_size"),
            "batch_sizes": run_config.get("batch_sizes") or None,
            "limit": run_config.get("limit"),
            "bootstrap_iters": run_config.get("bootstrap_iters"),
            "use_cache": run_config.get("use_cache"),
            "seeds": {k: run_config.get(k) for k in ("random_seed", "numpy_seed", "torch_seed",
                                                     "fewshot_seed")},
            "n_shot": _sub(doc, "n-shot", task),
            "n_samples": _sub(doc, "n-samples", task),
            "output_type": config.get("output_type"),
            "repeats": config.get("repeats"),
            "filters": [f.get("name") for f in as_list(config.get("filter_list"))
                        if isinstance(f, dict)] or None,
            "gen_kwargs": gen or None,
            "task_hash": None if sha256_tag(task_hash) else task_hash,
            "upper_git_hash": doc.get("upper_git_hash"),
            "environment": {"transformers": None if transformers == "N/A" else transformers,
                            "torch": _env(env, "PyTorch version")},
        }),
    }


def _decoding(gen: dict[str, Any], run_config: dict[str, Any]) -> dict[str, Any]:
    temperature = float_of(gen.get("temperature"))
    do_sample = gen.get("do_sample")
    if isinstance(do_sample, str):
        do_sample = {"true": True, "false": False}.get(do_sample.lower())
    if temperature is None and do_sample is False:
        temperature = 0.0  # greedy: lm-eval's models ignore temperature without sampling
    seed = run_config.get("random_seed")
    return {
        "temperature": temperature,
        "top_p": float_of(gen.get("top_p")),
        "seed": seed if seed is not None else run_config.get("torch_seed"),
        "max_tokens": int_of(gen.get("max_gen_toks", gen.get("max_new_tokens",
                                                           gen.get("max_tokens")))),
        "do_sample": do_sample if isinstance(do_sample, bool) else None,
    }
