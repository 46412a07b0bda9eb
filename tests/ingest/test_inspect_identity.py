"""An Inspect run's suite identity (apparatus.dataset_hash) is its data: the sorted (sample id,
input hash, target hash) of its samples (docs/recording.md). Real logs from tests/fixtures:
two runs of one task at other seeds, with errored samples or not, share it; a log cut short
(samples never run, so never logged) gives none; the identity ignores chat messages' random
ids, and follows the inputs and targets."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
from builders import draft, run_body, write_json
from conftest import run_cli

from logbook.ingest.inspect import read_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "inspect"


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode()).hexdigest()


def identity(path: Path) -> str | None:
    (run,) = read_runs(path)
    found: str | None = run["apparatus"].get("dataset_hash")
    return found


def test_runs_of_one_task_share_it_and_a_cut_short_log_has_none() -> None:
    main, errors = (identity(next((FIXTURES / d).glob("*.eval")))
                    for d in ("run-main", "run-errors"))
    assert main is not None and main == errors  # seeds 1 and 2; run-errors has failed samples
    # recomputed here from the log's JSON samples, as docs/recording.md says
    failed = next((FIXTURES / "run-failed").glob("*.json"))
    doc = orjson.loads(failed.read_bytes())
    logged = {str(s["id"]): (_hash(s["input"]), _hash(s["target"])) for s in doc["samples"]}
    assert len(logged) < len(doc["eval"]["dataset"]["sample_ids"])  # it crashed part-way
    assert identity(failed) is None
    assert identity(next((FIXTURES / "run-failed").glob("*.eval"))) is None


def _chat_log(tmp_path: Path, name: str, ids: tuple[str, str], target: Any) -> Path:
    """The run-failed log, cut to its logged samples, the first one's input chat messages."""
    doc = orjson.loads(next((FIXTURES / "run-failed").glob("*.json")).read_bytes())
    doc["samples"] = [s for s in doc["samples"] if s["epoch"] == 1]
    doc["eval"]["dataset"]["sample_ids"] = [s["id"] for s in doc["samples"]]
    doc["samples"][0]["input"] = [
        {"id": ids[0], "content": "Answer with a number.", "role": "system"},
        {"id": ids[1], "content": [{"type": "text", "text": "What is 1 + 1?"}], "role": "user"}]
    doc["samples"][0]["target"] = target
    return write_json(tmp_path / name, doc)


def test_chat_inputs_without_their_ids_and_targets(tmp_path: Path) -> None:
    one = identity(_chat_log(tmp_path, "a.json", ("m1", "m2"), "2"))
    other_ids = identity(_chat_log(tmp_path, "b.json", ("x7", "x8"), "2"))
    other_target = identity(_chat_log(tmp_path, "c.json", ("m1", "m2"), ["2", "two"]))
    assert one is not None and one == other_ids
    assert other_target is not None and other_target != one
    doc = orjson.loads((tmp_path / "a.json").read_bytes())
    triples = []
    for s in doc["samples"]:
        given = s["input"]
        if isinstance(given, list):
            given = [{k: v for k, v in m.items() if k != "id"} for m in given]
        triples.append([str(s["id"]), _hash(given), _hash(s["target"])])
    assert one == "sha256:" + _hash(sorted(triples))


def test_a_draft_naming_a_reducer_logbook_cannot_apply_is_refused(ledger_dir: Path) -> None:
    body = run_body(None, None, n_items=3)
    body["outcomes"]["reducer"] = "majority"
    r = run_cli("append", str(write_json(ledger_dir / "d.json", draft("run", body))))
    assert r.code == 2 and "outcomes.reducer" in r.err, r.err
    body["outcomes"]["reducer"] = "at_least_2"
    assert run_cli("append", str(write_json(ledger_dir / "d.json", draft("run", body)))).code == 0
