"""The analysis reads each run's facts (logbook.format.runfacts) instead of the run: worked out
by the check as it checks the run's bytes, kept with this machine's checked copy, read from
there after a resumed check (docs/auditing.md §7). Whatever path the facts take, every output
is the one a full check that reads every run gives, on a ledger of every kind of run: plan
runs with missing items, failed and retracted runs, Inspect-style samples under pass@k,
unplanned runs that sample with a fixed seed. Facts the copy holds wrongly or not at all make
the run be read whole; facts of another version make the copy again."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli

READS = (("audit", "--json"), ("report", "kv", "--json"), ("report", "codegen", "--json"),
         ("compare", "kv:f16", "kv:q8", "--json"),
         ("compare", "codegen:a", "codegen:b", "--json"), ("brief", "--json"))


def _digest(r: Any) -> str:
    assert r.code == 0, r.err
    return str(r.json["digest"])


def _append(tmp: Path, name: str, drafts: list[dict[str, Any]]) -> list[str]:
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / name, drafts)), "--json")
    assert r.code == 0, r.err
    return [e["digest"] for e in (r.json if isinstance(r.json, list) else [r.json])]


def _samples(arm: str, seed: int) -> dict[str, Any]:
    ids, sample, score = [], [], []
    for i in range(20):
        for s in range(4):
            ids.append(f"t{i:02d}")
            sample.append(s)
            score.append(None if (i + s + seed) % 11 == 0 else float((i * 7 + s + seed) % 3 == 0))
    return draft("run", {"plan": CODEGEN[0], "arm": arm, "status": "completed",
                         "session": "s2", "apparatus": {"model": "coder", "decoding": {
                             "temperature": 0.8, "seed": seed}},
                         "outcomes": {"metric": "pass", "id": ids, "sample": sample,
                                      "score": score, "error": [
                                          "timed out" if v is None else None for v in score]}})


CODEGEN: list[str] = []


def build(tmp: Path) -> None:
    kv = _digest(run_cli("plan", str(write_json(tmp / "kv.json", plan_body(
        "kv", runs_per_arm=3, n_items=40))), "--json"))
    CODEGEN[:] = [_digest(run_cli("plan", str(write_json(tmp / "cg.json", plan_body(
        "codegen", runs_per_arm=1, n_items=20, arms=("a", "b"),
        metric={"name": "pass", "kind": "pass_at_k", "k": 2, "higher_is_better": True}))),
        "--json"))]
    runs = _append(tmp, "kv.jsonl", [
        draft("run", run_body(kv, arm, n_items=40, seed=10 * k + i, p=0.6 + 0.1 * i,
                              missing=k, session="s1"))
        for k in range(3) for i, arm in enumerate(("f16", "q8"))]
        + [draft("run", run_body(kv, "q8", n_items=40, status="failed", session="s1"))])
    # exploratory runs before any plan of theirs, sampling with one fixed seed (A21)
    _append(tmp, "explore.jsonl", [draft("run", run_body(
        None, None, n_items=40, seed=1, p=0.5 + 0.05 * i, apparatus={
            "model": "m-7b", "decoding": {"temperature": 0.7, "seed": 1}}))
        for i in range(3)])
    _append(tmp, "codegen.jsonl", [_samples("a", 1), _samples("b", 2)])
    r = run_cli("retract", runs[2], "--reason", "scorer crashed midway", "--category",
                "harness_defect", "--json")
    assert r.code == 0, r.err


def outputs() -> dict[tuple[str, ...], tuple[int, Any]]:
    out = {}
    for command in READS:
        r = run_cli(*command)
        assert r.code in (0, 1) and r.out, (command, r.err)
        value = orjson.loads(r.out)
        if command[0] == "brief":  # how it was checked, and when the audit ran, differ
            value["integrity"].pop("verified", None)
            (value.get("audit") or {}).pop("at", None)
        out[command] = (r.code, value)
    return out


def assert_same(got: dict[tuple[str, ...], tuple[int, Any]],
                want: dict[tuple[str, ...], tuple[int, Any]]) -> None:
    for command, value in want.items():
        code, out = got[command]
        assert code == value[0], command
        if isinstance(out, dict):  # name the field that differs
            assert {k: v for k, v in out.items() if v != value[1].get(k)} == {}, command
        assert out == value[1], command


def in_full(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, ...], tuple[int, Any]]:
    with monkeypatch.context() as mp:
        mp.setenv("LOGBOOK_STATE_DIR", "off")
        return outputs()


def copy_db() -> Path:
    [path] = sorted((Path.home() / "state" / "logbook" / "checked").glob("*.db"))
    return path


def resumed_from() -> int:
    return int(run_cli("brief", "--json").json["integrity"]["verified"]["resumed_from"])


def test_every_output_is_the_full_checks_whatever_path_the_facts_take(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path)
    want = in_full(monkeypatch)
    assert want[("audit", "--json")][1]["findings"], "the scenario gives the audit work"
    assert_same(outputs(), want)  # the first: a full check, which makes the copy and facts
    size = resumed_from()
    assert size > 0
    with sqlite3.connect(copy_db()) as conn:
        facts = conn.execute("SELECT count(*), count(facts) FROM run_facts").fetchone()
    assert facts == (12, 12)  # every run has its facts, samples and failed runs included
    assert_same(outputs(), want)  # resumed: the rules read the copy's facts
    # more runs after the copy: their facts come from the resumed check's tail
    _append(tmp_path, "more.jsonl", [draft("run", run_body(None, None, n_items=40, seed=99))])
    want = in_full(monkeypatch)
    assert_same(outputs(), want)
    assert resumed_from() == size + 1


@pytest.mark.parametrize("damage", ["UPDATE run_facts SET facts = NULL",
                                    "UPDATE run_facts SET facts = 'not facts'",
                                    "UPDATE run_facts SET facts = '[1, 2, 3]'",
                                    "DELETE FROM run_facts"])
def test_facts_the_copy_lacks_make_the_run_be_read_whole(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    build(tmp_path)
    want = in_full(monkeypatch)
    assert run_cli("brief").code == 0  # the copy
    with sqlite3.connect(copy_db()) as conn:
        conn.execute(damage)
    assert resumed_from() > 0
    assert_same(outputs(), want)


def test_facts_of_another_version_make_the_copy_again(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path)
    assert run_cli("brief").code == 0
    with sqlite3.connect(copy_db()) as conn:
        (state,) = conn.execute("SELECT value FROM meta WHERE name = 'state'").fetchone()
        conn.execute("UPDATE meta SET value = ? WHERE name = 'state'",
                     (orjson.dumps({**orjson.loads(state), "facts": 0}).decode(),))
    assert resumed_from() == 0  # checked in full, and the copy made again
    assert resumed_from() > 0
    assert_same(outputs(), in_full(monkeypatch))


def test_long_runs_give_the_same_outputs_from_their_item_arrays(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs past runfacts.BY_VALUE_FROM items: read whole (no copy), their figures come from
    the item arrays the report builds; checked with a copy, from the check's own sums. Binary
    and continuous scores, missing items: every output is the same either way."""
    from logbook.format.runfacts import BY_VALUE_FROM

    n = BY_VALUE_FROM + 52
    long = _digest(run_cli("plan", str(write_json(tmp_path / "long.json", plan_body(
        "long", runs_per_arm=2, n_items=n, metric={"name": "acc", "kind": "mean",
                                                   "higher_is_better": True}))), "--json"))
    drafts = []
    for k in range(2):
        for i, arm in enumerate(("f16", "q8")):
            body = run_body(long, arm, n_items=n, seed=10 * k + i, missing=3 + k,
                            session="s1")
            if arm == "q8":  # continuous scores in [0, 1], many distinct values
                body["outcomes"]["score"] = [None if s is None else (j % 97) / 97 + 0.001 * k
                                             for j, s in enumerate(body["outcomes"]["score"])]
            drafts.append(draft("run", body))
    _append(tmp_path, "long.jsonl", drafts)
    reads = (("report", "long", "--json"), ("compare", "long:f16", "long:q8", "--json"),
             ("audit", "--json"), ("brief", "--json"))
    monkeypatch.setattr(sys.modules[__name__], "READS", reads)
    want = in_full(monkeypatch)
    assert want[("report", "long", "--json")][0] == 0
    assert_same(outputs(), want)  # a full check that makes the copy and the facts
    assert resumed_from() > 0
    assert_same(outputs(), want)  # resumed: the facts from the copy
