"""Inspect AI logs (``.eval`` zip archives and ``.json``) -> one run per task and scorer.

Epochs become the outcome's ``sample`` column and the log's epochs reducer the outcome's
``reducer``, so the mean over items of each item's reduced score is Inspect's own accuracy.
Errored samples stay in as missing (Inspect drops them from its denominator; ``reported`` keeps
its figures verbatim), and every planned (sample id, epoch) the log never wrote is missing with
``NOT_RUN`` as its error. The suite's identity (``apparatus.dataset_hash``) is the samples'
ids, inputs and targets (inspect_source.suite_identity).

The log is read by logbook.ingest.inspect_reader (its header and its samples, reduced).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from logbook.capture.redact import redact_value
from logbook.ingest._common import (
    as_dict,
    as_list,
    build_outcomes,
    digest,
    fail,
    int_of,
    item_id,
    number,
    prune,
    rfc3339,
    shown,
    whole,
)
from logbook.ingest.adapter import Adapter
from logbook.ingest.inspect_reader import MAX_EPOCHS, Reader, error_text, read_log
from logbook.ingest.inspect_source import (
    metric_name,
    reported_figures,
    run_reducer,
    suite_identity,
    with_source,
)
from logbook.ingest.traces import inspect_trace

NOT_RUN = "not run (evaluation ended early)"
# A bound on what a log may plan, so that a damaged count cannot exhaust memory: a run is at
# most a few million (sample, epoch) pairs (and its epochs at most MAX_EPOCHS).
MAX_PLANNED = 5_000_000
_STATUS = {"success": "completed", "error": "failed", "cancelled": "aborted",
           "started": "aborted"}
_REASON = {"error": "evaluation failed (the log records no error message)",
           "cancelled": "evaluation cancelled",
           "started": "log was never finished (status 'started': interrupted or still running)"}
_NOT_LOGS = frozenset({"logs.json", "eval-set.json", "listing.json"})  # Inspect's log-dir files


def _same(value: Any) -> Any:
    return value


def _field(name: str) -> Callable[[Any], Any]:
    """A score's field ``name`` (a dict score), or the score itself."""
    def get(value: Any) -> Any:
        return value.get(name) if isinstance(value, dict) else value
    return get


def read_runs(path: Path, *, scorer: str | None = None,
              reader: Reader = "auto") -> list[dict[str, Any]]:
    """Runs from one Inspect log, or from every ``.eval``/``.json`` log in a directory."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".eval", ".json")
                       and p.is_file() and p.name not in _NOT_LOGS)
        if not files:
            raise fail(path, "no Inspect .eval or .json log in this directory")
    elif path.suffix in (".eval", ".json") or not path.exists():
        files = [path]
    else:
        raise fail(path, "expected an Inspect .eval or .json log")
    runs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for file in files:
        header, samples = read_log(file, reader=reader)
        if file is not path and not isinstance(header.get("eval"), dict):
            continue  # a directory's other JSON (logs.json, eval-set.json): not a log
        eval_id = as_dict(header.get("eval")).get("eval_id")
        if isinstance(eval_id, str):
            if eval_id in seen:
                continue  # the same log in both formats (``inspect log convert``)
            seen.add(eval_id)
        runs.extend(with_source(file, header, log_runs(file, header, samples, scorer=scorer)))
    return runs


class Inspect(Adapter):
    """``--from inspect``: ``metric`` is the one scorer to read instead of every scorer."""

    name = "inspect"
    globs = ("*.eval", "*.json")

    def read_runs(self, path: Path, *, metric: str | None = None,
                  cut_off_ok: bool = False) -> list[dict[str, Any]]:
        return read_runs(path, scorer=metric)


    def output_of(self, command: list[str], env: Mapping[str, str]) -> str | None:
        """``inspect eval ...`` (or eval-set, eval-retry): its ``--log-dir``, else
        ``INSPECT_LOG_DIR``, else Inspect's default ``./logs``."""
        from logbook.ingest import option_value, program

        args = program(command)
        if len(args) < 2 or args[0] not in ("inspect", "inspect_ai") \
                or args[1] not in ("eval", "eval-set", "eval-retry"):
            return None
        return option_value(args, "--log-dir") or env.get("INSPECT_LOG_DIR") or "logs"


ADAPTER = Inspect()


def log_runs(path: Path, header: dict[str, Any], samples: list[dict[str, Any]], *,
             scorer: str | None = None) -> list[dict[str, Any]]:
    """One run body per scorer of one log (header as written by Inspect, samples minimal)."""
    ev = header.get("eval")
    if not isinstance(ev, dict):
        raise fail(path, "field eval is missing or not an object")
    status = header.get("status", "started")
    if not isinstance(status, str) or status not in _STATUS:
        raise fail(path, f"field status is {shown(status)}, not one of {', '.join(_STATUS)}")
    task = ev.get("task")
    if task is not None and not isinstance(task, str):
        raise fail(path, f"field eval.task is {shown(task)}, not a string")
    results = as_dict(header.get("results"))
    names = _scorers(ev, results, samples)
    if scorer is not None:
        if scorer not in names and samples:
            raise fail(path, f"no scorer named {scorer!r} (found: {', '.join(names) or 'none'})")
        names = [scorer]
    planned, note = _planned(path, ev, samples)
    identity = suite_identity(samples, list(dict.fromkeys(i for i, _ in planned)))
    logged: dict[tuple[str, int], dict[str, Any]] = {}
    for s in samples:
        if (s["id"], s["epoch"]) in logged:
            raise fail(path, f"sample {s['id']} epoch {s['epoch']} is logged twice")
        logged[(s["id"], s["epoch"])] = s
    planned_set = set(planned)
    keys = planned + [k for k in logged if k not in planned_set]
    message = error_text(header.get("error"))
    runs = []
    for name in names:
        reported = reported_figures(path, status, message, results, name)
        outcomes = _outcomes(name, keys, logged)
        epochs = "sample" in outcomes
        outcomes["metric"] = metric_name(name, ev, reported, outcomes["metric"])
        outcomes["reducer"] = run_reducer(path, ev, reported)
        body: dict[str, Any] = {
            "status": _STATUS[status],
            "task": task,
            "apparatus": {**_apparatus(header, ev, name), "dataset_hash": identity},
            "outcomes": outcomes,
            "reported": reported,
            "started": rfc3339(as_dict(header.get("stats")).get("started_at") or ev.get("created")),
            "finished": rfc3339(as_dict(header.get("stats")).get("completed_at")),
            "note": note,
        }
        if status != "success":
            body["reason"] = message or _REASON[status]
        body = prune(body)
        traces = [inspect_trace(sid, epoch if epochs else None, logged[(sid, epoch)], name)
                  for sid, epoch in keys if (sid, epoch) in logged]
        if traces:
            body["traces"] = traces
        runs.append(body)
    return runs


def _scorers(ev: dict[str, Any], results: dict[str, Any], samples: list[Any]) -> list[str]:
    names = [s.get("name") for s in as_list(ev.get("scorers")) if isinstance(s, dict)]
    names += [s.get("scorer") or s.get("name") for s in as_list(results.get("scores"))
              if isinstance(s, dict)]
    for sample in samples:
        names += list(sample["scores"])
    unique = list(dict.fromkeys(n for n in names if isinstance(n, str) and n))
    return unique or ["score"]


def _planned(path: Path, ev: dict[str, Any],
             samples: list[Any]) -> tuple[list[tuple[str, int]], str | None]:
    """Every (id, epoch) the eval meant to run, from the dataset's sample ids and epochs."""
    ids = [item_id(i) for i in as_list(as_dict(ev.get("dataset")).get("sample_ids"))]
    given = as_dict(ev.get("config")).get("epochs")
    epochs = (max((s["epoch"] for s in samples), default=1) if given is None
              else whole(given, 1, MAX_EPOCHS))
    if epochs is None:
        raise fail(path, f"field eval.config.epochs is {shown(given)}, not a whole number "
                         f"from 1 to {MAX_EPOCHS}")
    if not ids or any(i is None for i in ids):
        return [], "log lists no dataset sample ids: items never run cannot be counted"
    if len(ids) * epochs > MAX_PLANNED:
        raise fail(path, f"fields eval.dataset.sample_ids and eval.config.epochs plan "
                         f"{len(ids)} x {epochs} (sample, epoch) pairs, more than the "
                         f"{MAX_PLANNED} one run can hold")
    seen: set[str | None] = set()
    for i in ids:
        if i in seen:
            raise fail(path, f"field eval.dataset.sample_ids lists sample {shown(i)} twice")
        seen.add(i)
    return [(i, e) for i in ids if i is not None for e in range(1, epochs + 1)], None


def _outcomes(name: str, keys: list[tuple[str, int]],
              logged: dict[tuple[str, int], dict[str, Any]]) -> dict[str, Any]:
    values: list[tuple[Any, str | None]] = []
    for key in keys:
        sample = logged.get(key)
        if sample is None:
            values.append((None, NOT_RUN))
        elif sample["error"]:
            values.append((None, sample["error"]))
        elif name not in sample["scores"]:
            values.append((None, f"no score from scorer {name}"))
        else:
            values.append((as_dict(sample["scores"][name]).get("value"), None))
    fields = list(dict.fromkeys(k for v, _ in values if isinstance(v, dict) for k in v if k))
    getters: list[tuple[str, Callable[[Any], Any]]] = (
        [(f, _field(f)) for f in fields] if fields else [(name, _same)])
    columns = []
    for _, get in getters:
        columns.append([value_to_float(get(v)) if err is None else (None, err)
                        for v, err in values])
    rows = [(sid, score, err, epoch, None)
            for (sid, epoch), (score, err) in zip(keys, columns[0], strict=True)]
    extra = {field: [s for s, _ in col] for (field, _), col in zip(getters[1:], columns[1:],
                                                                   strict=True)}
    with_sample = max((epoch for _, epoch in keys), default=1) > 1
    return build_outcomes(getters[0][0], rows, extra, with_sample=with_sample)


def value_to_float(value: Any) -> tuple[float | None, str | None]:
    """Inspect's value_to_float, except that what it cannot convert is missing, not 0."""
    unscored = "unscored (score value is null or NaN)"  # NaN is Inspect's "unscored" mark
    if value is None:
        return None, unscored
    if isinstance(value, bool | int | float):
        score = number(value)
        if score is None:
            nan = isinstance(value, float) and math.isnan(value)
            return None, unscored if nan else f"score value {value!r} is out of range"
        return score, None
    if isinstance(value, str):
        letter = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}.get(value)
        if letter is not None:
            return letter, None
        lowered = value.strip().lower()
        if lowered in ("yes", "true", "no", "false"):
            return (1.0 if lowered in ("yes", "true") else 0.0), None
        try:
            score = number(float(lowered))
        except ValueError:
            score = None
        if score is not None:
            return score, None
        return None, f"score value {value[:80]!r} is not a number"
    return None, f"score value is a {type(value).__name__}, not a number"


def _apparatus(header: dict[str, Any], ev: dict[str, Any], scorer: str) -> dict[str, Any]:
    model = ev.get("model") if isinstance(ev.get("model"), str) else None
    generate = as_dict(ev.get("model_generate_config")) | as_dict(as_dict(header.get("plan"))
                                                               .get("config"))
    packages = as_dict(ev.get("packages"))
    revision = as_dict(ev.get("revision"))
    dataset = as_dict(ev.get("dataset"))
    spec = next((s for s in as_list(ev.get("scorers"))
                 if isinstance(s, dict) and s.get("name") == scorer), None)
    steps = [{"solver": s.get("solver"), "params": s.get("params")}
             for s in as_list(as_dict(header.get("plan")).get("steps")) if isinstance(s, dict)]
    out: dict[str, Any] = {
        "model": model,
        "engine": model.split("/", 1)[0] if model and "/" in model else None,
        "decoding": {"temperature": number(generate.get("temperature")),
                     "top_p": number(generate.get("top_p")),
                     "seed": generate.get("seed"),
                     "max_tokens": generate.get("max_tokens")},
        "harness": {"name": "inspect_ai", "version": packages.get("inspect_ai"),
                    "commit": revision.get("commit"), "dirty": revision.get("dirty")},
        "evaluator": {"name": scorer, "config_hash": digest(spec) if spec else None},
        "packages_hash": digest(packages) if packages else None,
        "harness_config": redact_value({
            "task_version": ev.get("task_version"),
            "task_file": ev.get("task_file"),
            "task_args": ev.get("task_args"),
            "model_args": ev.get("model_args"),
            "model_base_url": ev.get("model_base_url"),
            "generate_config": generate,
            "config": ev.get("config"),
            "dataset": {k: dataset.get(k) for k in ("name", "location", "samples", "shuffled")},
            "solver": steps or None,
            "scorer": spec,
            "packages": packages,
            "revision_origin": revision.get("origin"),
            "metadata": ev.get("metadata"),
        }),
    }
    out.update(_controls(generate))
    return out


def _controls(generate: dict[str, Any]) -> dict[str, Any]:
    """The typed harness controls (format.apparatus.TYPED) Inspect's generate config sets:
    ``max_connections`` (concurrent requests to the model) as ``execution.concurrency``,
    ``max_retries`` as ``retries.cap``; only those it sets, as whole numbers in range."""
    out: dict[str, Any] = {}
    connections, cap = int_of(generate.get("max_connections")), int_of(
        generate.get("max_retries"))
    if connections is not None and connections >= 1:
        out["execution"] = {"concurrency": connections}
    if cap is not None and cap >= 0:
        out["retries"] = {"cap": cap}
    return out
