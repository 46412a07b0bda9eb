"""Damaged or unsupported harness outputs give one InputError naming the file, never a crash.

Each broken input is built in tmp_path from a real fixture.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import write_eval

from logbook.errors import EnvironmentProblem, InputError
from logbook.ingest import inspect as inspect_log
from logbook.ingest import read_runs
from logbook.ingest._eval_zip import EvalArchive

FIXTURES = Path(__file__).parents[1] / "fixtures"
LM_RUN = FIXTURES / "lm_eval/run-seed1"
EVAL_ERRORS = next((FIXTURES / "inspect/run-errors").glob("*.eval"))
EVAL_FAILED = next((FIXTURES / "inspect/run-failed").glob("*.eval"))
JSON_FAILED = next((FIXTURES / "inspect/run-failed").glob("*.json"))


# ---------------------------------------------------------------- helpers


def copy_lm_run(tmp_path: Path) -> tuple[Path, Path]:
    for src in LM_RUN.iterdir():
        (tmp_path / src.name).write_bytes(src.read_bytes())
    return next(tmp_path.glob("results_*.json")), next(tmp_path.glob("samples_*.jsonl"))


def eval_members(path: Path) -> dict[str, bytes]:
    """Uncompressed members of a .eval archive, in archive order."""
    with EvalArchive(path) as archive:
        return {name: archive.read(name) for name in archive.infos}


def with_header(members: dict[str, bytes], **changes: Any) -> dict[str, bytes]:
    header = orjson.loads(members["header.json"])
    header.update(changes)
    return members | {"header.json": orjson.dumps(header)}


# ---------------------------------------------------------------- lm-evaluation-harness


def test_truncated_results_json(tmp_path: Path) -> None:
    results, _ = copy_lm_run(tmp_path)
    results.write_bytes(results.read_bytes()[:1000])
    with pytest.raises(InputError, match="not valid JSON") as exc:
        read_runs("lm-eval", results)
    assert str(exc.value).startswith(str(results))


def test_samples_file_with_one_line_removed(tmp_path: Path) -> None:
    _, samples = copy_lm_run(tmp_path)
    lines = samples.read_bytes().splitlines(keepends=True)
    samples.write_bytes(b"".join(lines[:57] + lines[58:]))
    with pytest.raises(InputError, match=r"has 199 documents .* n-samples effective = 200") as exc:
        read_runs("lm-eval", tmp_path)
    assert str(exc.value).startswith(str(samples))


def test_samples_file_with_truncated_last_line(tmp_path: Path) -> None:
    _, samples = copy_lm_run(tmp_path)
    samples.write_bytes(samples.read_bytes()[:-300])
    with pytest.raises(InputError, match=r"line 200: not valid JSON") as exc:
        read_runs("lm-eval", tmp_path)
    assert str(samples) in str(exc.value)


def test_samples_file_missing(tmp_path: Path) -> None:
    _, samples = copy_lm_run(tmp_path)
    samples.unlink()
    with pytest.raises(InputError, match="--log_samples") as exc:
        read_runs("lm-eval", tmp_path)
    assert str(exc.value).startswith(str(samples))


@pytest.mark.parametrize(("version", "found"), [(None, "is missing"), ("0.3.0", "is '0.3.0'"),
                                                (4, "is 4")])
def test_results_of_unknown_version(tmp_path: Path, version: Any, found: str) -> None:
    results, _ = copy_lm_run(tmp_path)
    doc = orjson.loads(results.read_bytes())
    del doc["lm_eval_version"]
    if version is not None:
        doc["lm_eval_version"] = version
    results.write_bytes(orjson.dumps(doc))
    with pytest.raises(InputError, match=f"field lm_eval_version {found}") as exc:
        read_runs("lm-eval", results)
    assert str(exc.value).startswith(str(results))


@pytest.mark.parametrize("mutate", [
    lambda d: d.pop("results"),
    lambda d: d.update(configs=[]),
    lambda d: d.update({"n-samples": "many", "task_hashes": 3, "config": None}),
    lambda d: d["configs"]["synth_mc"].update(metric_list=None, filter_list=7),
    lambda d: d.update(results={"synth_mc": "x"}),
], ids=["no-results", "configs-list", "odd-tables", "odd-config", "results-not-object"])
def test_results_with_odd_fields_never_crash(tmp_path: Path, mutate: Any) -> None:
    results, _ = copy_lm_run(tmp_path)
    doc = orjson.loads(results.read_bytes())
    mutate(doc)
    results.write_bytes(orjson.dumps(doc))
    try:
        runs = read_runs("lm-eval", results)
    except InputError as exc:
        assert str(exc).startswith(str(results))
    else:
        assert runs and all(len(r["outcomes"]["id"]) == 200 for r in runs)


def test_results_not_an_object_and_missing_file(tmp_path: Path) -> None:
    results, _ = copy_lm_run(tmp_path)
    results.write_bytes(b"[]")
    with pytest.raises(InputError, match="expected a JSON object"):
        read_runs("lm-eval", results)
    with pytest.raises(InputError, match="file not found"):
        read_runs("lm-eval", tmp_path / "results_nope.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no results_"):
        read_runs("lm-eval", tmp_path / "empty")


def test_nan_in_results_is_read(tmp_path: Path) -> None:
    """Python's json writes NaN for an undefined stderr; orjson refuses it, we read it as absent."""
    results, _ = copy_lm_run(tmp_path)
    text = results.read_text()
    results.write_text(text.replace('"acc_stderr,none": 0.03292865746446489',
                                    '"acc_stderr,none": NaN'))
    (run,) = read_runs("lm-eval", results)
    assert "stderr" not in run["reported"] and run["reported"]["value"] == 0.315


def test_unknown_metric_requested(tmp_path: Path) -> None:
    copy_lm_run(tmp_path)
    with pytest.raises(InputError, match="no line has a value for metric 'f1'"):
        read_runs("lm-eval", tmp_path, metric="f1")


def test_missing_item_metric_is_missing_not_zero(tmp_path: Path) -> None:
    results, samples = copy_lm_run(tmp_path)
    lines = samples.read_bytes().splitlines()
    line = orjson.loads(lines[3])
    del line["acc"]
    lines[3] = orjson.dumps(line)
    samples.write_bytes(b"\n".join(lines))
    # lm-eval's own figure is then the mean over the documents that have a value (else the
    # file is refused as edited: tests/ledger/test_intake.py)
    kept = [orjson.loads(raw)["acc"] for i, raw in enumerate(lines) if i != 3]
    doc = orjson.loads(results.read_bytes())
    doc["results"]["synth_mc"]["acc,none"] = sum(kept) / len(kept)
    results.write_bytes(orjson.dumps(doc))
    (run,) = read_runs("lm-eval", results)
    o = run["outcomes"]
    assert o["score"][3] is None and o["error"][3] == "no acc value logged"
    assert sum(e is not None for e in o["error"]) == 1


# ---------------------------------------------------------------- Inspect AI


def test_rewritten_eval_reads_the_same(tmp_path: Path) -> None:
    """The test writer makes archives the reader treats like Inspect's own."""
    copy = write_eval(tmp_path / "copy.eval", eval_members(EVAL_ERRORS))
    (mine,), (theirs,) = read_runs("inspect", copy), read_runs("inspect", EVAL_ERRORS)
    # another file (its name and bytes) holding the same Inspect run (its eval and run ids)
    assert mine.pop("source")["ids"] == theirs.pop("source")["ids"]
    assert mine == theirs


@pytest.mark.parametrize("version", [1, 3, None, "2"])
def test_eval_of_unsupported_version(tmp_path: Path, version: Any) -> None:
    path = write_eval(tmp_path / "v.eval", with_header(eval_members(EVAL_ERRORS), version=version))
    with pytest.raises(InputError, match=f"field version is {version!r}") as exc:
        inspect_log.read_runs(path, reader="zstd")
    assert str(exc.value).startswith(str(path))


def test_json_log_of_unsupported_version(tmp_path: Path) -> None:
    doc = orjson.loads(JSON_FAILED.read_bytes())
    doc["version"] = 9
    path = tmp_path / "log.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(InputError, match="field version is 9") as exc:
        inspect_log.read_runs(path, reader="zstd")
    assert str(exc.value).startswith(str(path))
    with pytest.raises(InputError, match="version") as exc:  # whichever reader is installed
        read_runs("inspect", path)
    assert str(exc.value).startswith(str(path))


@pytest.mark.parametrize("cut", [100, 400_000, -30])
def test_truncated_eval(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "cut.eval"
    path.write_bytes(EVAL_ERRORS.read_bytes()[:cut])
    with pytest.raises(InputError) as exc:
        read_runs("inspect", path)
    assert str(exc.value).startswith(str(path))


def test_corrupt_member_in_eval(tmp_path: Path) -> None:
    data = bytearray(EVAL_ERRORS.read_bytes())
    for i in range(5000, 5040):
        data[i] ^= 0xFF
    path = tmp_path / "flip.eval"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="member samples/") as exc:
        inspect_log.read_runs(path, reader="zstd")
    assert str(exc.value).startswith(str(path))
    with pytest.raises(InputError) as exc:
        read_runs("inspect", path)
    assert str(exc.value).startswith(str(path))


def test_truncated_json_log(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(JSON_FAILED.read_bytes()[:5000])
    with pytest.raises(InputError, match="not valid JSON"):
        inspect_log.read_runs(path, reader="zstd")
    with pytest.raises(InputError) as exc:
        read_runs("inspect", path)
    assert str(exc.value).startswith(str(path))


def test_not_a_log(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(InputError, match="expected an Inspect"):
        read_runs("inspect", tmp_path / "notes.txt")
    with pytest.raises(InputError, match=r"no Inspect \.eval or \.json log"):
        read_runs("inspect", tmp_path)
    with pytest.raises(InputError, match="file not found"):
        inspect_log.read_runs(tmp_path / "gone.eval", reader="zstd")
    (tmp_path / "other.json").write_bytes(b'{"a": 1}')
    with pytest.raises(InputError, match="field eval is missing"):
        inspect_log.read_runs(tmp_path / "other.json", reader="zstd")


def test_eval_without_zstandard_or_inspect_ai(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(EnvironmentProblem, match=r"needs zstandard, which is missing "
                       r"\(zstandard is a dependency of logbook: reinstall it") as exc:
        read_runs("inspect", EVAL_ERRORS)
    assert str(exc.value).startswith(str(EVAL_ERRORS))
    assert read_runs("inspect", JSON_FAILED)  # a .json log needs neither


def test_cancelled_eval_is_aborted(tmp_path: Path) -> None:
    members = with_header(eval_members(EVAL_ERRORS), status="cancelled", results=None)
    (run,) = read_runs("inspect", write_eval(tmp_path / "c.eval", members))
    assert run["status"] == "aborted" and run["reason"] == "evaluation cancelled"
    assert len(run["outcomes"]["id"]) == 400


def test_eval_that_never_finished(tmp_path: Path) -> None:
    """No header.json (the process died): status 'started', planned items counted missing."""
    members = eval_members(EVAL_FAILED)
    del members["header.json"]
    (run,) = read_runs("inspect", write_eval(tmp_path / "s.eval", members))
    assert run["status"] == "aborted" and "never finished" in run["reason"]
    errors = run["outcomes"]["error"]
    assert len(errors) == 400 and errors.count(inspect_log.NOT_RUN) == 391


def test_odd_score_values_are_missing_not_zero(tmp_path: Path) -> None:
    doc = orjson.loads(JSON_FAILED.read_bytes())
    doc["samples"][1]["scores"]["match"]["value"] = "maybe"
    doc["samples"][2]["scores"]["match"]["value"] = None
    doc["samples"][3]["scores"]["match"]["value"] = {"correct": "C", "style": 0.5}
    path = tmp_path / "odd.json"
    path.write_bytes(orjson.dumps(doc).replace(b'"value":null', b'"value":NaN'))
    (run,) = read_runs("inspect", path)
    o = run["outcomes"]
    by_key = {(i, s): (v, e) for i, s, v, e in zip(o["id"], o["sample"], o["score"], o["error"],
                                                   strict=True)}
    assert by_key[("arith-001", 1)] == (None, "score value 'maybe' is not a number")
    assert by_key[("arith-002", 1)] == (None, "unscored (score value is null or NaN)")
    assert by_key[("arith-003", 1)] == (1.0, None)
    assert o["metric"] == "match.correct" and o["extra"]["style"][o["id"].index("arith-003")] == 0.5


def test_unknown_scorer_requested() -> None:
    with pytest.raises(InputError, match="no scorer named 'f1'"):
        read_runs("inspect", EVAL_ERRORS, metric="f1")


@pytest.mark.parametrize("field", ["id", "epoch"])
def test_sample_with_bad_field(tmp_path: Path, field: str) -> None:
    doc = orjson.loads(JSON_FAILED.read_bytes())
    doc["samples"][0][field] = [1]
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(InputError, match=f"sample 0: field {field}"):
        inspect_log.read_runs(path, reader="zstd")


def test_missing_jsonl_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_runs("jsonl", tmp_path / "none.jsonl")
    with pytest.raises(InputError, match="has no items"):
        (tmp_path / "blank.jsonl").write_bytes(b"\n \n")
        read_runs("jsonl", tmp_path / "blank.jsonl")
