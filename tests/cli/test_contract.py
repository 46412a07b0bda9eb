"""The exit-code contract under careless and hostile input, case by case, through the public
commands: a refused input exits 2 with one sentence naming the field and changes nothing; an
environment problem exits 3; nothing here may exit 70 (a bug). Each case was a reproduced
violation before it was fixed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli


def state() -> tuple[int, str]:
    r = run_cli("log", "-n", "1", "--json")
    assert r.code == 0, r.err
    return r.json[0]["seq"] + 1, r.json[0]["digest"]


def refused(*args: str, words: tuple[str, ...] = (), code: int = 2) -> str:
    """Run a command that must be refused: exit ``code``, one line naming ``words``, and the
    ledger unchanged."""
    before = state()
    r = run_cli(*args)
    lines = r.err.strip().splitlines()
    assert r.code == code, (args, r.code, r.err)
    assert len(lines) == 1 and lines[0].startswith("logbook: "), r.err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert state() == before
    return lines[0]


@pytest.fixture
def ledger(ledger_dir: Path, tmp_path: Path) -> dict[str, Any]:
    """A plan (proportion metric), two runs and a note."""
    r = run_cli("plan", str(write_json(tmp_path / "p.json", plan_body())), "--json")
    assert r.code == 0, r.err
    runs = []
    for arm in ("f16", "q8"):
        r = run_cli("append", str(write_json(tmp_path / f"{arm}.json",
                                             draft("run", run_body("kv-q8-vs-f16", arm)))),
                    "--json")
        assert r.code == 0, r.err
        runs.append(r.json["digest"])
    return {"plan": "kv-q8-vs-f16", "runs": runs, "tmp": tmp_path, "dir": ledger_dir}


# -- references ------------------------------------------------------------------------------
@pytest.mark.parametrize("ref", ["@99999999999999999999999", "@\u0663", "@+1", "@ 1", "#-2"])
@pytest.mark.parametrize("command", [("show",), ("report",), ("log", "--plan"),
                                     ("note", "x", "--ref"), ("audit", "--plan")])
def test_seq_references_that_are_not_plain_numbers(ledger: dict[str, Any], ref: str,
                                                    command: tuple[str, ...]) -> None:
    refused(*command, ref, words=(ref.strip(),) if ref.strip() else ())


def test_huge_n_and_a_run_given_as_plan(ledger: dict[str, Any]) -> None:
    r = run_cli("log", "-n", "99999999999999999999999", "--json")
    assert r.code == 0 and len(r.json) == 4, r.err
    refused("log", "--plan", ledger["runs"][0][:12], words=("--plan", "not a plan"))


# -- scores ----------------------------------------------------------------------------------
@pytest.mark.parametrize("score", [-1.0, 2.0, 1e15, -1e-300])
def test_a_proportion_plans_scores_lie_in_the_unit_interval(ledger: dict[str, Any],
                                                            score: float) -> None:
    body = run_body("kv-q8-vs-f16", "q8")
    body["outcomes"]["score"][3] = score
    f = write_json(ledger["tmp"] / "bad.json", draft("run", body))
    refused("append", str(f), words=("body.outcomes.score[3]", "[0, 1]", "proportion"))


def test_huge_scores_are_refused_for_any_metric(ledger: dict[str, Any]) -> None:
    body = run_body(None, None)  # no plan: no metric kind to bound it, only the size limit
    body["outcomes"]["score"][0] = 1e300
    f = write_json(ledger["tmp"] / "huge.json", draft("run", body))
    refused("append", str(f), words=("outcomes.score[0]", "1e+300", "finite"))


def test_a_claims_arm_must_be_an_arm_of_its_plan(ledger: dict[str, Any]) -> None:
    cp = run_cli("checkpoint", "--json")
    body = {"statement": "zz scores 70%", "plan": run_cli("show", "kv-q8-vs-f16", "--json")
            .json["digest"], "arm": "zz", "value": 0.7, "interval": [0.6, 0.8],
            "runs": ledger["runs"], "ledger_size": cp.json["size"],
            "ledger_root": cp.json["root"], "figure": "arm_mean", "method": "run-level"}
    f = write_json(ledger["tmp"] / "claim.json", draft("claim", body))
    refused("append", str(f), words=("body.arm", "'zz'", "not an arm"))


# -- amend, band, power, compare ------------------------------------------------------------
@pytest.mark.parametrize("field", ["suite.name.x", "suite.n_items.x.y"])
def test_amend_cannot_set_inside_a_value_that_is_not_an_object(ledger: dict[str, Any],
                                                               field: str) -> None:
    refused("amend", "kv-q8-vs-f16", "--set", f"{field}=1", "--reason", "r",
            words=(f"--set {field}", "is not an object"))


@pytest.mark.parametrize("z", ["0", "-1", "nan", "inf"])
def test_band_z_must_be_a_positive_number(ledger: dict[str, Any], z: str) -> None:
    refused("band", "kv-q8-vs-f16:f16", "--z", z, words=("--z",))


@pytest.mark.parametrize("delta", ["1e-300", "1e-160"])
def test_power_with_a_vanishing_delta(ledger: dict[str, Any], delta: str) -> None:
    refused("power", "--p", "0.5", "--delta", delta, words=("delta", "too small"))


@pytest.mark.parametrize(("a", "words"), [
    ("=", ("needs a field and a value",)),
    ("model=", ("needs a field and a value",)),
    ("session:", ("names no session",)),
    ("model=nope", ("matches no run",)),
])
def test_compare_refuses_selectors_that_select_nothing(ledger: dict[str, Any], a: str,
                                                       words: tuple[str, ...]) -> None:
    refused("compare", a, "kv-q8-vs-f16:f16", words=words)


def test_compare_refuses_a_variable_no_run_has(ledger: dict[str, Any]) -> None:
    refused("compare", "kv-q8-vs-f16:q8", "kv-q8-vs-f16:f16", "--variable", "nosuch",
            words=("--variable nosuch",))


def test_audit_only_with_no_rule(ledger: dict[str, Any]) -> None:
    refused("audit", "--only", "", words=("--only",))


# -- retractions and keys --------------------------------------------------------------------
def test_what_cannot_be_retracted(ledger: dict[str, Any]) -> None:
    refused("retract", "@0", "--reason", "r", "--category", "other", words=("genesis",))
    target = ledger["runs"][0]
    assert run_cli("retract", target, "--reason", "r", "--category", "other").code == 0
    refused("retract", target, "--reason", "again", "--category", "other",
            words=("already retracted",))
    retraction = run_cli("log", "-n", "1", "--json").json[0]["digest"]
    refused("retract", retraction, "--reason", "undo", "--category", "other",
            words=("is a retraction",))


def test_revoking_the_only_key_is_refused(ledger: dict[str, Any]) -> None:
    pub = ledger["tmp"] / "me.pub"
    assert run_cli("keys", "export", "--out", str(pub)).code == 0
    refused("keys", "revoke", str(pub), "--reason", "lost", words=("only valid key",))


# -- the environment -------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e400", "soon"])
def test_lock_timeout_must_be_a_number_of_seconds(ledger: dict[str, Any],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  value: str) -> None:
    monkeypatch.setenv("LOGBOOK_LOCK_TIMEOUT", value)
    r = run_cli("note", "x")
    assert r.code == 2 and "LOGBOOK_LOCK_TIMEOUT" in r.err, r.err


def test_an_empty_file_or_a_foreign_database_is_never_made_a_ledger(ledger: dict[str, Any],
                                                                   tmp_path: Path) -> None:
    empty = tmp_path / "notes.txt"
    empty.write_bytes(b"")
    r = run_cli("--ledger", str(empty), "note", "x")
    assert r.code == 3 and "empty file" in r.err, r.err
    assert empty.read_bytes() == b""
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
    before = other.read_bytes()
    for args in (("note", "x"), ("log",)):
        r = run_cli("--ledger", str(other), *args)
        assert r.code == 3 and "not a logbook ledger" in r.err, r.err
    assert other.read_bytes() == before


def test_a_read_only_ledger_refuses_writes_with_exit_3(ledger: dict[str, Any],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # SQLite's own read-only mode stands in for read-only media
    # (tests/storage/test_readonly_media.py uses a real read-only mount and folder)
    import logbook.storage.sqlite.store
    from logbook.storage.sqlite.conn import connect_read

    real = logbook.storage.sqlite.store.connect_write
    monkeypatch.setattr(logbook.storage.sqlite.store, "connect_write", connect_read)
    before = state()
    r = run_cli("note", "x")
    assert r.code == 3 and "read-only" in r.err, r.err
    assert run_cli("verify").code == 0  # verify writes nothing anyway
    assert run_cli("audit").code in (0, 1)
    monkeypatch.setattr(logbook.storage.sqlite.store, "connect_write", real)
    assert state() == before


def test_run_refuses_a_directory_as_its_outcomes_file(ledger: dict[str, Any]) -> None:
    (ledger["dir"] / "out").mkdir()
    refused("run", "--plan", "kv-q8-vs-f16", "--arm", "q8", "--outcomes", "out", "--",
            "touch", "ran", words=("--outcomes out", "is a directory"))
    assert not (ledger["dir"] / "ran").exists()


def test_append_from_with_a_plan_but_no_arm(ledger: dict[str, Any]) -> None:
    items = write_jsonl(ledger["tmp"] / "items.jsonl", [{"id": "a", "score": 1}])
    refused("append", "--from", "jsonl", str(items), "--plan", "kv-q8-vs-f16",
            words=("--plan kv-q8-vs-f16 needs --arm",))


@pytest.mark.parametrize("where", ["a-folder", "missing/x.jsonl"])
def test_export_to_a_path_that_cannot_be_written_leaves_nothing(ledger: dict[str, Any],
                                                               where: str) -> None:
    (ledger["dir"] / "a-folder").mkdir()
    before = sorted(p.name for p in ledger["dir"].iterdir())
    refused("export", "--out", where, words=("--out", where))
    assert sorted(p.name for p in ledger["dir"].iterdir()) == before  # no stray .tmp


def test_a_draft_that_names_a_member_twice_is_refused(ledger: dict[str, Any]) -> None:
    f = ledger["tmp"] / "dup.json"
    f.write_bytes(b'{"kind": "note", "body": {"text": "shown", "refs": [], "text": "signed"}}')
    refused("append", str(f), words=("'text' appears twice",))


def test_append_from_names_the_file_whose_scores_the_plan_refuses(ledger: dict[str, Any]) -> None:
    items = write_jsonl(ledger["tmp"] / "items.jsonl", [{"id": "a", "score": 3}])
    refused("append", "--from", "jsonl", str(items), "--plan", "kv-q8-vs-f16", "--arm", "q8",
            words=(str(items), "score[0]", "[0, 1]"))


def test_a_file_whose_name_is_not_utf8_can_be_named(ledger: dict[str, Any]) -> None:
    # argv bytes that are not UTF-8 are escaped before parsing (so that text can enter
    # entries); a file whose name holds such bytes must still be found
    import os
    import subprocess
    import sys

    folder = os.fsencode(ledger["tmp"])
    name = folder + b"/note-\xff\xfe.json"
    with open(name, "wb") as fh:
        fh.write(b'{"kind": "note", "body": {"text": "from a Latin-1 file name"}}')
    before = state()
    r = subprocess.run([sys.executable.encode(), b"-m", b"logbook", b"append", name],
                       cwd=ledger["dir"], capture_output=True, timeout=60, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert state()[0] == before[0] + 1


# -- from a review of this session's changes -------------------------------------------------
def _mean_run(plan: str, arm: str, value: float, seed: int) -> dict[str, Any]:
    return draft("run", {"plan": plan, "arm": arm, "status": "completed",
                         "apparatus": {"model": "m", "decoding": {"seed": seed}},
                         "outcomes": {"metric": "x", "id": ["i1", "i2"],
                                      "score": [value, value]}})


def _mean_plan(tmp: Path, slug: str, arms: tuple[str, ...], runs: int = 5) -> str:
    body = plan_body(slug, runs_per_arm=runs, n_items=2, arms=arms)
    body["metric"] = {"name": "x", "kind": "mean"}
    del body["success"], body["failure"]
    r = run_cli("plan", str(write_json(tmp / f"{slug}.json", body)), "--json")
    assert r.code == 0, r.err
    return str(r.json["digest"])


def test_a18_with_huge_scores_is_a_finding_not_a_crash(ledger: dict[str, Any]) -> None:
    tmp = ledger["tmp"]
    cal = _mean_plan(tmp, "cal", ("a",))
    drafts = [_mean_run(cal, "a", v, k) for k, v in enumerate((0, 1e-60, 0, 1e-60, 0))]
    assert run_cli("append", "--jsonl", str(write_jsonl(tmp / "c.jsonl", drafts))).code == 0
    assert run_cli("band", "cal:a").code == 0
    plan = _mean_plan(tmp, "big", ("a", "b"))
    drafts = [_mean_run(plan, "a", 0, 10), _mean_run(plan, "a", 1e99, 11)]
    assert run_cli("append", "--jsonl", str(write_jsonl(tmp / "b.jsonl", drafts))).code == 0
    r = run_cli("audit", "--json")
    assert r.code in (0, 1), r.err
    assert "A18" in {f["check"] for f in r.json["findings"]}
    assert run_cli("report", "big").code == 0


def test_an_amendment_cannot_make_a_plans_runs_out_of_range(ledger: dict[str, Any]) -> None:
    tmp = ledger["tmp"]
    plan = _mean_plan(tmp, "scale", ("a", "b"))
    assert run_cli("append", "--jsonl", str(write_jsonl(tmp / "s.jsonl", [
        _mean_run(plan, "a", 5.0, 1)]))).code == 0
    refused("amend", "scale", "--set", "metric.kind=proportion", "--reason", "r",
            words=("body.changes", "proportion", "outside [0, 1]"))


def test_retracting_an_amendment_cannot_leave_runs_out_of_range(ledger: dict[str, Any]) -> None:
    # kv-q8-vs-f16 measures a proportion; amended to a mean, it takes a score of 5, and
    # withdrawing the amendment would make that run a proportion of 5
    r = run_cli("amend", "kv-q8-vs-f16", "--set", "metric.kind=mean", "--reason", "r", "--json")
    assert r.code == 0, r.err
    body = run_body("kv-q8-vs-f16", "q8")
    body["outcomes"]["score"][0] = 5.0
    f = write_json(ledger["tmp"] / "five.json", draft("run", body))
    assert run_cli("append", str(f)).code == 0
    refused("retract", r.json["digest"], "--reason", "undo", "--category", "other",
            words=("body.target", "outside [0, 1]"))


def test_deeply_nested_json_is_refused_not_a_crash(ledger: dict[str, Any]) -> None:
    f = ledger["tmp"] / "deep.json"
    f.write_bytes(b'{"kind":"note","body":{"text":"x","refs":[],"extra":' + b"[" * 990
                  + b"]" * 990 + b"}}")
    refused("append", str(f), words=("deep.json",))


def test_a_checkpoint_that_cannot_be_written_out_is_not_kept(ledger: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    import errno
    import os

    kept = run_cli("log", "--checkpoints", "--json").json

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    real = os.fsync
    monkeypatch.setattr(os, "fsync", full)
    r = run_cli("checkpoint", "--out", str(ledger["tmp"] / "cp.txt"))
    monkeypatch.setattr(os, "fsync", real)
    assert r.code == 3 and "No space left" in r.err, r.err
    assert run_cli("log", "--checkpoints", "--json").json == kept
    assert not (ledger["tmp"] / "cp.txt").exists()
