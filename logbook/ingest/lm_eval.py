"""lm-evaluation-harness 0.4.x: ``results_<ts>.json`` + ``samples_<task>_<ts>.jsonl`` -> runs.

The adapter (``--from lm-eval``) and what it reads: a results file and each task's samples file
(``--log_samples``), or the dictionary ``lm_eval.simple_evaluate`` returns. One run per task
(logbook.ingest.lm_eval_tasks: groups, the primary metric, ``extra``, the check against
lm-eval's own figure). Each run records its ``source`` (the results file, its SHA-256 and
timestamp).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from logbook.errors import InputError
from logbook.ingest._common import as_dict, as_list, check_depth, fail, loads, read_bytes
from logbook.ingest.adapter import Adapter
from logbook.ingest.lm_eval_apparatus import HARNESS
from logbook.ingest.lm_eval_tasks import Lines, runs_of

_RESULTS = re.compile(r"results_(?P<ts>.+)\.json")


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


    def output_of(self, command: list[str], env: Mapping[str, str]) -> str | None:
        """``lm_eval ... --output_path P --log_samples``: P (a folder lm-eval writes
        ``MODEL/results_*.json`` into; P's folder when P names a .json file)."""
        from logbook.ingest import option_value, program

        args = program(command)
        if not args or args[0] not in ("lm_eval", "lm-eval"):
            return None
        out = option_value(args, "--output_path", "-o")
        if not out:
            raise InputError("logbook run -- lm_eval: give lm_eval --output_path P (without "
                             "it lm_eval writes no results file, so there is no run to read)")
        if not ({"--log_samples", "-s"} & set(args)):
            raise InputError("logbook run -- lm_eval: give lm_eval --log_samples (the "
                             "per-item scores are the run's outcomes)")
        return str(Path(out).parent) if out.endswith(".json") else out


ADAPTER = LmEval()


def read_results(path: Path, *, metric: str | None = None) -> list[dict[str, Any]]:
    """One run per evaluated task of one lm-eval results file."""
    data = read_bytes(path)
    doc = check_doc(loads(data, str(path)), path)
    match = _RESULTS.fullmatch(path.name)
    if match is None:
        raise fail(path, "file name is not results_<timestamp>.json, so its samples files "
                         "cannot be found")

    def samples(task: str) -> tuple[Path, list[tuple[int, dict[str, Any]]]]:
        assert match is not None
        found = path.with_name(f"samples_{task}_{match['ts']}.jsonl")
        return found, _read_samples(found)

    source = {"harness": HARNESS, "file": path.name,
              "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
              "ids": {"results": path.name, "date": str(doc.get("date"))}}
    return runs_of(doc, path, samples, source, metric)


def check_doc(doc: Any, path: Path | str) -> dict[str, Any]:
    """An lm-eval 0.4.x results object, bounded in depth, with its results and configs."""
    if not isinstance(doc, dict):
        raise fail(path, "expected a JSON object (an lm-eval results file)")
    check_depth(doc, str(path))  # its values are hashed and copied into the runs
    version = doc.get("lm_eval_version")
    if not isinstance(version, str) or not version.startswith("0.4."):
        found = "is missing" if version is None else f"is {version!r}"
        raise fail(path, f"field lm_eval_version {found}; only lm-evaluation-harness 0.4.x "
                         "results are supported")
    if not isinstance(doc.get("results"), dict) or not isinstance(doc.get("configs"), dict):
        raise fail(path, "field results or configs is missing or not an object")
    return doc


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


def runs_from_results(results: Any, *, metric: str | None = None) -> list[dict[str, Any]]:
    """One run per task of the dictionary ``lm_eval.simple_evaluate`` returns (with its
    ``samples`` when it ran with ``log_samples=True``): the runs a results file of the same
    evaluation makes. Its values are taken as lm-eval writes them (what JSON cannot hold, as
    text); its ``source`` is the dictionary's SHA-256 and lm-eval's date."""
    import orjson

    if not isinstance(results, dict):
        raise fail("results", f"expected the dictionary simple_evaluate returns, not "
                              f"{type(results).__name__}")
    try:  # as lm-eval's own tracker writes it: numpy values as numbers, the rest as text
        data = orjson.dumps(results, default=str, option=orjson.OPT_SERIALIZE_NUMPY
                            | orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as exc:
        raise fail("results", f"cannot be read as JSON ({exc})") from None
    doc = check_doc(loads(data, "results"), "results")
    logged = as_dict(doc.pop("samples", None))
    if "task_hashes" not in doc:  # lm-eval's tracker adds them to the file, from the samples
        doc["task_hashes"] = _task_hashes(logged)

    def samples(task: str) -> tuple[str, Lines]:
        where = f"results['samples'][{task!r}]"
        lines = logged.get(task)
        if not isinstance(lines, list):
            raise fail("results", f"holds no samples of task {task!r}: call simple_evaluate "
                                  "with log_samples=True (per-item scores are needed)")
        if not all(isinstance(line, dict) for line in lines):
            raise fail(where, "expected one object per sample")
        return where, list(enumerate(lines, 1))

    source = {"harness": HARNESS, "file": "simple_evaluate results",
              "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
              "ids": {"date": str(doc.get("date"))}}
    return runs_of(doc, "results", samples, source, metric)


def _task_hashes(samples: dict[str, Any]) -> dict[str, str]:
    """Each task's hash as lm-eval's EvaluationTracker writes it into the results file: the
    SHA-256 of its samples' doc, prompt and target hashes, joined (a task whose samples lack
    them gets none)."""
    hashes = {}
    for task, lines in samples.items():
        parts = [line.get(k) for line in as_list(lines) if isinstance(line, dict)
                 for k in ("doc_hash", "prompt_hash", "target_hash")]
        texts = [p for p in parts if isinstance(p, str)]
        if texts and len(texts) == len(parts):
            hashes[task] = hashlib.sha256("".join(texts).encode()).hexdigest()
    return hashes
