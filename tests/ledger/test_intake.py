"""A plan takes only its own runs, and each run once (issue 13): suite, metric, source and pins
are checked at intake. Every refusal exits 2 with one sentence naming the field and both
values, and leaves the ledger as it was (same entry count and head)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import prebuilt
import pytest
from builders import plan_body, run_body, write_json
from conftest import run_cli
from test_record import FIXTURES, LM_GEN, LM_SEED1, head, one_sentence, runs

# the module's ledger is initialised once and copied into each test (tests/prebuilt.py)
initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir

H_A = "sha256:" + "a" * 64
H_B = "sha256:" + "b" * 64
LM_2TASKS = FIXTURES / "lm_eval/run-2tasks-seed6"
LM_GROUP = FIXTURES / "lm_eval/run-group-seed5"
INSPECT_MAIN = FIXTURES / "inspect/run-main"


def plan(slug: str = "pl", arms: list[dict[str, Any]] | None = None, **extra: Any) -> str:
    body = plan_body(slug, **extra)
    body["arms"] = arms or body["arms"]
    r = run_cli("plan", str(write_json(Path(f"{slug}.plan.json"), body)))
    assert r.code == 0, r.err
    return slug


def append(body: dict[str, Any], name: str = "run.json") -> Any:
    return run_cli("append", str(write_json(Path(name), {"kind": "run", "body": body})))


def refused(r: Any, before: tuple[int, str], *parts: str) -> str:
    """The refusal's one sentence, holding every part; nothing was written."""
    assert r.code == 2, r.out + r.err
    line = one_sentence(r.err)
    for part in parts:
        assert part in line, line
    assert head() == before
    return line


def ids_run(slug: str, ids: list[str], **apparatus: Any) -> dict[str, Any]:
    body = run_body(slug, "f16", n_items=len(ids))
    body["outcomes"]["id"] = ids
    body["apparatus"].update(apparatus)
    return body


# ---------------------------------------------------------------- suite identity


def test_a_run_of_another_dataset_is_refused(ledger_dir: Path) -> None:
    plan("pl", suite={"name": "s", "version": "1", "n_items": 50, "dataset_hash": H_A})
    body = run_body("pl", "f16")
    body["apparatus"]["dataset_hash"] = H_A
    assert append(body).code == 0
    before = head()
    body = run_body("pl", "q8")
    body["apparatus"]["dataset_hash"] = H_B
    refused(append(body), before, "apparatus.dataset_hash", H_A, H_B)
    del body["apparatus"]["dataset_hash"]  # a completed run that does not say its dataset
    refused(append(body), before, "apparatus.dataset_hash", "the run gives none", H_A)


def test_the_first_completed_run_fixes_the_suite(ledger_dir: Path) -> None:
    plan("mc", suite={"name": "synth_mc", "version": "1", "n_items": 200},
         metric={"name": "acc", "kind": "proportion", "aliases": ["exact_match"]})
    r = run_cli("append", "--from", "lm-eval", str(LM_SEED1), "--plan", "mc", "--arm", "f16")
    assert r.code == 0, r.err
    fixed = runs()[0]["apparatus"]["dataset_hash"]
    before = head()
    r = run_cli("append", "--from", "lm-eval", str(LM_GEN), "--plan", "mc", "--arm", "q8")
    line = refused(r, before, "apparatus.dataset_hash", fixed, "first completed run @2")
    assert "sha256:51d669c3" in line  # synth_gen's own suite identity (its items' hashes)


def test_an_item_outside_the_suite_and_too_many_items(ledger_dir: Path) -> None:
    plan("pl", n_items=3)
    before = head()
    refused(append(ids_run("pl", ["a", "b", "c", "d"])), before, "outcomes.id",
            "4 distinct item ids", "n_items 3")
    assert append(ids_run("pl", ["a", "b", "c"])).code == 0
    before = head()
    refused(append(ids_run("pl", ["a", "b", "x"])), before, "outcomes.id", "item 'x'",
            "3 items")
    assert append(ids_run("pl", ["c", "a"])).code == 0  # a subset is of the suite


def test_an_amended_suite_starts_afresh(ledger_dir: Path) -> None:
    plan("pl", n_items=3)
    assert append(ids_run("pl", ["a", "b", "c"])).code == 0
    r = run_cli("amend", "pl", "--set", 'suite={"name": "s2", "version": "2", "n_items": 3}',
                "--reason", "the suite was replaced")
    assert r.code == 0, r.err
    assert append(ids_run("pl", ["x", "y", "z"])).code == 0


# ---------------------------------------------------------------- metric identity


def test_a_run_of_another_metric_is_refused_and_an_alias_is_taken(ledger_dir: Path) -> None:
    plan("pl", metric={"name": "acc", "kind": "proportion", "aliases": ["accuracy"]})
    before = head()
    body = run_body("pl", "f16")
    body["outcomes"]["metric"] = "exact_match"
    refused(append(body), before, "outcomes.metric", "'exact_match'", "'acc'", "'accuracy'")
    body["outcomes"]["metric"] = "accuracy"
    assert append(body).code == 0


def test_an_inspect_log_into_an_lm_eval_plan(ledger_dir: Path) -> None:
    """The issue's first case: an Inspect `arith` run offered to a plan measuring lm-eval acc."""
    plan("mc", suite={"name": "synth_mc", "version": "1", "n_items": 200})
    before = head()
    r = run_cli("append", "--from", "inspect", str(INSPECT_MAIN), "--plan", "mc", "--arm", "f16")
    refused(r, before, "outcomes.metric", "'match.accuracy'", "'acc'")


# ---------------------------------------------------------------- source identity


def test_the_same_output_appended_twice_is_refused(ledger_dir: Path) -> None:
    r = run_cli("append", "--from", "lm-eval", str(LM_SEED1), "--json")
    assert r.code == 0, r.err
    first = r.json[0] if isinstance(r.json, list) else r.json
    before = head()
    line = refused(run_cli("append", "--from", "lm-eval", str(LM_SEED1)), before, "body.source",
                   "already in the ledger as run @1", first["digest"][:12])
    assert "results_2026-11-29T18-12-12.145805.json" in line
    # the same Inspect run as .eval and as its .json conversion: one run, whichever comes first
    folder = FIXTURES / "inspect/run-failed"
    assert run_cli("append", "--from", "inspect", str(next(folder.glob("*.json")))).code == 0
    before = head()
    refused(run_cli("append", "--from", "inspect", str(next(folder.glob("*.eval")))), before,
            "body.source", "already in the ledger as run @2")


def test_identical_scores_are_still_two_runs(ledger_dir: Path, tmp_path: Path) -> None:
    """Identity is the source, never the outcomes: a JSON Lines file has no run identity."""
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": 1, "score": 1}\n{"id": 2, "score": 0}\n')
    for _ in range(2):
        assert run_cli("append", "--from", "jsonl", str(items)).code == 0
    assert len(runs()) == 2
    # --once still makes an append idempotent
    for _ in range(2):
        assert run_cli("append", "--from", "jsonl", str(items), "--once", "k1").code == 0
    assert len(runs()) == 3


# ---------------------------------------------------------------- the harness's own figure


def test_an_edited_headline_figure_is_refused(ledger_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(LM_SEED1, out)
    results = next(out.glob("results_*.json"))
    doc = orjson.loads(results.read_bytes())
    doc["results"]["synth_mc"]["acc,none"] = 0.415
    results.write_bytes(orjson.dumps(doc))
    before = head()
    refused(run_cli("append", "--from", "lm-eval", str(out)), before,
            "results.synth_mc.acc,none is 0.415", "per-item scores is 0.315")


def test_an_edited_inspect_figure_is_refused(ledger_dir: Path, tmp_path: Path) -> None:
    src = next((FIXTURES / "inspect/run-errors").glob("*.eval"))
    from logbook.ingest.inspect_reader import read_log

    header, _ = read_log(src)
    assert header["results"]["scores"][0]["metrics"]["accuracy"]["value"] == pytest.approx(
        0.6871794871794872)
    # an Inspect .json log with its accuracy edited
    r = run_cli("append", "--from", "inspect", str(src))
    assert r.code == 0, r.err
    inspect_log = pytest.importorskip("inspect_ai.log", reason="the edited log is written by "
                                      "Inspect itself: pip install -e '.[inspect]'")
    read_eval_log, write_eval_log = inspect_log.read_eval_log, inspect_log.write_eval_log

    log = read_eval_log(str(src))
    assert log.results is not None
    log.results.scores[0].metrics["accuracy"].value = 0.7
    log.eval.eval_id, log.eval.run_id = "edited-eval-id-0001", "edited-run-id-0001"
    edited = tmp_path / "edited.json"
    write_eval_log(log, str(edited), format="json")
    before = head()
    refused(run_cli("append", "--from", "inspect", str(edited)), before,
            "metrics.accuracy is 0.7", "mean over its 195 scored items is 0.687")


# ---------------------------------------------------------------- pins


def pinned_plan() -> str:
    arms = plan_body("pins")["arms"]
    arms[0]["apparatus"] = {"kv_cache_precision": "f16"}
    arms[1]["apparatus"] = {"kv_cache_precision": "q8"}
    return plan("pins", arms=arms, pinned={"model": "m-7b", "decoding.temperature": 0.0})


def test_append_refuses_a_run_that_contradicts_a_pin(ledger_dir: Path) -> None:
    pinned_plan()
    before = head()
    body = run_body("pins", "q8")
    body["apparatus"]["kv_cache_precision"] = "f16"
    refused(append(body), before, "apparatus.kv_cache_precision", "'f16'",
            "plan pins pins 'q8' for arm q8")
    body = run_body("pins", "q8")
    body["apparatus"]["model"] = "m-13b"
    refused(append(body), before, "apparatus.model", "'m-13b'", "plan pins pins 'm-7b'")
    assert append(run_body("pins", "q8")).code == 0


# ---------------------------------------------------------------- tasks and groups


def test_a_two_task_output_one_run_in_the_plan_one_exploratory(ledger_dir: Path) -> None:
    plan("mc", suite={"name": "synth_mc", "version": "1", "n_items": 200})
    r = run_cli("append", "--from", "lm-eval", str(LM_2TASKS), "--plan", "mc", "--arm", "f16")
    assert r.code == 0, r.err
    by_task = {b["task"]: b for b in runs()}
    assert by_task["synth_mc"]["plan"] is not None and by_task["synth_mc"]["arm"] == "f16"
    assert by_task["synth_gen"]["plan"] is None and by_task["synth_gen"]["arm"] is None
    assert "(synth_gen) is not plan mc's suite 'synth_mc': appended as an exploratory run" \
        in r.err
    # doc ids "0".."49" of synth_gen are never paired with synth_mc's: they are not in the plan
    rep = run_cli("report", "mc", "--json").json
    assert sum(len(a["runs"]) for a in rep["arms"]) == 1


def test_a_group_is_one_run_with_a_component_column(ledger_dir: Path) -> None:
    plan("grp", suite={"name": "synth_group", "version": "1", "n_items": 400})
    r = run_cli("append", "--from", "lm-eval", str(LM_GROUP), "--plan", "grp", "--arm", "f16")
    assert r.code == 0, r.err
    (run,) = runs()
    o = run["outcomes"]
    assert run["task"] == "synth_group" and len(o["id"]) == 400
    assert set(o["component"]) == {"synth_mc", "synth_mc2"}
    assert o["id"][0] == "synth_mc/0" and o["id"][-1].startswith("synth_mc2/")
    # the size-weighted mean over all items is lm-eval's own group figure
    assert sum(o["score"]) / len(o["score"]) == pytest.approx(run["reported"]["value"])
    assert run["reported"]["value"] == 0.22


def second_group_run(dst: Path, flip: int = 20) -> Path:
    """Another lm-eval run of the group, as lm-eval writes it: the fixture's files under a new
    timestamp, with the first ``flip`` synth_mc2 documents answered right, and the figures in
    the results file (subtask and group) as lm-eval computes them from the samples."""
    dst.mkdir()
    old = next(LM_GROUP.glob("results_*.json")).name.removeprefix("results_")[:-5]
    new = "2026-12-01T08-00-00.000001"
    acc: dict[str, list[float]] = {}
    for src in LM_GROUP.glob("samples_*.jsonl"):
        lines = [orjson.loads(raw) for raw in src.read_bytes().splitlines() if raw.strip()]
        task = src.name.removeprefix("samples_").removesuffix(f"_{old}.jsonl")
        for line in lines[:flip] if task == "synth_mc2" else []:
            line["acc"] = 1.0
        acc[task] = [line["acc"] for line in lines]
        (dst / src.name.replace(old, new)).write_bytes(
            b"".join(orjson.dumps(line) + b"\n" for line in lines))
    doc = orjson.loads(next(LM_GROUP.glob("results_*.json")).read_bytes())
    for task, values in acc.items():
        doc["results"][task]["acc,none"] = sum(values) / len(values)
    everything = [v for values in acc.values() for v in values]
    for table in ("results", "groups"):
        doc[table]["synth_group"]["acc,none"] = sum(everything) / len(everything)
    doc["date"] += 600
    (dst / f"results_{new}.json").write_bytes(orjson.dumps(doc))
    return dst


def test_the_report_shows_each_component_beside_the_roll_up(ledger_dir: Path,
                                                            tmp_path: Path) -> None:
    plan("grp", suite={"name": "synth_group", "version": "1", "n_items": 400}, runs_per_arm=1)
    for folder, arm in ((LM_GROUP, "f16"), (second_group_run(tmp_path / "q8"), "q8")):
        r = run_cli("append", "--from", "lm-eval", str(folder), "--plan", "grp", "--arm", arm)
        assert r.code == 0, r.err
    rep = run_cli("report", "grp", "--json").json
    rows = {c["name"]: c for c in rep["components"]}
    assert list(rows) == ["synth_mc", "synth_mc2"]
    figures = {(c, a["name"]): a["figure"] for c, row in rows.items() for a in row["arms"]}
    mc2 = [orjson.loads(raw)["acc"] for raw in
           next(LM_GROUP.glob("samples_synth_mc2_*")).read_bytes().splitlines()]
    assert figures[("synth_mc", "f16")] == pytest.approx(0.21)
    assert figures[("synth_mc", "q8")] == pytest.approx(0.21)
    assert figures[("synth_mc2", "f16")] == pytest.approx(0.23)
    assert figures[("synth_mc2", "q8")] == pytest.approx((sum(mc2[20:]) + 20) / 200)
    (same,), (moved,) = rows["synth_mc"]["effects"], rows["synth_mc2"]["effects"]
    assert same["point"] == 0 and same["n"] == 200
    gained = 20 - sum(mc2[:20])  # items flipped from wrong to right
    assert moved["point"] == pytest.approx(gained / 200) and moved["n"] == 200
    assert moved["low"] <= moved["point"] <= moved["high"]
    # the roll-up is the group's: every item, paired by subtask/doc_id
    (effect,) = rep["effects"]
    assert effect["n"] == 400 and effect["point"] == pytest.approx(gained / 400)
    text = run_cli("report", "grp").out
    assert "Components (beside the roll-up above)" in text
    assert "  synth_mc2: f16 23.0 (n=200), q8" in text
    html = tmp_path / "r.html"
    assert run_cli("report", "grp", "--html", str(html)).code == 0
    assert "synth_mc2" in html.read_text()


def test_python_recording_outside_the_suite_is_kept_exploratory(ledger_dir: Path) -> None:
    """The block ran: its run is kept, exploratory, and the refusal is raised after."""
    from logbook import Ledger
    from logbook.ledger.intake import NotOfPlan

    plan("pl", n_items=2)
    ledger = Ledger.open()
    try:
        with pytest.raises(NotOfPlan, match="kept as exploratory run @2"), \
                ledger.recording(plan="pl", arm="f16", metric="acc") as run:
            for i in range(3):
                run.item(f"q{i}", 1.0)
        with pytest.warns(UserWarning, match="run @3 names no model and no decoding"), \
                ledger.recording(plan="pl", arm="f16", metric="acc") as run:
            run.item("q0", 1.0)
    finally:
        ledger.close()
    body, _ = runs()
    assert body["plan"] is None and "n_items 2" in body["note"]
    assert body["outcomes"]["id"] == ["q0", "q1", "q2"]
    # meant for pl's arm f16: kept in view (issue 32 item 6)
    assert body["intended"]["arm"] == "f16" and "n_items 2" in body["intended"]["reason"]
    assert [x["seq"] for x in run_cli("report", "pl", "--json").json["refused"]] == [2]


def test_the_source_index_is_derived_and_verified(ledger_dir: Path) -> None:
    import sqlite3

    assert run_cli("append", "--from", "lm-eval", str(LM_SEED1)).code == 0
    db = ledger_dir / ".logbook/ledger.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM run_sources").fetchone()[0] == 2
        conn.execute("DELETE FROM run_sources")
    r = run_cli("verify")
    assert r.code == 1 and "derived table run_sources" in r.out + r.err
    assert run_cli("reindex").code == 0 and run_cli("verify").code == 0
    before = head()  # rebuilt from the bytes: the same output is still refused
    refused(run_cli("append", "--from", "lm-eval", str(LM_SEED1)), before, "body.source")
