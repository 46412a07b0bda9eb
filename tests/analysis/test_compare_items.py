"""`logbook compare A B --items`: the per-item flip list, through the public commands.

The scores are written by hand, so every count below is known before the command runs; a
missing or failed item is "not comparable", never a zero."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli

SLUG = "kv-q8-vs-f16"


def _run(arm: str, scores: dict[str, float | None], seed: int = 0,
         status: str = "completed") -> dict[str, Any]:
    body = run_body(SLUG, arm, seed=seed, status=status)
    if status == "completed":
        body["outcomes"] = {"metric": "acc", "id": list(scores), "score": list(scores.values()),
                            "error": [None if v is not None else "timed out"
                                      for v in scores.values()]}
    return draft("run", body)


A = {"i0": 1.0, "i1": 0.0, "i2": 1.0, "i3": None, "i4": 1.0, "i5": 0.0}
B = {"i0": 1.0, "i1": 1.0, "i2": 0.0, "i3": 1.0, "i4": None, "i5": 0.0, "i6": 1.0}


def _ledger(tmp: Path, drafts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    r = run_cli("plan", str(write_json(tmp / "p.json", plan_body(runs_per_arm=2, n_items=7))))
    assert r.code == 0, r.err
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / "r.jsonl", drafts)), "--json")
    assert r.code == 0, r.err
    return list(r.json)


def test_two_runs_flip_list_counts_and_power(ledger_dir: Path, tmp_path: Path) -> None:
    a, b = _ledger(tmp_path, [_run("f16", A), _run("q8", B)])
    r = run_cli("compare", f"@{a['seq']}", b["digest"][:12], "--items", "--json")
    assert r.code == 0, r.err
    res = r.json
    assert res["counts"] == {"improved": 1, "regressed": 1, "unchanged": 2,
                             "not_comparable": 3, "compared": 4}
    assert res["improved"] == [{"id": "i1", "a": 0.0, "b": 1.0}]
    assert res["regressed"] == [{"id": "i2", "a": 1.0, "b": 0.0}]
    assert res["unchanged"] == ["i0", "i5"]
    assert {x["id"]: x["missing_on"] for x in res["not_comparable"]} == \
        {"i3": "a", "i4": "b", "i6": "a"}
    assert res["discordance"] == 0.5 and res["binary"] is True
    power = res["power"]
    assert power["p"] == 0.5 and power["n"] == 4
    # the pointer is a command that runs, and says what it says: 4 items detect nothing
    assert power["min_detectable_effect"] is None and "cannot detect" in power["why_not"]
    pw = run_cli(*power["command"].split()[1:])
    assert pw.code == 2 and power["why_not"] in pw.err

    text = run_cli("compare", f"@{a['seq']}", f"@{b['seq']}", "--items")
    assert text.code == 0, text.err
    assert ("items: 1 improved, 1 regressed, 2 unchanged (of 4 compared); 3 not comparable"
            in text.out)
    assert "  i1  0 -> 100" in text.out and "  i2  100 -> 0" in text.out
    assert "  i3  no score on A" in text.out and "  i4  no score on B" in text.out
    assert power["command"] in text.out


def test_a_failed_run_is_missing_never_zero(ledger_dir: Path, tmp_path: Path) -> None:
    a, failed = _ledger(tmp_path, [_run("f16", A), _run("q8", B, status="failed")])
    r = run_cli("compare", f"@{a['seq']}", f"@{failed['seq']}", "--items", "--json")
    assert r.code == 0, r.err
    res = r.json
    assert res["b"]["usable"] == 0 and res["b"]["runs"][0]["status"] == "failed"
    assert res["counts"]["compared"] == 0 and res["counts"]["regressed"] == 0
    assert res["counts"]["not_comparable"] == len(A)
    assert res["discordance"] is None and res["power"] is None


def test_two_arms_average_their_runs_and_drop_retracted(ledger_dir: Path,
                                                        tmp_path: Path) -> None:
    b2 = dict(B, i0=0.0)
    entries = _ledger(tmp_path, [_run("f16", A, 1), _run("f16", A, 2), _run("q8", B, 3),
                                 _run("q8", b2, 4)])
    arms = (f"{SLUG}:f16", f"{SLUG}:q8")
    res = run_cli("compare", *arms, "--items", "--json").json
    # i0: 1 on A, mean 0.5 on B: regressed; the means are not binary any more
    assert [x["id"] for x in res["regressed"]] == ["i0", "i2"]
    assert res["regressed"][0] == {"id": "i0", "a": 1.0, "b": 0.5}
    assert res["binary"] is False
    # the discordance power takes: run against run, pooled over the 2 x 2 pairs (2 + 3 of 8)
    assert res["discordance"] == (2 * 2 + 2 * 3) / 16
    r = run_cli("retract", entries[-1]["digest"], "--reason", "wrong build",
                "--category", "data_error")
    assert r.code == 0, r.err
    res = run_cli("compare", *arms, "--items", "--json").json
    assert [x["id"] for x in res["regressed"]] == ["i2"]
    assert res["b"]["usable"] == 1 and len(res["b"]["runs"]) == 2


def test_compare_items_bad_input(ledger_dir: Path, tmp_path: Path) -> None:
    a, b = _ledger(tmp_path, [_run("f16", A), _run("q8", B)])
    before = run_cli("log", "--json").json
    r = run_cli("compare", f"@{a['seq']}", f"@{b['seq']}", "--items", "--variable", "model")
    assert r.code == 2 and "--variable" in r.err
    r = run_cli("compare", "@0", f"@{b['seq']}", "--items")
    assert r.code == 2 and "@0" in r.err and "not a run" in r.err
    r = run_cli("compare", "@99", f"@{b['seq']}", "--items")
    assert r.code == 2 and "@99" in r.err
    r = run_cli("compare", f"{SLUG}:bf16", f"@{b['seq']}", "--items")
    assert r.code == 2 and "bf16" in r.err
    assert run_cli("log", "--json").json == before


def test_the_power_pointer_quotes_what_power_prints(ledger_dir: Path, tmp_path: Path) -> None:
    r = run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(n_items=200))))
    assert r.code == 0, r.err
    drafts = [draft("run", run_body(SLUG, arm, n_items=200, seed=s, p=0.7))
              for arm, s in (("f16", 1), ("q8", 2))]
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "r.jsonl", drafts)), "--json")
    assert r.code == 0, r.err
    a, b = r.json
    res = run_cli("compare", f"@{a['seq']}", f"@{b['seq']}", "--items", "--json").json
    c = res["counts"]
    assert c["compared"] == 200 and c["improved"] + c["regressed"] + c["unchanged"] == 200
    assert res["discordance"] == (c["improved"] + c["regressed"]) / 200
    pointer = res["power"]
    pw = run_cli(*pointer["command"].split()[1:], "--json")
    assert pw.code == 0, pw.err
    assert pw.json["n"] == 200 and pw.json["paired"] is True
    assert pw.json["discordance"] == float(f"{res['discordance']:.4g}")
    assert pw.json["min_detectable_effect"] == pointer["min_detectable_effect"]


def test_the_reporting_doc_example_is_what_the_demo_gives(tmp_path: Path) -> None:
    """docs/reporting.md's `compare --items` example: its sh line run on a fresh demo
    ledger (through bash, as a reader would), its output the text block beneath it."""
    import os
    import re
    import subprocess
    import sys

    doc = (Path(__file__).resolve().parents[2] / "docs" / "reporting.md").read_text()
    section = doc.split("## Item by item: `compare A B --items`", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```sh\n(.*?)\n```\s*```text\n(.*?)\n```", section, flags=re.S)
    assert found is not None
    command, shown = found.groups()
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("LOGBOOK_KEY", None)
    r = subprocess.run([sys.executable, "-m", "logbook", "demo", "--dir", str(tmp_path / "d")],
                       env={k: v for k, v in env.items() if k != "LOGBOOK_DIR"},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", command],
                       env={**env, "LOGBOOK_DIR": str(tmp_path / "d")}, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip() == shown.rstrip(), f"docs/reporting.md is stale:\n{r.stdout}"


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lm_eval"


def test_items_of_two_tasks_or_metrics_are_never_paired(ledger_dir: Path,
                                                         tmp_path: Path) -> None:
    """A real lm-eval output of two tasks (synth_mc scored by acc, synth_gen by exact_match):
    both doc_id axes start at "0", so pairing them by id would compare unrelated items."""
    r = run_cli("append", "--from", "lm-eval", str(FIXTURES / "run-2tasks-seed6"), "--json")
    assert r.code == 0, r.err
    gen, mc = sorted(r.json, key=lambda e: e["entry"]["body"]["task"])
    assert (gen["entry"]["body"]["task"], mc["entry"]["body"]["task"]) == ("synth_gen",
                                                                         "synth_mc")
    before = run_cli("log", "--json").json
    hashes = [f"dataset_hash={e['entry']['body']['apparatus']['dataset_hash']}"
              for e in (mc, gen)]
    for args in ([f"@{mc['seq']}", f"@{gen['seq']}", "--items"], hashes):
        r = run_cli("compare", *args)
        assert r.code == 2, (args, r.out)
        assert f"@{gen['seq']}" in r.err and f"@{mc['seq']}" in r.err
        assert "never paired" in r.err and r.err.count("\n") == 1 and r.out == ""
    # one metric, two tasks: still refused, naming both tasks
    same = [draft("run", {**run_body(None, None, seed=s), "task": t})
            for s, t in ((1, "antonym_mc"), (2, "synonym_mc"))]
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "t.jsonl", same)), "--json")
    assert r.code == 0, r.err
    a, b = r.json
    r = run_cli("compare", f"@{a['seq']}", f"@{b['seq']}", "--items")
    assert r.code == 2 and "'antonym_mc'" in r.err and "'synonym_mc'" in r.err
    assert "task" in r.err
    # the same task on both sides compares as before
    r = run_cli("compare", f"@{a['seq']}", f"@{a['seq']}", "--items")
    assert r.code == 0, r.err
    assert len(run_cli("log", "--json").json) == len(before) + 2


def test_runs_of_two_named_suites_or_splits_are_never_paired(ledger_dir: Path,
                                                             tmp_path: Path) -> None:
    """Without dataset hashes, the suite a run names (apparatus suite, or its plan's) and its
    split tell suites apart: `compare` refuses to pair a run of `capitals` with one of
    `rivers`, or a dev split with a test split, and pairs two of one suite and split."""
    def body(seed: int, **app: str) -> dict[str, Any]:
        b = run_body(None, None, seed=seed)
        b["apparatus"] = {k: v for k, v in {**b["apparatus"], **app}.items()
                          if k != "dataset_hash"}
        return draft("run", b)

    drafts = [body(1, suite="capitals", split="dev"), body(2, suite="rivers", split="dev"),
              body(3, suite="capitals", split="test"), body(4, suite="capitals", split="dev")]
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "s.jsonl", drafts)), "--json")
    assert r.code == 0, r.err
    seqs = [e["seq"] for e in r.json]
    for other, said in ((seqs[1], "'rivers (dev)'"), (seqs[2], "'capitals (test)'")):
        r = run_cli("compare", f"@{seqs[0]}", f"@{other}", "--items")
        assert r.code == 2 and "never paired" in r.err and said in r.err, r.err
    r = run_cli("compare", "suite=rivers", "split=test")  # selectors: the same rule
    assert r.code == 2 and "never paired" in r.err and "'rivers (dev)'" in r.err, r.err
    r = run_cli("compare", f"@{seqs[0]}", f"@{seqs[3]}", "--items")
    assert r.code == 0, r.err
