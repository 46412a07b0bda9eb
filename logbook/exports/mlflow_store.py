"""`logbook export --format mlflow --out FOLDER|URI`: each selected run as an MLflow run, with
MLflow's own client (the `mlflow` extra: mlflow-skinny), into the experiment named by the
ledger's origin (`logbook/<uuid>`).

- params: the run's apparatus, flattened to dotted names (logbook.format.apparatus; the
  `captured.*` environment is left out), each value as text (MLflow caps a value at 6,000
  characters: a longer one is cut, and says so);
- metrics: the run's score under its metric's name (none for a run without a score), and
  `items` and `missing` (of the items it lists);
- tags: `logbook.ledger`, `logbook.digest`, `logbook.seq`, `logbook.plan`, `logbook.arm`,
  `logbook.status`, `logbook.retracted`, `logbook.url` (with `--source-url`);
- status FINISHED for a completed run, FAILED for a failed one, KILLED for an aborted one;
  start and end times from the run's own `started`/`finished`, else its entry's time.

A run already in the experiment (the same `logbook.digest` tag) is left as it is: exporting
again adds only the runs appended since. A local FOLDER is MLflow's file store, which MLflow
keeps in maintenance mode: logbook allows it for this export (MLFLOW_ALLOW_FILE_STORE); a URI
(`sqlite:///…`, `http://…`) goes to that tracking server or database as MLflow reaches it.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from logbook.analysis.view import RunView
from logbook.exports import Exporter
from logbook.exports.selection import Selection

_STATUS = {"completed": "FINISHED", "failed": "FAILED", "aborted": "KILLED"}
_MAX_VALUE = 6000  # MLflow's limit on a param's value
_BATCH = 100  # params a log_batch call takes


def tracking_uri(out: str) -> str:
    if "://" in out:
        return out
    folder = Path(out).resolve()
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return folder.as_uri()


def _millis(text: Any) -> int | None:
    if not isinstance(text, str):
        return None
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _key(name: str) -> str:
    """A param name MLflow takes: letters, digits and _ - . space / (others become _)."""
    return "".join(c if c.isalnum() or c in "_-. /" else "_" for c in name)[:250]


def params_of(run: RunView) -> dict[str, str]:
    out = {}
    for name, value in sorted(run.apparatus.items()):
        if name == "captured" or name.startswith("captured."):
            continue
        text = value if isinstance(value, str) else _json(value)
        if len(text) > _MAX_VALUE:
            text = text[:_MAX_VALUE - 40] + f"… (cut: {len(text)} characters)"
        out[_key(name)] = text
    return out


def _json(value: Any) -> str:
    import orjson

    return orjson.dumps(value).decode()


def write(sel: Selection, out: Any, _options: dict[str, Any]) -> str:
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri(str(out)))
    found = client.get_experiment_by_name(sel.origin)
    experiment = (found.experiment_id if found is not None
                  else client.create_experiment(sel.origin))
    there = _digests_in(client, experiment)
    slugs = {p.digest: p.slug for p in sel.view.plans.values()}
    added = 0
    for run in sel.runs:
        if run.digest in there:
            continue
        body = run.body
        ts = _millis(run.entry.envelope.get("ts")) or 0
        start = _millis(body.get("started")) or ts
        end = _millis(body.get("finished")) or ts
        name = f"@{run.seq}" + (f" {slugs.get(run.plan, run.plan)}/{run.arm}" if run.plan
                                else "")
        tags = {"logbook.ledger": sel.origin, "logbook.digest": run.digest,
                "logbook.seq": str(run.seq), "logbook.status": run.status,
                "logbook.retracted": str(run.retracted).lower()}
        if run.plan:
            tags["logbook.plan"] = slugs.get(run.plan, run.plan)
            tags["logbook.arm"] = str(run.arm)
        url = sel.url_of(run.digest)
        if url is not None:
            tags["logbook.url"] = url
        made = client.create_run(experiment, start_time=start, tags=tags, run_name=name)
        run_id = made.info.run_id
        metrics = []
        if run.status == "completed" and run.score is not None:
            metrics.append(Metric(_key(str(run.metric)), float(run.score), end, 0))
        if body.get("outcomes"):
            missing, total = run.missing(None)
            metrics += [Metric("items", float(total), end, 0),
                        Metric("missing", float(missing), end, 0)]
        params = [Param(k, v) for k, v in params_of(run).items()]
        for i in range(0, max(len(params), 1), _BATCH):
            client.log_batch(run_id, metrics=metrics if i == 0 else [],
                             params=params[i:i + _BATCH], tags=[RunTag(k, v)
                                                                for k, v in tags.items()]
                             if i == 0 else [])
        client.set_terminated(run_id, status=_STATUS.get(run.status, "FAILED"), end_time=end)
        added += 1
    return (f"{added} runs into experiment {sel.origin} "
            f"({len(sel.runs) - added} were there already)")


def _digests_in(client: Any, experiment: str) -> set[str]:
    out: set[str] = set()
    token = None
    while True:
        page = client.search_runs([experiment], max_results=1000, page_token=token)
        out.update(r.data.tags.get("logbook.digest", "") for r in page)
        token = page.token
        if not token:
            return out


EXPORTER = Exporter(name="mlflow", summary="each run as an MLflow run (params: apparatus; "
                    "metrics: score, items, missing) into a tracking folder or URI (needs the "
                    "mlflow extra)", writes="store", text=False, needs=("mlflow",),
                    extra="mlflow", write=write)
