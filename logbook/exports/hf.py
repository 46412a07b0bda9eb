"""`logbook export --format hf --out DIR`: Hugging Face's evaluation results, for a model
repository.

- `DIR/.eval_results/<plan>.<arm>.yaml` for each arm of each selected plan with a figure, and
  `DIR/.eval_results/run-<seq>.yaml` for each selected completed run outside any plan: the
  Hub's `.eval_results/*.yaml` format (a list of results: `dataset.id`, `dataset.task_id`,
  `value`, `date`, `source.url`, `notes`), one variant a file as the Hub asks;
- `DIR/model-index.yaml`: the same results as the older `model-index` block of a model card's
  metadata, one entry per model.

`value` is the arm's mean over its counted runs (the figure `logbook report` prints) or the
run's score, on the metric's own scale; `notes` says which plan and arm, how many runs and
the interval, and names the entry's digest; `source.url` is `--source-url` followed by that
digest (without `--source-url` there is no `source`). The YAML is written by logbook itself:
block collections whose keys are plain words or quoted and whose values are JSON scalars
(a quoted string, a number, true, false or null), which YAML 1.1 and 1.2 parsers read alike.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from logbook.analysis.report.figures import plan_figures
from logbook.analysis.view import PlanView, RunView
from logbook.exports import Exporter
from logbook.exports.selection import Selection
from logbook.files import write_atomic

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # a key YAML reads as the same string unquoted


def yaml_text(value: Any, indent: int = 0) -> str:
    """``value`` (dicts, lists and JSON scalars) as block YAML."""
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return pad + "{}\n"
        out = []
        for k, v in value.items():
            key = str(k) if _PLAIN.fullmatch(str(k)) else orjson.dumps(str(k)).decode()
            if isinstance(v, dict | list) and v:
                out.append(f"{pad}{key}:\n{yaml_text(v, indent + 2)}")
            else:
                out.append(f"{pad}{key}: {_scalar(v)}\n")
        return "".join(out)
    if isinstance(value, list):
        if not value:
            return pad + "[]\n"
        out = []
        for v in value:
            if isinstance(v, dict | list) and v:
                inner = yaml_text(v, indent + 2)
                out.append(f"{pad}- {inner[indent + 2:]}")
            else:
                out.append(f"{pad}- {_scalar(v)}\n")
        return "".join(out)
    return pad + _scalar(value) + "\n"


def _scalar(v: Any) -> str:
    if isinstance(v, dict | list):
        return "{}" if isinstance(v, dict) else "[]"
    return orjson.dumps(v).decode()


def _result(sel: Selection, suite: str, task: str, value: float, date: str, entry: str,
            notes: str) -> dict[str, Any]:
    out: dict[str, Any] = {"dataset": {"id": suite, "task_id": task}, "value": value,
                           "date": date}
    url = sel.url_of(entry)
    if url is not None:
        out["source"] = {"url": url, "name": "logbook entry"}
    out["notes"] = notes
    return out


def _arm_results(sel: Selection, plan: PlanView) -> list[tuple[str, str, dict[str, Any]]]:
    """(file stem, model, result) of each arm of ``plan`` with a mean."""
    body = plan.body
    confidence = 1 - float(body.get("alpha", 0.05))
    arms, _ = plan_figures(plan, confidence)
    suite = str((body.get("suite") or {}).get("name"))
    metric = str((body.get("metric") or {}).get("name"))
    out = []
    for arm in arms:
        if arm.mean is None:
            continue
        counted = [r for r in plan.arm_runs(arm.name)
                   if not r.retracted and r.status == "completed"]
        models = sorted({str(r.apparatus.get("model")) for r in counted})
        interval = (f", {confidence:.0%} interval [{arm.interval.low:.4g}, "
                    f"{arm.interval.high:.4g}]" if arm.interval is not None else "")
        notes = (f"logbook plan {plan.slug}, arm {arm.name}: mean {metric} of {arm.completed} "
                 f"runs{interval}; entry {plan.digest}")
        date = max(str(r.entry.envelope.get("ts")) for r in counted)
        task = _task(counted) or metric
        result = _result(sel, suite, task, float(arm.mean), date, plan.digest, notes)
        out.append((f"{plan.slug}.{arm.name}", ", ".join(models), result))
    return out


def _task(runs: list[RunView]) -> str | None:
    tasks = {r.body.get("task") for r in runs}
    found = tasks.pop() if len(tasks) == 1 else None
    return found if isinstance(found, str) else None


def _run_result(sel: Selection, run: RunView, score: float) -> tuple[str, str, dict[str, Any]]:
    metric = str(run.metric)
    suite = run.apparatus.get("suite.name") or run.body.get("task") or metric
    notes = f"logbook run @{run.seq} (no plan): {metric}; entry {run.digest}"
    result = _result(sel, str(suite), _task([run]) or metric, score,
                     str(run.entry.envelope.get("ts")), run.digest, notes)
    return f"run-{run.seq}", str(run.apparatus.get("model")), result


def write(sel: Selection, out: Any, _options: dict[str, Any]) -> str:
    where = Path(out)
    results: list[tuple[str, str, dict[str, Any]]] = []
    for plan in sel.plans:
        if not plan.retracted_by:
            results += _arm_results(sel, plan)
    for run in sel.runs:
        score = run.score
        if run.plan is None and run.status == "completed" and not run.retracted and (
                score is not None):
            results.append(_run_result(sel, run, float(score)))
    (where / ".eval_results").mkdir(parents=True, exist_ok=True)
    for stem, _, result in results:
        write_atomic(where / ".eval_results" / f"{_safe(stem)}.yaml", yaml_text([result]),
                     "--out")
    by_model: dict[str, list[dict[str, Any]]] = {}
    for _, model, r in results:
        entry = {"task": {"type": r["dataset"]["task_id"]},
                 "dataset": {"name": r["dataset"]["id"], "type": r["dataset"]["id"]},
                 "metrics": [{"type": r["dataset"]["task_id"], "value": r["value"],
                              "name": r["notes"]}]}
        if "source" in r:
            entry["source"] = r["source"]
        by_model.setdefault(model, []).append(entry)
    index = {"model-index": [{"name": m, "results": rs} for m, rs in by_model.items()]}
    write_atomic(where / "model-index.yaml", yaml_text(index), "--out")
    return f"{len(results)} results into {where / '.eval_results'} and model-index.yaml"


def _safe(stem: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)


EXPORTER = Exporter(name="hf", summary="Hugging Face .eval_results/*.yaml (an arm of a plan or "
                    "a run a file) and a model-index block, into a folder", writes="folder",
                    text=False, needs=(), extra=None, write=write)
