"""Ingest every real harness output in tests/fixtures and check it against MANIFEST.json.

MANIFEST.json holds what each harness itself reported and counted; an ingested run must give
back the same item counts, missing counts and metric values from its per-item outcomes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logbook.errors import InputError
from logbook.format.canonical import canonical_bytes
from logbook.ingest import ADAPTERS, SOURCES, adapter_for, jsonl, read_runs
from logbook.ingest import inspect as inspect_log
from logbook.ingest.adapter import Adapter
from logbook.ingest.inspect_reader import Reader

FIXTURES = Path(__file__).parents[1] / "fixtures"
MANIFEST: dict[str, Any] = orjson.loads((FIXTURES / "MANIFEST.json").read_bytes())["files"]
LM_RESULTS = sorted(k for k, v in MANIFEST.items() if v["kind"] == "lm_eval.results")
INSPECT_LOGS = sorted(k for k, v in MANIFEST.items()
                      if v["kind"] in ("inspect.eval_log", "inspect.json_log"))
READERS = ["zstd"] + (["inspect_ai"] if importlib.util.find_spec("inspect_ai") else [])


def mean_and_stderr(values: list[float]) -> tuple[float, float]:
    n = len(values)
    m = sum(values) / n
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1) / n)


def check_shape(run: dict[str, Any]) -> None:
    """Invariants every body holds: equal columns, string ids, a reason for each gap."""
    assert "plan" not in run and "arm" not in run
    canonical_bytes(run)  # the body can be signed as it is
    o = run["outcomes"]
    n = len(o["id"])
    for col in ("score", "error", "sample", "cluster"):
        assert col not in o or len(o[col]) == n
    for col in o.get("extra", {}).values():
        assert len(col) == n
    assert all(isinstance(i, str) for i in o["id"])
    errors = o.get("error", [None] * n)
    for score, error in zip(o["score"], errors, strict=True):
        assert (score is None) == (error is not None)
        assert score is None or (isinstance(score, float) and math.isfinite(score))
    if run["status"] != "completed":
        assert run["reason"]


def test_sources_are_listed() -> None:
    assert SOURCES == ("lm-eval", "inspect", "jsonl")
    with pytest.raises(InputError, match="not one of"):
        read_runs("helm", FIXTURES)


def test_each_source_has_one_adapter_of_its_name() -> None:
    assert tuple(ADAPTERS) == SOURCES
    for source in SOURCES:
        harness = adapter_for(source)
        assert isinstance(harness, Adapter) and harness.name == source and harness.globs
    with pytest.raises(InputError) as refused:
        adapter_for("helm", "--from")
    assert str(refused.value) == "--from 'helm' is not one of lm-eval, inspect, jsonl"


@pytest.mark.parametrize(("source", "yes", "no"), [
    ("lm-eval", "results_2026-11-29T18-00-00.json", "samples_arc_2026-11-29T18-00-00.jsonl"),
    ("inspect", "2026-11-29T18-13-40-00-00_sums_AWmXtCZJkqs6wiwnaQaHoB.eval", "notes.txt"),
    ("jsonl", "items.jsonl", "items.json"),
])
def test_an_adapter_recognises_its_outputs(source: str, yes: str, no: str,
                                           tmp_path: Path) -> None:
    harness = adapter_for(source)
    assert harness.recognises(Path("out") / yes) and not harness.recognises(Path("out") / no)
    (tmp_path / "sub").mkdir()
    for name in (yes, no, f"sub/{yes}"):
        (tmp_path / name).write_text("{}")
    # lm-eval writes into a folder per model; the others write where they are told
    below = {tmp_path / "sub" / yes} if source == "lm-eval" else set()
    assert harness.outputs(tmp_path) == {tmp_path / yes} | below


def test_the_registry_reads_what_the_adapter_reads() -> None:
    rel = LM_RESULTS[0]
    assert read_runs("lm-eval", FIXTURES / rel) == adapter_for("lm-eval").read_runs(
        FIXTURES / rel)


# ---------------------------------------------------------------- lm-evaluation-harness


@pytest.mark.parametrize("rel", LM_RESULTS)
def test_lm_eval_matches_reported(rel: str) -> None:
    entry = MANIFEST[rel]
    runs = read_runs("lm-eval", FIXTURES / rel)
    assert {r["task"] for r in runs} == set(entry["tasks"])
    for run in runs:
        check_shape(run)
        task = entry["tasks"][run["task"]]
        metric, reported = task["metric"], task["reported"]
        o = run["outcomes"]
        assert run["status"] == "completed"
        assert o["metric"] == metric
        assert len(o["id"]) == task["n_records_logged"] == task["n_items"]
        assert sorted(o["id"], key=int) == [str(i) for i in range(task["n_items"])]
        assert sum(s is None for s in o["score"]) == task["n_items_unscored"]
        assert "error" not in o and "sample" not in o
        mean, stderr = mean_and_stderr([s for s in o["score"] if s is not None])
        assert mean == pytest.approx(reported[f"{metric},none"], abs=1e-12)
        assert stderr == pytest.approx(reported[f"{metric}_stderr,none"], rel=1e-9)
        assert run["reported"]["value"] == reported[f"{metric},none"]
        assert run["reported"]["stderr"] == reported[f"{metric}_stderr,none"]
        assert run["reported"]["results"] == reported
        app = run["apparatus"]
        assert app["harness"] == {"name": "lm-evaluation-harness",
                                  "version": entry["harness_version"]}
        assert app["model"] == entry["model_name"] and app["engine"] == entry["model"]
        assert app["decoding"]["seed"] == entry["seed"]
        # the suite is the data (its items' doc and target hashes), the prompt is apparatus
        results = orjson.loads((FIXTURES / rel).read_bytes())
        assert app["dataset_hash"] == lm_eval_suite_identity(FIXTURES / rel, run["task"])
        assert app["prompt_hash"] == "sha256:" + results["task_hashes"][run["task"]]
        assert app["harness_config"]["num_fewshot"] == 0
        assert app["placement"] == {"requested": results["config"]["device"]}
        assert run["started"].startswith("2026-11-29T")


def lm_eval_suite_identity(results: Path, task: str) -> str:
    """docs/recording.md's lm-eval suite identity, recomputed from the samples file with the
    standard library: SHA-256 of the JSON array of sorted [doc_id, doc_hash, target_hash]."""
    import json

    stamp = results.name.removeprefix("results_").removesuffix(".json")
    lines = [json.loads(raw) for raw in
             results.with_name(f"samples_{task}_{stamp}.jsonl").read_text().splitlines()]
    triples = sorted([str(x["doc_id"]), x["doc_hash"], x["target_hash"]] for x in lines)
    text = json.dumps(triples, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_lm_eval_suite_identity_is_the_data_not_the_prompt(tmp_path: Path) -> None:
    """Another prompt (lm-eval's task hash, as few-shot examples change it) is another
    prompt_hash, the same dataset_hash; another target is another suite; samples without
    doc/target hashes are identified by their sorted ids."""
    folder = FIXTURES / "lm_eval/run-seed1"
    (results,) = folder.glob("results_*.json")
    (samples,) = folder.glob("samples_*.jsonl")
    (base,) = read_runs("lm-eval", results)
    doc = orjson.loads(results.read_bytes())
    lines = [orjson.loads(raw) for raw in samples.read_bytes().splitlines()]

    def variant(name: str, hashes: str, edit: Any) -> dict[str, Any]:
        where = tmp_path / name
        where.mkdir()
        (where / results.name).write_bytes(orjson.dumps(
            {**doc, "task_hashes": {"synth_mc": hashes}}))
        (where / samples.name).write_bytes(b"\n".join(
            orjson.dumps(edit(dict(line))) for line in lines))
        (run,) = read_runs("lm-eval", where / results.name)
        return dict(run["apparatus"])

    other_prompt = variant("prompt", "ab" * 32, lambda x: {**x, "prompt_hash": "cd" * 32})
    assert other_prompt["dataset_hash"] == base["apparatus"]["dataset_hash"]
    assert other_prompt["prompt_hash"] == "sha256:" + "ab" * 32 != base["apparatus"][
        "prompt_hash"]
    first = lines[0]["doc_id"]
    other_target = variant("target", "ab" * 32, lambda x: {
        **x, "target_hash": "ef" * 32 if x["doc_id"] == first else x["target_hash"]})
    assert other_target["dataset_hash"] != base["apparatus"]["dataset_hash"]
    bare = variant("bare", "ab" * 32, lambda x: {k: v for k, v in x.items()
                                                 if k != "doc_hash"})
    ids = sorted(str(line["doc_id"]) for line in lines)
    assert bare["dataset_hash"] == "sha256:" + hashlib.sha256(
        orjson.dumps(ids)).hexdigest()


def test_lm_eval_group_suite_identity_is_over_its_subtasks_items() -> None:
    """A group's identity is the same rule over its items, ids subtask/doc_id; each subtask
    run of another output of those tasks keeps its own."""
    import json

    folder = FIXTURES / "lm_eval/run-group-seed5"
    (results,) = folder.glob("results_*.json")
    (group,) = read_runs("lm-eval", results)
    stamp = results.name.removeprefix("results_").removesuffix(".json")
    triples = []
    for task in ("synth_mc", "synth_mc2"):
        for raw in (folder / f"samples_{task}_{stamp}.jsonl").read_text().splitlines():
            x = json.loads(raw)
            triples.append([f"{task}/{x['doc_id']}", x["doc_hash"], x["target_hash"]])
    assert len(triples) == len(group["outcomes"]["id"]) == 400
    text = json.dumps(sorted(triples), separators=(",", ":"))
    assert group["apparatus"]["dataset_hash"] == "sha256:" + hashlib.sha256(
        text.encode()).hexdigest()
    assert group["apparatus"]["harness_config"]["num_fewshot"] == 0
    assert group["apparatus"]["prompt_hash"].startswith("sha256:")


def test_lm_eval_directory_equals_file() -> None:
    rel = LM_RESULTS[0]
    assert read_runs("lm-eval", (FIXTURES / rel).parent) == read_runs("lm-eval", FIXTURES / rel)


def test_lm_eval_generation_task_is_greedy_and_mc_has_no_decoding_policy() -> None:
    gen = read_runs("lm-eval", FIXTURES / "lm_eval/run-gen-seed1")[0]["apparatus"]
    assert gen["decoding"] == {"temperature": 0.0, "seed": 1, "do_sample": False}
    mc = read_runs("lm-eval", FIXTURES / "lm_eval/run-seed1")[0]["apparatus"]
    assert mc["decoding"] == {"seed": 1}
    assert mc["python"] == "3.11.7"


def test_lm_eval_seeds_share_apparatus_except_seed() -> None:
    """Runs that differ only by --seed differ in apparatus only by their seeds."""
    apps = [read_runs("lm-eval", FIXTURES / f"lm_eval/run-seed{i}")[0]["apparatus"]
            for i in (1, 2, 3)]
    for app in apps:
        del app["decoding"]["seed"], app["harness_config"]["seeds"]
    assert apps[0] == apps[1] == apps[2]


def test_lm_eval_secrets_never_reach_the_body(tmp_path: Path) -> None:
    rel = LM_RESULTS[0]
    for src in (FIXTURES / rel).parent.iterdir():
        (tmp_path / src.name).write_bytes(src.read_bytes())
    results = tmp_path / Path(rel).name
    doc = orjson.loads(results.read_bytes())
    doc["config"]["model_args"] = {"pretrained": "dummy-model", "api_key": "sk-SECRET1",
                                   "HF_TOKEN": "hf_SECRET2", "tokenizer": "tok/x",
                                   "base_url": "https://me:SECRET3@host/v1", "max_tokens": 5}
    results.write_bytes(orjson.dumps(doc))
    (run,) = read_runs("lm-eval", results)
    text = orjson.dumps(run).decode()
    assert "SECRET" not in text
    args = run["apparatus"]["harness_config"]["model_args"]
    assert args["api_key"] == args["HF_TOKEN"] == "[redacted]"
    assert args["tokenizer"] == "tok/x" and args["max_tokens"] == 5
    assert args["base_url"] == "https://[redacted]@host/v1"


def test_lm_eval_model_args_string_form(tmp_path: Path) -> None:
    rel = LM_RESULTS[0]
    for src in (FIXTURES / rel).parent.iterdir():
        (tmp_path / src.name).write_bytes(src.read_bytes())
    results = tmp_path / Path(rel).name
    doc = orjson.loads(results.read_bytes())
    doc["config"]["model_args"] = "pretrained=m,dtype=bfloat16,token=hf_SECRET"
    results.write_bytes(orjson.dumps(doc))
    (run,) = read_runs("lm-eval", results)
    assert "SECRET" not in orjson.dumps(run).decode()
    assert run["apparatus"]["weights_precision"] == "bfloat16"


# ---------------------------------------------------------------- Inspect AI


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("rel", INSPECT_LOGS)
def test_inspect_matches_reported(rel: str, reader: Reader) -> None:
    entry = MANIFEST[rel]
    (run,) = inspect_log.read_runs(FIXTURES / rel, reader=reader)
    check_shape(run)
    o = run["outcomes"]
    assert run["task"] == entry["task"] and run["apparatus"]["model"] == entry["model"]
    assert o["metric"] == "match.accuracy"  # scorer and metric, one name (issue 13)
    assert len(o["id"]) == entry["n_records_expected"]
    assert len(set(o["id"])) == entry["n_items"]
    assert sorted(set(o["sample"])) == list(range(1, entry["epochs"] + 1))
    errors = o.get("error", [None] * len(o["id"]))
    not_run = [e for e in errors if e == inspect_log.NOT_RUN]
    errored = sorted([i, s, e] for i, s, e in zip(o["id"], o["sample"], errors, strict=True)
                     if e is not None and e != inspect_log.NOT_RUN)
    assert len(not_run) == entry["n_records_missing"]
    assert [[i, s] for i, s, _ in errored] == [r[:2] for r in entry["errored_records"]]
    assert all(e.startswith(r[2]) for (_, _, e), r in zip(errored, entry["errored_records"],
                                                          strict=True))
    per_item: dict[str, list[float]] = defaultdict(list)
    for item, score in zip(o["id"], o["score"], strict=True):
        if score is not None:
            per_item[item].append(score)
    assert sum(map(len, per_item.values())) == entry["n_records_scored"]
    assert entry["n_items"] - len(per_item) == entry["n_items_unscored"]
    assert run["apparatus"]["decoding"]["seed"] == entry["seed"]
    assert run["apparatus"]["harness"] == {"name": "inspect_ai",
                                           "version": entry["harness_version"]}
    reported = entry["reported"]
    assert run["reported"]["status"] == reported["status"]
    if reported["status"] == "success":
        assert run["status"] == "completed" and "reason" not in run
        (score_entry,) = reported["results"]["scores"]
        accuracy, stderr = mean_and_stderr([sum(v) / len(v) for v in per_item.values()])
        assert accuracy == pytest.approx(score_entry["metrics"]["accuracy"], abs=1e-12)
        assert stderr == pytest.approx(score_entry["metrics"]["stderr"], rel=1e-9)
        assert run["reported"]["metrics"] == score_entry["metrics"]
        assert run["reported"]["value"] == score_entry["metrics"]["accuracy"]
        assert run["reported"]["scored_samples"] == score_entry["scored_samples"] == len(per_item)
        assert run["reported"]["completed_samples"] == reported["results"]["completed_samples"]
    else:
        assert run["status"] == "failed"
        assert run["reason"] == reported["error"] == run["reported"]["error"]


@pytest.mark.skipif(len(READERS) < 2, reason="inspect_ai is not installed")
@pytest.mark.parametrize("rel", INSPECT_LOGS)
def test_inspect_readers_agree(rel: str) -> None:
    assert (inspect_log.read_runs(FIXTURES / rel, reader="zstd")
            == inspect_log.read_runs(FIXTURES / rel, reader="inspect_ai"))


def test_inspect_eval_and_converted_json_agree_and_directory_dedupes() -> None:
    folder = FIXTURES / "inspect/run-failed"
    (from_eval,) = inspect_log.read_runs(next(folder.glob("*.eval")), reader="zstd")
    (from_json,) = inspect_log.read_runs(next(folder.glob("*.json")), reader="zstd")
    assert read_runs("inspect", folder) == [from_eval]
    # two files (names and bytes differ) of one Inspect run (the same eval and run ids)
    assert from_eval.pop("source")["ids"] == from_json.pop("source")["ids"]
    assert from_eval == from_json


def test_inspect_directory_of_runs() -> None:
    runs = [r for d in ("run-main", "run-errors") for r in
            read_runs("inspect", FIXTURES / "inspect" / d)]
    assert [r["apparatus"]["decoding"]["seed"] for r in runs] == [1, 2]


@pytest.mark.parametrize(("value", "expected"), [
    ("C", 1.0), ("I", 0.0), ("P", 0.5), ("N", 0.0), ("yes", 1.0), ("No", 0.0),
    ("TRUE", 1.0), ("false", 0.0), ("0.25", 0.25), ("3", 3.0), (True, 1.0), (False, 0.0),
    (1, 1.0), (0.5, 0.5), ("maybe", None), ([1, 2], None), (None, None),
    (float("nan"), None), ("nan", None),
])
def test_inspect_value_to_float(value: Any, expected: float | None) -> None:
    score, error = inspect_log.value_to_float(value)
    assert score == expected
    assert (error is None) == (expected is not None)


def test_inspect_secrets_never_reach_the_body(tmp_path: Path) -> None:
    src = next((FIXTURES / "inspect/run-failed").glob("*.json"))
    doc = orjson.loads(src.read_bytes())
    doc["eval"]["model_args"] = {"api_key": "sk-SECRET", "base_url": "http://u:SECRET@h"}
    doc["eval"]["task_args"] = {"password": "SECRET", "n": 3}
    path = tmp_path / "log.json"
    path.write_bytes(orjson.dumps(doc))
    (run,) = read_runs("inspect", path)
    assert "SECRET" not in orjson.dumps(run).decode()
    assert run["apparatus"]["harness_config"]["task_args"] == {"password": "[redacted]", "n": 3}


# ---------------------------------------------------------------- generic JSON Lines

ids = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1),
                st.integers(min_value=-(2**53), max_value=2**53))
scores = st.one_of(st.none(), st.booleans(), st.floats(1 - 2.0**53, 2.0**53 - 1),
                   st.integers(min_value=-(10**6), max_value=10**6))
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@st.composite
def jsonl_items(draw: st.DrawFn) -> list[dict[str, Any]]:
    with_sample, with_cluster = draw(st.booleans()), draw(st.booleans())
    items = []
    keys: set[tuple[str, int | None]] = set()
    for _ in range(draw(st.integers(1, 12))):
        item: dict[str, Any] = {"id": draw(ids), "score": draw(scores)}
        if item["score"] is None and draw(st.booleans()):
            item["error"] = draw(texts)
        if with_sample:
            item["sample"] = draw(st.integers(0, 3))
        if with_cluster:
            item["cluster"] = draw(st.one_of(st.integers(0, 5), st.sampled_from(["a", "b"])))
        key = (str(item["id"]), item.get("sample"))
        if key not in keys:
            keys.add(key)
            items.append(item)
    return items


@settings(max_examples=150, deadline=None)
@given(items=jsonl_items(), blank=st.sampled_from([b"\n", b"\n\n", b"\n  \n"]))
def test_jsonl_round_trip(items: list[dict[str, Any]], blank: bytes) -> None:
    data = blank.join(orjson.dumps(item) for item in items) + b"\n"
    o = jsonl.parse(data, "items.jsonl", metric="acc")
    assert o["metric"] == "acc"
    assert o["id"] == [str(i["id"]) for i in items]
    assert o["score"] == [None if i["score"] is None else float(i["score"]) for i in items]
    errors = [(i.get("error") or "no score") if i["score"] is None else None for i in items]
    assert o.get("error", [None] * len(items)) == errors
    if "sample" in items[0]:
        assert o["sample"] == [i["sample"] for i in items]
    else:
        assert "sample" not in o
    if "cluster" in items[0]:
        assert o["cluster"] == [str(i["cluster"]) for i in items]
    canonical_bytes(o)


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "score", "error", "sample", "cluster", "x"]), children,
        max_size=4),
    max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.one_of(st.binary(max_size=40), json_values.map(orjson.dumps)),
                      min_size=1, max_size=5))
def test_jsonl_garbage_gives_input_error_only(lines: list[bytes]) -> None:
    try:
        jsonl.parse(b"\n".join(lines), "garbage.jsonl")
    except InputError as exc:
        assert str(exc).startswith("garbage.jsonl: ")


@pytest.mark.parametrize(("line", "message"), [
    (b'{"id": "a", "score": 1, "error": "boom"}', "both a score and an error"),
    (b'{"id": "a", "score": "high"}', "field score"),
    (b'{"score": 1}', "field id"),
    (b'{"id": "a", "score": 1, "prediction": "x"}', "unknown field 'prediction'"),
    (b'[1, 2]', "expected a JSON object"),
    (b'{"id": "a", "score": 1', "not valid JSON"),
    (b'{"id": "a", "score": 1e400}', "infinity"),
    (b'{"id": "a", "score": 1e17}', "field score"),  # canonical JSON cannot carry it exactly
])
def test_jsonl_bad_line(tmp_path: Path, line: bytes, message: str) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"id": "ok", "score": 0.5}\n\n' + line + b"\n")
    with pytest.raises(InputError, match=message) as exc:
        read_runs("jsonl", path)
    assert str(exc.value).startswith(f"{path}: line 3")


def test_jsonl_run_body(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"id": 1, "score": true}\n{"id": 2, "score": null, "error": "timeout"}\n')
    assert read_runs("jsonl", path, metric="pass") == [{
        "status": "completed", "apparatus": {},
        "source": {"harness": "jsonl", "file": "items.jsonl",
                   "sha256": "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()},
        "outcomes": {"metric": "pass", "id": ["1", "2"], "score": [1.0, None],
                     "error": [None, "timeout"]}}]
