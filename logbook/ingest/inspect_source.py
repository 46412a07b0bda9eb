"""An Inspect log's identity and figures: where a run came from, the suite's identity (its
samples' ids, inputs and targets), what its metric is called, Inspect's own figures, its epochs
reducer, and the check that logbook's figure over the reduced items is Inspect's own."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from logbook.format.reducers import known
from logbook.format.usage import given_to_one, seconds_between, token_counts
from logbook.ingest._common import as_dict, as_list, fail, field_name, number, shown


def log_source(path: Path, header: dict[str, Any]) -> dict[str, Any]:
    """The log file (name and SHA-256) and Inspect's own eval and run ids."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    ev = as_dict(header.get("eval"))
    ids = {k: ev[k] for k in ("eval_id", "run_id") if isinstance(ev.get(k), str) and ev[k]}
    return {"harness": "inspect_ai", "file": path.name, "sha256": "sha256:" + h.hexdigest(),
            "ids": ids}


def with_source(path: Path, header: dict[str, Any],
                runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log's runs, each checked against Inspect's figure and given its source."""
    source = log_source(path, header)
    for run in runs:
        check_headline(path, run)
        run["source"] = {**source, "part": run["apparatus"]["evaluator"]["name"]}
    given_to_one(runs, log_usage(header))
    return runs


def log_usage(header: dict[str, Any]) -> dict[str, Any]:
    """What the evaluation used, from its ``stats``: tokens in and out summed over the models
    of ``model_usage``, and the wall time from ``started_at`` to ``completed_at``
    (logbook.format.usage: given to the log's run when it makes one run only)."""
    stats = as_dict(header.get("stats"))
    usage: dict[str, Any] = token_counts(stats.get("model_usage"))
    wall = seconds_between(stats.get("started_at"), stats.get("completed_at"))
    if wall is not None:
        usage["wall_seconds"] = wall
    return usage


def metric_name(scorer: str, ev: dict[str, Any], reported: dict[str, Any],
                read_as: str) -> str:
    """A scorer and its headline metric as one name (``match.accuracy``); a value with fields
    is named by the scorer and its first field (``match.correct``)."""
    if read_as != scorer:
        return f"{scorer}.{read_as}"
    metric = reported.get("metric")
    if not isinstance(metric, str) or not metric:
        spec = next((s for s in as_list(ev.get("scorers"))
                     if isinstance(s, dict) and s.get("name") == scorer), {})
        listed = [str(m.get("name", "")).rsplit("/", 1)[-1] for m in as_list(spec.get("metrics"))
                  if isinstance(m, dict)]
        metric = next((m for m in listed if m and m not in ("stderr", "std")), "mean")
    return f"{scorer}.{metric}"


def check_headline(path: Path, run: dict[str, Any]) -> None:
    """Inspect's accuracy (or mean) must be the mean over items of each item's score (its
    scored epochs reduced by the run's reducer, logbook.format.reducers), within 1e-9; else the
    log was edited or misread and is not recorded."""
    from logbook.format.reducers import item_scores, reducer_of

    reported, o = run.get("reported") or {}, run["outcomes"]
    value = reported.get("value")
    if (value is None or reported.get("metric") not in ("accuracy", "mean") or o.get("extra")
            or run["status"] != "completed"):
        return
    name = reducer_of(o)
    items = [v for v in item_scores(o["id"], o["score"], name).values() if v is not None]
    if not items:
        return
    mine = math.fsum(items) / len(items)
    if abs(mine - value) > 1e-9:
        raise fail(path, f"field results.scores.{reported.get('scorer')}.metrics."
                         f"{reported.get('metric')} is {value!r}, but logbook's own figure, "
                         f"the mean over its {len(items)} scored items is {mine!r} (each "
                         f"item's epochs reduced by {name}): an edited file or a misread one, "
                         "so it is not recorded")


def reported_figures(path: Path, status: str, message: str | None, results: dict[str, Any],
                     name: str) -> dict[str, Any]:
    """Inspect's own figures for one scorer, verbatim: its status, error, sample counts and,
    when the log has them, the scorer's headline metric, value and metrics."""
    found = [(i, e) for i, e in enumerate(as_list(results.get("scores")))
             if isinstance(e, dict) and (e.get("scorer") or e.get("name")) == name]
    entries = [e for _, e in found]
    out: dict[str, Any] = {"status": status, "error": message, "scorer": name,
                           "total_samples": results.get("total_samples"),
                           "completed_samples": results.get("completed_samples")}
    headline = as_dict(results.get("headline"))
    if headline.get("scorer") == name:  # several reducers: the figure of the headline's
        found.sort(key=lambda f: f[1].get("reducer") != headline.get("reducer"))
    if entries:
        first = found[0][1]
        metrics = _metrics(path, first.get("metrics"), ("results", "scores", found[0][0],
                                                         "metrics"))
        metric = headline.get("metric") if headline.get("scorer") == name else None
        if metric is not None and not isinstance(metric, str):
            raise fail(path, f"field results.headline.metric is {shown(metric)}, not a string")
        metric = metric if metric in metrics else next(iter(metrics), None)
        out |= {"metric": metric, "value": number(metrics.get(metric or "")),
                "stderr": number(metrics.get("stderr")), "metrics": metrics,
                "scored_samples": first.get("scored_samples"),
                "unscored_samples": first.get("unscored_samples"),
                "reducer": first.get("reducer")}
        if len(entries) > 1:
            out["scores"] = entries
    return out


def run_reducer(path: Path, ev: dict[str, Any], reported: dict[str, Any]) -> str | None:
    """The epochs reducer of the scorer's reported figure (else the first the eval's config
    lists; None when the log names none: Inspect's default, the mean)."""
    name, field = reported.get("reducer"), f"results.scores.{reported.get('scorer')}.reducer"
    if name is None and "metrics" not in reported:
        listed = as_list(as_dict(ev.get("config")).get("epochs_reducer"))
        name, field = (listed[0] if listed else None), "eval.config.epochs_reducer[0]"
    if name is not None and not (isinstance(name, str) and known(name)):
        raise fail(path, f"field {field} is {shown(name)}, an epochs reducer logbook cannot "
                         "apply (it applies mean, median, mode, max, at_least_K, pass_at_K)")
    return name


def _metrics(path: Path, raw: Any, at: tuple[str | int, ...]) -> dict[str, Any]:
    """A scorer's metrics as {name: value}; each is an object with a numeric value (or, in
    older logs, a bare number)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise fail(path, f"field {field_name(at)} is {shown(raw)}, not an object")
    metrics: dict[str, Any] = {}
    for key, entry in raw.items():
        value, where = entry, (*at, key)
        if isinstance(entry, dict):
            value, where = entry.get("value"), (*where, "value")
        if not (value is None or isinstance(value, bool | int | float)):
            raise fail(path, f"field {field_name(where)} is {shown(value)}, not a number")
        metrics[key] = value
    return metrics


# -- suite identity: the data (sample ids, inputs, targets), never the prompt or the model --

def canonical(value: Any) -> bytes:
    """The canonical JSON the identity hashes: keys sorted, no spaces, UTF-8 (not escaped)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def _hex(value: Any) -> str:
    return hashlib.sha256(canonical(value)).hexdigest()


def sample_digests(raw: dict[str, Any]) -> tuple[str, str]:
    """(hash of the input, hash of the target) of one logged sample: its ``input`` (a string,
    or a list of chat messages, each without its ``id``, which Inspect draws afresh for every
    run) and its ``target`` (a string or a list of strings), each as canonical JSON."""
    given = raw.get("input")
    if isinstance(given, list):
        given = [{k: v for k, v in m.items() if k != "id"} if isinstance(m, dict) else m
                 for m in given]
    return _hex(given), _hex(raw.get("target"))


def suite_identity(samples: list[dict[str, Any]], planned: list[str]) -> str | None:
    """``sha256:`` of the sorted (sample id, input hash, target hash) of the log's samples, one
    per sample id (epochs collapsed); None when the log lacks a sample its dataset lists (an
    evaluation that ended early) or holds none: it cannot tell its items' data."""
    triples = {(s["id"], s["input"], s["target"]) for s in samples}
    if not triples or not set(planned) <= {s["id"] for s in samples}:
        return None
    return "sha256:" + _hex(sorted(map(list, triples)))
