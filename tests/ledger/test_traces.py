"""Item traces (issue 36, item 3): each item's prompt, output, target and verdict, read from real
lm-eval samples and Inspect logs (tests/fixtures, outputs of the real harnesses), kept beside the
ledger as a blob the signed run names, printed by `show RUN --item ID` and `show RUN --items
--where EXPR`; checked by `verify` and carried by `clone`; every bad draft refused with the
ledger unchanged. Built through the public commands."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import draft, write_json
from conftest import run_cli

FIXTURES = Path(__file__).parents[1] / "fixtures"


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _blobs(ledger: Path) -> list[Path]:
    folder = ledger / ".logbook" / "blobs"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def _run(ids: list[str], scores: list[float | None], traces: Any,
         **outcomes: Any) -> dict[str, Any]:
    errors = [None if s is not None else "timed out" for s in scores]
    body = {"plan": None, "status": "completed", "apparatus": {"model": "m", "suite": "s"},
            "outcomes": {"metric": "acc", "id": ids, "score": scores, "error": errors,
                         **outcomes}}
    if traces is not None:
        body["traces"] = traces
    return draft("run", body)


def test_lm_eval_samples_become_traces(ledger_dir: Path) -> None:
    out = ok("append", "--from", "lm-eval", str(FIXTURES / "lm_eval" / "run-gen-seed1"))
    seq = out.split()[0]
    samples = next((FIXTURES / "lm_eval" / "run-gen-seed1").glob("samples_*.jsonl"))
    lines = {str(line["doc_id"]): line for line in _lines(samples)}
    shown = run_cli("show", f"@{seq}", "--items", "--limit", "1000", "--json").json
    assert shown["traces_kept"] and len(shown["items"]) == len(lines)
    for item in shown["items"]:
        line, trace = lines[item["id"]], item["trace"]
        assert trace["prompt"] == line["arguments"]["gen_args_0"]["arg_0"]
        assert trace["output"] == line["filtered_resps"][0]
        assert trace["target"] == line["target"]
        assert trace["verdict"] == f"exact_match = {line['exact_match']}"
        assert item["score"] == line["exact_match"]
    wrong = run_cli("show", f"@{seq}", "--items", "--where", "score=0", "--json").json
    assert wrong["matched"] == sum(1 for line in lines.values() if line["exact_match"] == 0)
    assert all(i["score"] == 0 for i in wrong["items"])
    text = ok("show", f"@{seq}", "--item", "1")
    assert "prompt:\n  Question: Repeat this word exactly: stone\n  Answer:" in text
    assert "target: stone" in text


def test_a_multiple_choice_trace_names_the_continuations(ledger_dir: Path) -> None:
    seq = ok("append", "--from", "lm-eval", str(FIXTURES / "lm_eval" / "run-seed1")).split()[0]
    samples = next((FIXTURES / "lm_eval" / "run-seed1").glob("samples_*.jsonl"))
    line = _lines(samples)[0]
    choices = [line["arguments"][f"gen_args_{k}"]["arg_1"] for k in range(4)]
    lls = [float(r[0]) for r in line["filtered_resps"]]
    best = lls.index(max(lls))
    item = run_cli("show", f"@{seq}", "--item", str(line["doc_id"]), "--json").json["items"][0]
    assert item["trace"]["output"].startswith(f"{choices[best]} (choice {best},")
    assert item["trace"]["target"] == f"{choices[int(line['target'])]} (choice {line['target']})"


def test_inspect_samples_become_traces_per_epoch(ledger_dir: Path) -> None:
    seq = ok("append", "--from", "inspect",
             str(FIXTURES / "inspect" / "run-errors")).split()[0]
    items = run_cli("show", f"@{seq}", "--items", "--limit", "1000", "--json").json["items"]
    assert {i["sample"] for i in items} == {1, 2}
    scored = [i for i in items if i["score"] is not None]
    assert scored and all(i["trace"]["prompt"].startswith("What is ") for i in scored)
    assert all(i["trace"]["output"] and i["trace"]["target"] for i in scored)
    assert all(i["trace"]["verdict"][0] in "CI" for i in scored)
    failed = run_cli("show", f"@{seq}", "--items", "--where", "error!=null", "--json").json
    assert failed["matched"] == sum(1 for i in items if i["score"] is None) > 0
    one = run_cli("show", f"@{seq}", "--item", scored[0]["id"], "--sample",
                  str(scored[0]["sample"]), "--json").json["items"]
    assert [i["sample"] for i in one] == [scored[0]["sample"]]


def test_verify_finds_altered_and_lost_traces(ledger_dir: Path) -> None:
    ok("append", "--from", "inspect", str(FIXTURES / "inspect" / "run-main"))
    ok("verify")
    (blob,) = _blobs(ledger_dir)
    original = blob.read_bytes()
    blob.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
    r = run_cli("verify")
    assert r.code == 1 and "item traces" in r.out + r.err
    shown = run_cli("show", "@1", "--item", "arith-000")
    assert shown.code != 0 and "altered" in shown.err
    blob.unlink()
    r = run_cli("verify")
    assert r.code == 1 and "item traces" in r.out + r.err and "not kept" in r.out + r.err


def test_clone_carries_the_traces(ledger_dir: Path, tmp_path: Path) -> None:
    seq = ok("append", "--from", "lm-eval", str(FIXTURES / "lm_eval" / "run-seed2")).split()[0]
    before = ok("show", f"@{seq}", "--item", "0")
    ok("clone", str(ledger_dir), str(tmp_path / "copy"))
    os.chdir(tmp_path / "copy")
    assert ok("show", f"@{seq}", "--item", "0") == before
    ok("verify")


def test_texts_are_scrubbed_and_cut(ledger_dir: Path) -> None:
    secret = "sk-" + "a1B2c3D4" * 6
    long = "x" * 40_000
    path = write_json(Path("run.json"), _run(["a", "b"], [1.0, 0.0], [
        {"id": "a", "prompt": f"key {secret} here", "output": long}]))
    ok("append", str(path))
    item = run_cli("show", "@1", "--item", "a", "--json").json["items"][0]["trace"]
    assert secret not in item["prompt"] and "[redacted]" in item["prompt"]
    assert item["output"].startswith("x" * 32_768)
    assert item["output"].endswith("[… 7232 more characters not kept]")
    assert run_cli("show", "@1", "--item", "b", "--json").json["items"][0]["trace"] is None


@pytest.mark.parametrize(("traces", "extra", "said"), [
    ([{"id": "zz", "output": "o"}], {}, "traces[0].id: item 'zz' is not a row of outcomes.id"),
    ([{"id": "a", "answer": "o"}], {}, "traces[0].answer is not a trace field"),
    ([{"id": "a", "output": 3}], {}, "traces[0].output must be text"),
    ([{"id": "a"}, {"id": "a"}], {}, "traces[1].id: item 'a' has a trace already"),
    (["a"], {}, "traces[0] is not an object"),
    ([{"id": "a", "sample": 1}], {}, "traces[0].sample: the outcomes have no sample column"),
    ([{"id": "a"}], {"sample": [1, 1]}, "traces[0].sample must be the outcome row's sample"),
    ({"sha256": "sha256:" + "0" * 64, "size": 3, "items": 9}, {},
     "traces.items is 9 but the outcomes have 2 rows"),
])
def test_a_bad_trace_is_refused_and_changes_nothing(ledger_dir: Path, traces: Any,
                                                    extra: dict[str, Any], said: str) -> None:
    head = ok("log")
    path = write_json(Path("run.json"), _run(["a", "b"], [1.0, 0.0], traces, **extra))
    r = run_cli("append", str(path))
    assert r.code == 2 and said in r.err, r.err
    assert ok("log") == head and _blobs(ledger_dir) == []


def test_committed_items_keep_no_traces(ledger_dir: Path) -> None:
    path = write_json(Path("run.json"), _run(["a", "b"], [1.0, 0.0],
                                             [{"id": "a", "prompt": "secret item"}],
                                             content=["secret item", "another"]))
    r = run_cli("append", str(path), "--commit-items", "salts.json")
    assert r.code == 2 and "committed items keeps no traces" in r.err, r.err
    assert _blobs(ledger_dir) == []


@pytest.mark.parametrize(("args", "said"), [
    (["--item", "a", "--items"], "give one"),
    (["--where", "score=0"], "--where, --sample"),
    (["--items", "--where", "nope=1"], "--where 'nope=1'"),
    (["--items", "--where", "score<high"], "compares with a number"),
    (["--items", "--limit", "0"], "--limit must be at least 1"),
    (["--item", "zz"], "no item 'zz'"),
])
def test_bad_show_options_are_named(ledger_dir: Path, args: list[str], said: str) -> None:
    ok("append", str(write_json(Path("run.json"), _run(["a", "b"], [1.0, None], None))))
    r = run_cli("show", "@1", *args)
    assert r.code == 2 and said in r.err, r.err


def test_a_run_without_traces_still_lists_its_items(ledger_dir: Path) -> None:
    ok("append", str(write_json(Path("run.json"), _run(["a", "b"], [1.0, None], None))))
    out = ok("show", "@1", "--items", "--where", "score=null")
    assert out.splitlines() == ["run @1: 1 of 2 items where score=null (no traces kept)",
                                "b  score missing  error 'timed out'"]
    r = run_cli("show", "@0", "--items")
    assert r.code == 2 and "not a run" in r.err
