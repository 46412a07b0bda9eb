"""`logbook export --format FORMAT` (issue 38): each format checked by its own readers, on a
ledger built from real harness outputs (lm-eval runs in a plan's two arms, Inspect runs with
epochs outside any plan, one of them failed with partial items, and a claim); reproducible;
a tampered ledger exports nothing; bad input changes nothing.

The readers are independent of logbook: Python's csv module and pandas for CSV, pyarrow for
Parquet, securesystemslib (DSSE) and in-toto's own protobuf bindings for the attestations,
PyYAML and huggingface_hub's own eval-results parsers for the Hugging Face files.
"""

from __future__ import annotations

import base64
import csv
import io
import math
import sqlite3
import sys
from pathlib import Path
from typing import Any

import orjson
import prebuilt
import pytest
from builders import plan_body, write_json
from conftest import run_cli

FIXTURES = Path(__file__).parents[1] / "fixtures"
URL = "https://ledger.example.org/e/"


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def _build(work: Path) -> None:
    body = plan_body("mc", runs_per_arm=1, n_items=200, variable=["decoding.seed"],
                     suite={"name": "synth_mc", "version": "1", "n_items": 200},
                     metric={"name": "acc", "kind": "proportion", "higher_is_better": True,
                             "aliases": ["exact_match"]})
    ok("plan", str(write_json(work / "mc.json", body)))
    ok("append", "--from", "lm-eval", str(FIXTURES / "lm_eval/run-seed1"), "--plan", "mc",
       "--arm", "f16")
    ok("append", "--from", "lm-eval", str(FIXTURES / "lm_eval/run-seed2"), "--plan", "mc",
       "--arm", "q8")
    ok("append", "--from", "inspect", str(FIXTURES / "inspect/run-main"))
    ok("append", "--from", "inspect", str(FIXTURES / "inspect/run-failed"))
    ok("claim", "mc", "--statement", "q8 costs accuracy on synth_mc")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> prebuilt.Prebuilt:
    return prebuilt.build_once(tmp_path_factory, "exports", _build)


@pytest.fixture
def ledger(built: prebuilt.Prebuilt, tmp_path: Path) -> Path:
    return prebuilt.copy_into(built, tmp_path)


def entries() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in ok("export").splitlines()]


def run_entries() -> list[dict[str, Any]]:
    return [e for e in entries() if e["entry"]["kind"] == "run"]


def origin() -> str:
    return "logbook/" + entries()[0]["entry"]["body"]["uuid"]


# ------------------------------------------------------------------------------- CSV


def test_csv_is_one_row_per_item_and_sample_with_missing_left_empty(ledger: Path) -> None:
    ok("export", "--format", "csv", "--out", "items.csv")
    with open("items.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    runs = run_entries()
    # every run's outcomes, position by position, in ledger order: nothing dropped or added
    want = [(e, i) for e in runs for i in range(len(e["entry"]["body"]["outcomes"]["id"]))
            if "outcomes" in e["entry"]["body"]]
    assert len(table) == len(want) == 1200
    for row, (e, i) in zip(table, want, strict=True):
        oc = e["entry"]["body"]["outcomes"]
        assert row["run"] == e["digest"] and int(row["run_seq"]) == e["seq"]
        assert row["item"] == oc["id"][i] and int(row["position"]) == i
        score = oc["score"][i]
        if score is None:  # missing, never zero
            assert row["score"] == "" and row["error"] == oc["error"][i]
        else:
            assert float(row["score"]) == score  # the very float: shortest round-trip text
        assert row["sample"] == ("" if not oc.get("sample") else str(oc["sample"][i]))
    assert {row["ledger"] for row in table} == {origin()}
    # the Inspect runs' epochs are samples; the failed run keeps its partial items
    failed = [r for r in table if r["status"] == "failed"]
    assert failed and {r["sample"] for r in table if r["harness_name"] == "inspect_ai"} == {
        "1", "2"}
    assert {r["plan_slug"] for r in table} == {"mc", ""}


def test_csv_quotes_what_needs_quoting(ledger: Path) -> None:
    """Commas, quotes and line breaks in item fields and in the run's own columns read back
    exactly (a run whose items hold a line break is written row by row)."""
    ids = ['a,b', 'say "hi"', "two\nlines", "plain"]
    for n, error in enumerate(("timed out\r\nafter 30 s", "timed out, once")):
        body = {"plan": None, "arm": None, "status": "completed", "task": "q, \"x\"",
                "apparatus": {"model": "m,\n7b", "engine": "e"},
                "outcomes": {"metric": "acc", "id": ids if n == 0 else [*ids[:2], "c", "d"],
                             "score": [1.0, None, 0.0, 0.5], "error": [None, error, None, None]}}
        ok("append", str(write_json(Path(f"q{n}.json"), {"kind": "run", "body": body})))
    ok("export", "--format", "csv", "--out", "q.csv")
    with open("q.csv", newline="") as fh:
        table = [r for r in csv.DictReader(fh) if r["model"] == "m,\n7b"]
    assert [r["item"] for r in table] == ids + ids[:2] + ["c", "d"]
    assert [r["error"] for r in table] == ["", "timed out\r\nafter 30 s", "", "", "",
                                           "timed out, once", "", ""]
    assert {r["task"] for r in table} == {'q, "x"'}
    assert [r["score"] for r in table][:4] == ["1", "", "0", "0.5"]  # canonical JSON: 1.0 is 1


def test_csv_reads_into_pandas_with_the_reports_figures(ledger: Path) -> None:
    pd = pytest.importorskip("pandas")
    ok("export", "--format", "csv", "--out", "items.csv")
    frame = pd.read_csv("items.csv")
    report = orjson.loads(ok("report", "mc", "--json"))
    for arm in report["arms"]:
        mean = frame[(frame.plan_slug == "mc") & (frame.arm == arm["name"])].score.mean()
        assert math.isclose(mean, arm["mean"], rel_tol=1e-12)
    assert frame.score.isna().sum() == sum(
        s is None for e in run_entries() if "outcomes" in e["entry"]["body"]
        for s in e["entry"]["body"]["outcomes"]["score"])


def test_a_selector_takes_a_plan_an_arm_or_a_run(ledger: Path) -> None:
    def rows(*args: str) -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(ok("export", "--format", "csv", *args))))

    assert {r["plan_slug"] for r in rows("mc")} == {"mc"} and len(rows("mc")) == 400
    assert {r["arm"] for r in rows("mc:q8")} == {"q8"}
    assert {r["run_seq"] for r in rows("@4")} == {"4"}
    assert {r["harness_name"] for r in rows("harness.name=inspect_ai")} == {"inspect_ai"}


# ------------------------------------------------------------------------------- Parquet


def test_parquet_holds_the_csv_rows_typed(ledger: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    pd = pytest.importorskip("pandas")
    ok("export", "--format", "parquet", "--out", "items.parquet")
    ok("export", "--format", "csv", "--out", "items.csv")
    table = pq.read_table("items.parquet")
    meta = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
    assert meta["logbook.origin"] == origin() and int(meta["logbook.size"]) == len(entries())
    assert str(table.schema.field("score").type) == "double"
    assert str(table.schema.field("retracted").type) == "bool"
    frame = table.to_pandas()
    from_csv = pd.read_csv("items.csv", dtype=str, keep_default_na=False)
    assert len(frame) == len(from_csv) == 1200
    assert frame.score.isna().sum() == (from_csv.score == "").sum()
    # a run's text columns are dictionary-encoded (pandas reads them as categories)
    assert str(table.schema.field("model").type).startswith("dictionary<values=string")
    for column in ("run", "item", "error", "model", "arm"):
        assert list(frame[column].astype(object).fillna("")) == list(from_csv[column])
    assert list(frame.score.fillna(-1.0)) == [
        -1.0 if s == "" else float(s) for s in from_csv.score]
    # the columns some runs record and others do not (the Inspect runs' samples, the failed
    # run's errors) are missing exactly where the CSV leaves them empty
    for column in ("position", "sample", "error", "cluster", "component"):
        values = table.column(column).to_pylist()
        assert ["" if v is None else str(v) for v in values] == list(from_csv[column]), column
    samples = table.column("sample").to_pylist()
    assert None in samples and any(v is not None for v in samples)


def test_parquet_wants_a_file_and_its_extra(ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = entries()
    r = run_cli("export", "--format", "parquet")
    assert r.code == 2 and "--out FILE" in r.err
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if the extra were not installed
    r = run_cli("export", "--format", "parquet", "--out", "x.parquet")
    assert r.code == 3 and "pip install 'logbook[parquet]'" in r.err, r.err
    assert not Path("x.parquet").exists() and entries() == before


def test_frames_give_runs_and_items(ledger: Path) -> None:
    pytest.importorskip("pandas")
    from logbook import frames

    runs = frames.runs()
    assert list(runs.seq) == [e["seq"] for e in run_entries()]
    assert list(runs.status) == ["completed", "completed", "completed", "failed"]
    items = frames.items("mc:f16", ledger=ledger)
    assert set(items.arm) == {"f16"} and len(items) == 200
    assert str(items.score.dtype) == "float64" and str(items.run_seq.dtype) == "Int64"


# ------------------------------------------------------------------------------- in-toto


def _public_key() -> tuple[str, str]:
    (key,) = orjson.loads(ok("keys", "list", "--json"))
    return key["fingerprint"], base64.b64decode(key["public"]).hex()


def test_in_toto_envelopes_verify_with_securesystemslib(ledger: Path) -> None:
    from google.protobuf import json_format
    from in_toto_attestation.predicates.test_result.v0 import test_result_pb2
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.statement import Statement
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey

    ok("export", "--format", "in-toto", "--out", "claims.intoto.jsonl", "--source-url", URL)
    fingerprint, public = _public_key()
    key = SSlibKey(fingerprint, "ed25519", "ed25519", {"public": public})
    lines = Path("claims.intoto.jsonl").read_bytes().splitlines()
    assert len(lines) == 4  # the plan's verdict and the claim, each as two statements
    plan = next(e for e in entries() if e["entry"]["kind"] == "plan")
    claim = next(e for e in entries() if e["entry"]["kind"] == "claim")
    report = orjson.loads(ok("report", "mc", "--json"))
    seen = []
    for line in lines:
        envelope = Envelope.from_dict(orjson.loads(line))
        assert envelope.payload_type == "application/vnd.in-toto+json"
        assert set(envelope.verify([key], 1)) == {fingerprint}
        statement = json_format.Parse(envelope.payload, statement_pb2.Statement())
        Statement.copy_from_pb(statement).validate()
        doc = orjson.loads(envelope.payload)
        seen.append(doc["predicateType"])
        predicate = doc["predicate"]
        if doc["predicateType"].endswith("/test-result/v0.1"):
            json_format.ParseDict(predicate, test_result_pb2.TestResult())  # no unknown field
            # the plan's verdict is inconclusive: not a pass, and its success criterion failed
            assert report["verdict"]["status"] == "inconclusive"
            assert predicate["result"] == "FAILED"
            assert predicate["failedTests"] == ["mc: effect_low > -0.05"]
            assert predicate["passedTests"] == ["mc: not effect_high < -0.05"]
            assert predicate["configuration"][0]["digest"] == {"sha256": plan["digest"]}
        else:
            assert doc["predicateType"] == "https://in-toto.io/attestation/eval-result/v0.1"
            assert predicate["claims"] == [{"metric": "acc.effect_low", "comparator": ">",
                                            "threshold": "-0.05", "passed": False}]
            assert predicate["preRegistration"] == {"alg": "sha256", "value": plan["digest"]}
            assert predicate["sampleSize"] == 200
            assert predicate["assuranceLevel"] == "self_attested"
    assert seen.count("https://in-toto.io/attestation/test-result/v0.1") == 2
    # the claim's statements are about the claim (no model digest is recorded: the subject is
    # the entry itself), and link to it
    test_result, eval_result = (orjson.loads(Envelope.from_dict(orjson.loads(line)).payload)
                                for line in lines[2:])
    for doc in (test_result, eval_result):
        assert doc["subject"] == [{"name": f"{origin()}/{claim['digest']}",
                                   "digest": {"sha256": claim["digest"]}}]
    assert test_result["predicate"]["url"] == URL + claim["digest"]
    assert test_result["predicate"]["configuration"][1]["annotations"] == {
        "statement": "q8 costs accuracy on synth_mc"}
    assert eval_result["predicate"]["subjectProfile"] == "receipt"


def test_an_altered_envelope_fails_securesystemslib(ledger: Path) -> None:
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import VerificationError
    from securesystemslib.signer import SSlibKey

    ok("export", "--format", "in-toto", "--out", "a.jsonl")
    fingerprint, public = _public_key()
    key = SSlibKey(fingerprint, "ed25519", "ed25519", {"public": public})
    doc = orjson.loads(Path("a.jsonl").read_bytes().splitlines()[0])
    payload = base64.b64decode(doc["payload"]).replace(b'"FAILED"', b'"PASSED"')
    doc["payload"] = base64.b64encode(payload).decode()
    with pytest.raises(VerificationError):
        Envelope.from_dict(doc).verify([key], 1)


# ------------------------------------------------------------------------------- Hugging Face


def test_hf_results_parse_with_huggingface_hubs_own_readers(ledger: Path) -> None:
    yaml = pytest.importorskip("yaml")
    hub = pytest.importorskip("huggingface_hub._eval_results")
    from huggingface_hub.repocard_data import model_index_to_eval_results

    ok("export", "--format", "hf", "--out", "repo", "--source-url", URL)
    files = sorted(p.name for p in (Path("repo") / ".eval_results").iterdir())
    assert files == ["mc.f16.yaml", "mc.q8.yaml", "run-4.yaml"]  # the failed run has none
    report = orjson.loads(ok("report", "mc", "--json"))
    plan = next(e for e in entries() if e["entry"]["kind"] == "plan")
    for arm in report["arms"]:
        text = (Path("repo") / ".eval_results" / f"mc.{arm['name']}.yaml").read_text()
        (entry,) = hub.parse_eval_result_entries(yaml.safe_load(text))
        assert entry.dataset_id == "synth_mc" and entry.value == arm["mean"]
        assert entry.source_url == URL + plan["digest"]
        assert f"arm {arm['name']}" in entry.notes and plan["digest"] in entry.notes
    (run,) = hub.parse_eval_result_entries(
        yaml.safe_load((Path("repo") / ".eval_results" / "run-4.yaml").read_text()))
    inspect_run = next(e for e in run_entries() if e["seq"] == 4)
    assert run.source_url == URL + inspect_run["digest"]
    index = yaml.safe_load(Path("repo/model-index.yaml").read_text())["model-index"]
    names = []
    for model in index:
        name, results = model_index_to_eval_results([model])
        names.append(name)
        assert all(r.source_url.startswith(URL) for r in results)
    assert sorted(names) == ["dummy-model", "mockllm/model"]


def test_hf_wants_a_folder(ledger: Path) -> None:
    Path("afile").write_text("x")
    r = run_cli("export", "--format", "hf", "--out", "afile")
    assert r.code == 2 and "folder" in r.err and Path("afile").read_text() == "x"
    r = run_cli("export", "--format", "hf")
    assert r.code == 2 and "--out DIR" in r.err


# ------------------------------------------------------------------------------- MLflow


def _mlflow_runs(folder: Path) -> dict[str, Any]:
    monkey = pytest.MonkeyPatch()
    monkey.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    try:
        from mlflow.tracking import MlflowClient

        client = MlflowClient(folder.resolve().as_uri())
        (experiment,) = [e for e in client.search_experiments() if e.name != "Default"]
        return {"experiment": experiment.name, "runs": {
            r.data.tags["logbook.digest"]: r for r in client.search_runs(
                [experiment.experiment_id], max_results=1000)}}
    finally:
        monkey.undo()


def test_mlflow_runs_read_back_with_mlflows_client(ledger: Path) -> None:
    pytest.importorskip("mlflow")
    ok("export", "--format", "mlflow", "--out", "mlruns", "--source-url", URL)
    found = _mlflow_runs(Path("mlruns"))
    assert found["experiment"] == origin()
    runs = found["runs"]
    assert set(runs) == {e["digest"] for e in run_entries()}
    report = orjson.loads(ok("report", "mc", "--json"))
    scores = {row["digest"]: row["score"] for arm in report["arms"] for row in arm["runs"]}
    for e in run_entries():
        body, run = e["entry"]["body"], runs[e["digest"]]
        status = {"completed": "FINISHED", "failed": "FAILED"}[body["status"]]
        assert run.info.status == status
        assert run.data.tags["logbook.seq"] == str(e["seq"])
        assert run.data.tags["logbook.url"] == URL + e["digest"]
        assert run.data.params["model"] == body["apparatus"]["model"]
        metric = body["outcomes"]["metric"]
        if e["digest"] in scores:  # the plan's runs: the score the report prints
            assert run.data.metrics[metric] == scores[e["digest"]]
            assert run.data.tags["logbook.plan"] == "mc"
        if body["status"] == "failed":  # no score; its missing items are counted, not zeroed
            assert metric not in run.data.metrics
            oc = body["outcomes"]
            scored = {i for i, s in zip(oc["id"], oc["score"], strict=True) if s is not None}
            missing = len(set(oc["id"]) - scored)  # items with no score in any epoch
            assert run.data.metrics["missing"] == missing > 0
            assert run.data.metrics["items"] == len(set(oc["id"]))
    # again: nothing is added twice; a run appended since is added
    r = run_cli("export", "--format", "mlflow", "--out", "mlruns")
    assert r.code == 0 and "0 runs into" in r.err
    ok("append", "--from", "lm-eval", str(FIXTURES / "lm_eval/run-seed3"))
    r = run_cli("export", "--format", "mlflow", "--out", "mlruns")
    assert r.code == 0 and "1 runs into" in r.err
    assert len(_mlflow_runs(Path("mlruns"))["runs"]) == len(runs) + 1


# ------------------------------------------------------------------------------- every format


FORMATS = {"csv": "out.csv", "parquet": "out.parquet", "in-toto": "out.jsonl", "hf": "out"}
EXTRA = {"parquet": "pyarrow", "mlflow": "mlflow"}


def _snapshot(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_export_is_reproducible(ledger: Path, fmt: str) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    out = Path(FORMATS[fmt])
    ok("export", "--format", fmt, "--out", str(out))
    first = _snapshot(out)
    ok("export", "--format", fmt, "--out", str(out))
    assert _snapshot(out) == first and first


@pytest.mark.parametrize("fmt", [*FORMATS, "mlflow"])
def test_a_tampered_ledger_exports_nothing(ledger: Path, fmt: str) -> None:
    if fmt in EXTRA:
        pytest.importorskip(EXTRA[fmt])
    conn = sqlite3.connect(ledger / ".logbook" / "ledger.db", isolation_level=None)
    try:  # an attacker lowers q8's first item score in the stored bytes of run @3
        conn.execute("DROP TRIGGER IF EXISTS entries_no_update")
        (raw,) = conn.execute("SELECT CAST(entry AS BLOB) FROM entries WHERE seq = 3").fetchone()
        body = orjson.loads(raw)
        body["body"]["outcomes"]["score"][0] = 1 - body["body"]["outcomes"]["score"][0]
        conn.execute("UPDATE entries SET entry = ? WHERE seq = 3", (orjson.dumps(body),))
    finally:
        conn.close()
    out = Path(FORMATS.get(fmt, "mlruns"))
    r = run_cli("export", "--format", fmt, "--out", str(out))
    assert r.code == 1, (r.code, r.err)
    assert "Traceback" not in r.err and "this ledger does not verify" in r.err, r.err
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("args, words", [
    (["--format", "xlsx"], "not a format"),
    (["mc", "--format", "jsonl"], "SELECTOR mc"),
    (["nope", "--format", "csv"], "SELECTOR"),
    (["mc:nope", "--format", "csv"], "not an arm"),
    (["@0", "--format", "csv"], "neither a plan nor a run"),
    (["--format", "csv", "--source-url", URL], "--source-url"),
    (["--format", "sqlite"], "--out FILE"),
    (["--format", "mlflow"], "--out"),
    (["--sqlite", "x.db", "--format", "csv"], "--sqlite"),
])
def test_bad_input_is_refused_and_changes_nothing(ledger: Path, args: list[str],
                                                  words: str) -> None:
    before = entries()
    r = run_cli("export", *args)
    assert r.code == 2, (r.code, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], r.err
    assert entries() == before
    assert sorted(p.name for p in Path().iterdir()) == sorted(
        p.name for p in ledger.iterdir())


def test_in_toto_needs_a_valid_key(ledger: Path, monkeypatch: pytest.MonkeyPatch,
                                   tmp_path: Path) -> None:
    ok("keys", "new", "--out", str(tmp_path / "stranger.key"))
    monkeypatch.setenv("LOGBOOK_KEY", str(tmp_path / "stranger.key"))
    r = run_cli("export", "--format", "in-toto", "--out", "a.jsonl")
    assert r.code == 3 and "not a valid key of this ledger" in r.err
    assert not Path("a.jsonl").exists()
