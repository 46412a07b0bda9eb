"""Hostile or damaged harness outputs are refused through the CLI: exit 2, one sentence naming
the file (and the field), and nothing written to the ledger. Never a crash (exit 70).

Each hostile file is built in tmp_path from a real fixture with one field changed (the JSON
Lines one is written from scratch). Values that orjson refuses to write (a lone surrogate) are
written with the stdlib's json, as Python's own json module would write them.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from builders import plan_body, write_eval, write_json
from conftest import run_cli

from logbook.errors import InputError
from logbook.ingest import inspect as inspect_log
from logbook.ingest._eval_zip import EvalArchive

HAS_INSPECT_AI = importlib.util.find_spec("inspect_ai") is not None

FIXTURES = Path(__file__).parents[1] / "fixtures"
LM_RUN = FIXTURES / "lm_eval/run-seed1"
JSON_LOG = next((FIXTURES / "inspect/run-failed").glob("*.json"))
EVAL_LOG = next((FIXTURES / "inspect/run-errors").glob("*.eval"))
Case = tuple[str, Path, Path, str]  # (source, PATH to give, file the sentence names, field)


# ---------------------------------------------------------------- building hostile files


def dump(value: Any) -> bytes:
    return json.dumps(value).encode()  # the stdlib escapes a lone surrogate as "\ud800"


@functools.cache
def eval_members() -> dict[str, bytes]:
    with EvalArchive(EVAL_LOG) as archive:
        return {name: archive.read(name) for name in archive.infos}


def inspect_json(change: Callable[[dict[str, Any]], Any], field: str) -> Callable[[Path], Case]:
    def build(tmp: Path) -> Case:
        doc = orjson.loads(JSON_LOG.read_bytes())
        change(doc)
        path = tmp / "log.json"
        path.write_bytes(dump(doc))
        return "inspect", path, path, field
    return build


def inspect_eval(change: Callable[[dict[str, Any]], Any], field: str) -> Callable[[Path], Case]:
    def build(tmp: Path) -> Case:
        members = eval_members()
        header = orjson.loads(members["header.json"])
        change(header)
        path = write_eval(tmp / "log.eval", members | {"header.json": dump(header)})
        return "inspect", path, path, field
    return build


def eval_zstd_bomb(tmp: Path) -> Case:
    """A member whose zstd frame claims 1 TiB of content: never allocated up front."""
    name = next(n for n in eval_members() if n.startswith("samples/"))
    data = b"{}"
    frame = zstandard.ZstdCompressor(write_checksum=False).compress(data)
    assert frame[4] == 0x20  # single segment, a one-byte content size: widen it to 8 bytes
    lying = frame[:4] + bytes([0xE0]) + struct.pack("<Q", 1 << 40) + frame[6:]
    path = write_eval(tmp / "bomb.eval", eval_members() | {name: data}, packed={name: lying})
    return "inspect", path, path, f"member {name}"


def lm_eval(change: Callable[[dict[str, Any]], Any], field: str,
            line: Callable[[dict[str, Any]], Any] | None = None) -> Callable[[Path], Case]:
    """Copy lm-eval's output folder, change its results file (or its first samples line)."""
    def build(tmp: Path) -> Case:
        out = tmp / "out"
        out.mkdir()
        results = next(LM_RUN.glob("results_*.json"))
        samples = next(LM_RUN.glob("samples_*.jsonl"))
        doc = orjson.loads(results.read_bytes())
        change(doc)
        (out / results.name).write_bytes(dump(doc))
        lines = samples.read_bytes().splitlines()
        if line is not None:
            first = orjson.loads(lines[0])
            line(first)
            lines[0] = dump(first)
        (out / samples.name).write_bytes(b"\n".join(lines) + b"\n")
        named = out / (samples.name if line is not None else results.name)
        return "lm-eval", out, named, field
    return build


def twice(data: bytes, key: str, value: Any) -> bytes:
    """The JSON object ``data`` with ``key`` given once more, first: ``{"key": value, ...}``."""
    assert data.startswith(b"{")
    return b"{" + dump(key) + b": " + dump(value) + b", " + data[1:]


def json_key_twice(tmp: Path) -> Case:
    """An Inspect .json log saying its status twice: "error" first, "success" last."""
    path = tmp / "log.json"
    doc = orjson.loads(JSON_LOG.read_bytes())
    path.write_bytes(twice(dump(doc), "status", "error"))
    return "inspect", path, path, "field 'status' is given twice"


def eval_key_twice(tmp: Path) -> Case:
    members = eval_members()
    path = write_eval(tmp / "log.eval", members | {
        "header.json": twice(members["header.json"], "status", "error")})
    return "inspect", path, path, "field 'status' is given twice"


def lm_key_twice(where: str) -> Callable[[Path], Case]:
    """lm-eval's results file giving model_name twice, or a samples line giving doc_id twice."""
    def build(tmp: Path) -> Case:
        _, out, named, _ = lm_eval(lambda d: None, "")(tmp)
        if where == "results":
            named.write_bytes(twice(named.read_bytes(), "model_name", "another-model"))
            return "lm-eval", out, named, "field 'model_name' is given twice"
        samples = next(out.glob("samples_*.jsonl"))
        lines = samples.read_bytes().splitlines()
        lines[2] = twice(lines[2], "doc_id", 999)
        samples.write_bytes(b"\n".join(lines) + b"\n")
        return "lm-eval", out, samples, "line 3: field 'doc_id' is given twice"
    return build


def jsonl_key_twice(tmp: Path) -> Case:
    path = tmp / "items.jsonl"
    path.write_bytes(dump({"id": "q0", "score": 1}) + b"\n"
                     + twice(dump({"id": "q1", "score": 1}), "score", 0) + b"\n")
    return "jsonl", path, path, "field 'score' is given twice"


def jsonl_items(tmp: Path) -> Case:
    """Items whose sample number is beyond 2^53: no ledger entry can hold it exactly."""
    path = tmp / "items.jsonl"
    path.write_bytes(b"".join(dump({"id": f"q{i}", "score": 1, "sample": sample}) + b"\n"
                              for i, sample in enumerate((0, 2**60))))
    return "jsonl", path, path, "line 2: field sample"


def rename_task(doc: dict[str, Any], new: str) -> None:
    for table in ("results", "configs"):
        doc[table][new] = doc[table].pop("synth_mc")


def duplicate_id(doc: dict[str, Any]) -> None:
    ids = doc["eval"]["dataset"]["sample_ids"]
    ids[1] = ids[0]


def nested(depth: int) -> list[Any]:
    """``[[[...]]]``, ``depth`` lists deep."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def setter(*keys: str | int, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        for key in keys[:-1]:
            doc = doc[key]
        doc[keys[-1]] = value
    return change


CASES: dict[str, Callable[[Path], Case]] = {
    # Inspect .json log
    "json-version-list": inspect_json(setter("version", value=[2]), "field version"),
    "json-status-list": inspect_json(setter("status", value=[]), "field status"),
    "json-status-object": inspect_json(setter("status", value={"a": 1}), "field status"),
    "json-task-list": inspect_json(setter("eval", "task", value=["arith"]), "field eval.task"),
    "json-task-surrogate": inspect_json(setter("eval", "task", value="ar\ud800ith"),
                                        "field eval.task"),
    "json-epochs-1e12": inspect_json(setter("eval", "config", "epochs", value=1e12),
                                     "field eval.config.epochs"),
    "json-epochs-zero": inspect_json(setter("eval", "config", "epochs", value=0),
                                     "field eval.config.epochs"),
    "json-epochs-list": inspect_json(setter("eval", "config", "epochs", value=[2]),
                                     "field eval.config.epochs"),
    "json-sample-ids-twice": inspect_json(duplicate_id, "field eval.dataset.sample_ids"),
    "json-scorer-too-deep": inspect_json(setter("eval", "scorers", 0, "options",
                                                value=nested(300)), "field eval.scorers[0]"),
    "json-score-name-surrogate": inspect_json(
        setter("samples", 1, "scores", value={"m\ud800": {"value": "C"}}),
        "field samples[1].scores.m\\ud800"),
    # Inspect .eval archive: its header.json member, and a member's zstd frame
    "eval-version-list": inspect_eval(setter("version", value=[2]), "field version"),
    "eval-status-object": inspect_eval(setter("status", value={}), "field status"),
    "eval-headline-metric-list": inspect_eval(
        setter("results", "headline", "metric", value=["accuracy"]),
        "field results.headline.metric"),
    "eval-metrics-list": inspect_eval(setter("results", "scores", 0, "metrics", value=[0.5]),
                                      "field results.scores[0].metrics"),
    "eval-metric-value-list": inspect_eval(
        setter("results", "scores", 0, "metrics", "accuracy", "value", value=[0.5]),
        "field results.scores[0].metrics.accuracy.value"),
    "eval-metric-string": inspect_eval(
        setter("results", "scores", 0, "metrics", "stderr", value="0.02"),
        "field results.scores[0].metrics.stderr"),
    "eval-epochs-1e12": inspect_eval(setter("eval", "config", "epochs", value=1e12),
                                     "field eval.config.epochs"),
    "eval-zstd-bomb": eval_zstd_bomb,
    # lm-evaluation-harness: the results file and a samples line
    "lm-model-name-surrogate": lm_eval(setter("model_name", value="dummy-\ud800"),
                                       "field model_name"),
    "lm-config-surrogate": lm_eval(setter("configs", "synth_mc", "description", value="\udfff"),
                                   "field configs.synth_mc.description"),
    "lm-task-with-slash": lm_eval(lambda d: rename_task(d, "synth/mc"), "synth/mc"),
    "lm-config-too-deep": lm_eval(setter("configs", "synth_mc", "dataset_kwargs",
                                         value=nested(300)), "field configs.synth_mc"),
    "lm-filter-too-deep": lm_eval(lambda d: None, "line 1: field filter",
                                  line=lambda first: first.update(filter=nested(900))),
    "lm-samples-line-surrogate": lm_eval(lambda d: None, "line 1: field doc.\\ud800",
                                         line=lambda first: first.update(doc={"\ud800": 1})),
    # JSON Lines items
    "jsonl-sample-beyond-2-53": jsonl_items,
    # a key given twice in one object: the first and the last value are two readings of it
    "json-key-twice": json_key_twice,
    "eval-header-key-twice": eval_key_twice,
    "lm-results-key-twice": lm_key_twice("results"),
    "lm-samples-key-twice": lm_key_twice("samples"),
    "jsonl-key-twice": jsonl_key_twice,
}


# ---------------------------------------------------------------- the ledger, before and after


def head() -> tuple[int, str]:
    """(entry count, head digest) of the ledger: equal before and after means nothing written."""
    r = run_cli("export")
    assert r.code == 0, r.err
    lines = [orjson.loads(line) for line in r.out.splitlines()]
    return len(lines), lines[-1]["digest"]


@pytest.mark.parametrize("case", list(CASES))
def test_append_from_hostile_output_is_refused(ledger_dir: Path, tmp_path: Path,
                                               case: str) -> None:
    r = run_cli("plan", str(write_json(ledger_dir / "arith.plan.json",
                                       plan_body("arith", arms=("a", "b")))))
    assert r.code == 0, r.err
    source, path, named, field = CASES[case](tmp_path)
    before = head()
    r = run_cli("append", "--from", source, str(path), "--plan", "arith", "--arm", "a")
    assert r.code == 2, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("logbook: "), r.err
    assert str(named) in lines[0], lines[0]
    assert head() == before
    if source == "inspect" and HAS_INSPECT_AI:
        # With inspect_ai installed (as in CI) the CLI reads through it, and its refusal names
        # the file but seldom the field; the built-in reader must still name the field.
        with pytest.raises(InputError) as refusal:
            inspect_log.read_runs(path, reader="zstd")
        assert str(named) in str(refusal.value) and field in str(refusal.value), refusal.value
    else:
        assert field in lines[0], lines[0]
