"""Reproductions (issue 39 item 3): a run that repeats an earlier one, linked by
`--reproduces`; two signers in one ledger; the report's agreement line; a disagreeing
reproduction flagged by the audit (A30); the in-toto export's assurance level; and every way a
link is refused, leaving the ledger as it was. Built through the public commands."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import orjson
import prebuilt
import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli
from test_audit import documented

FIXTURES = Path(__file__).parents[1] / "fixtures"


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def seq_of(out: str) -> int:
    return int(out.split()[0])


def run_file(name: str, p: float, seed: int, **extra: Any) -> str:
    body = run_body(None, None, n_items=400, seed=seed, p=p)
    body["apparatus"]["dataset_hash"] = "sha256:" + "d" * 64
    body.update(extra)
    return str(write_json(Path(name), draft("run", body)))


def _build(work: Path) -> None:
    plan = plan_body("kv", runs_per_arm=1, n_items=400,
                     suite={"name": "s", "version": "1", "n_items": 400,
                            "dataset_hash": "sha256:" + "d" * 64})
    ok("plan", str(write_json(work / "kv.json", plan)))
    for arm, seed in (("f16", 1), ("q8", 2)):
        body = run_body("kv", arm, n_items=400, seed=seed, p=0.7)
        body["apparatus"]["dataset_hash"] = "sha256:" + "d" * 64
        ok("append", str(write_json(work / f"{arm}.json", draft("run", body))))
    ok("claim", "kv", "--statement", "q8 is within five points of f16")
    ok("keys", "new", "--out", str(work / "lab2.key"))
    key = work / "lab2.key"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOGBOOK_KEY", str(key))
        ok("keys", "export", "--out", str(work / "lab2.pub"))
    ok("keys", "add", str(work / "lab2.pub"), "--name", "lab 2", "--reason", "reproduces")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> prebuilt.Prebuilt:
    return prebuilt.build_once(tmp_path_factory, "reproductions", _build)


@pytest.fixture
def ledger(built: prebuilt.Prebuilt, tmp_path: Path) -> Path:
    return prebuilt.copy_into(built, tmp_path)


def as_lab2(monkeypatch: pytest.MonkeyPatch, ledger: Path) -> None:
    monkeypatch.setenv("LOGBOOK_KEY", str(ledger / "lab2.key"))


def entries() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in ok("export").splitlines()]


def head() -> tuple[int, str]:
    lines = entries()
    return len(lines), lines[-1]["digest"]


def report() -> dict[str, Any]:
    return dict(orjson.loads(ok("report", "kv", "--json")))


def audit_checks() -> list[dict[str, Any]]:
    r = run_cli("audit", "--json")
    assert r.code in (0, 1), r.err
    return list(r.json["findings"])


def assurance() -> str:
    ok("export", "--format", "in-toto", "--out", "a.jsonl")
    line = Path("a.jsonl").read_bytes().splitlines()[1]
    statement = orjson.loads(base64.b64decode(orjson.loads(line)["payload"]))
    return str(statement["predicate"]["assuranceLevel"])


def test_an_independent_reproduction_that_agrees(ledger: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert assurance() == "self_attested"
    monkeypatch.setenv("LOGBOOK_KEY", str(ledger / "lab2.key"))
    repro = seq_of(ok("append", run_file("r.json", 0.7, 3), "--reproduces", "@3"))
    monkeypatch.delenv("LOGBOOK_KEY")
    rep = report()
    (row,) = rep["reproductions"]
    assert (row["run"], row["by"], row["independent"], row["agrees"]) == (3, repro, True, True)
    d = row["difference"]
    assert d["low"] <= 0 <= d["high"] and d["n"] == 400
    assert row["higher"] + row["lower"] > 0  # items flipped between the two runs
    text = ok("report", "kv")
    assert f"@3 reproduced by @{repro} (independent, " in text and "agrees: difference" in text
    assert "reproduced by 1 independent signer(s) in agreement" in text
    assert "A30" not in {f["check"] for f in audit_checks()}
    check = run_cli("claim", "check", "@4")  # the claim rests on @3 (and @2)
    assert "reproduced by 1 independent signer(s) in agreement" in check.out, check.out
    signers = orjson.loads(run_cli("claim", "check", "@4", "--json").out)["reproduced_by"]
    assert signers == [entries()[repro]["entry"]["signer"]]
    # one arm reproduced is not the plan reproduced; both arms are
    assert assurance() == "self_attested"
    monkeypatch.setenv("LOGBOOK_KEY", str(ledger / "lab2.key"))
    ok("append", run_file("r2.json", 0.7, 4), "--reproduces", "@2")
    monkeypatch.delenv("LOGBOOK_KEY")
    assert assurance() == "reproduced"
    assert len(report()["reproductions"]) == 2  # read again, resumed from the checked copy


def test_a_reproduction_by_the_same_signer_is_not_independent(ledger: Path) -> None:
    repro = seq_of(ok("append", run_file("r.json", 0.7, 3), "--reproduces", "@2"))
    (row,) = report()["reproductions"]
    assert row["by"] == repro and row["independent"] is False
    assert "(same signer, " in ok("report", "kv")
    assert "reproduced by 0 independent signer(s)" in ok("report", "kv")


def test_a_reproduction_that_disagrees_is_flagged(ledger: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    as_lab2(monkeypatch, ledger)
    repro = seq_of(ok("append", run_file("r.json", 0.3, 5), "--reproduces", "@3"))
    monkeypatch.delenv("LOGBOOK_KEY")
    (row,) = report()["reproductions"]
    assert row["agrees"] is False and row["difference"]["high"] < 0
    assert f"@3 reproduced by @{repro} (independent, " in ok("report", "kv")
    assert "DISAGREES" in ok("report", "kv")
    found = [f for f in audit_checks() if f["check"] == "A30"]
    assert len(found) == 1 and found[0]["severity"] == "warning" and found[0]["seq"] == 4
    documented(found[0])
    assert assurance() == "self_attested"


def test_a_reproduction_of_a_failed_run_has_no_figure(ledger: Path) -> None:
    body = run_body(None, None, n_items=400, seed=9, status="failed")
    body["apparatus"]["dataset_hash"] = "sha256:" + "d" * 64
    failed = seq_of(ok("append", str(write_json(Path("f.json"), draft("run", body))),
                       "--reproduces", "@3"))
    (row,) = report()["reproductions"]
    assert row["by"] == failed and row["difference"] is None and row["agrees"] is None
    assert "no agreement figure" in ok("report", "kv")


@pytest.mark.parametrize("args, words", [
    (["--reproduces", "@1"], "body.reproduces: entry"),  # the plan
    (["--reproduces", "@0"], "is a genesis, not a run"),
    (["--reproduces", "@99"], "there is no entry @99"),
])
def test_a_link_to_what_is_not_a_run_is_refused(ledger: Path, args: list[str],
                                                words: str) -> None:
    before = head()
    r = run_cli("append", run_file("r.json", 0.7, 3), *args)
    assert r.code == 2 and words in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1 and head() == before


def test_a_reproduction_of_another_suite_or_metric_is_refused(ledger: Path) -> None:
    before = head()
    r = run_cli("append", run_file("r.json", 0.7, 3,
                                   apparatus={"model": "m", "dataset_hash": "sha256:" + "e" * 64}),
                "--reproduces", "@3")
    assert r.code == 2 and "body.apparatus.dataset_hash" in r.err and "sha256:eee" in r.err
    other = run_body(None, None, n_items=400, seed=3)
    other["apparatus"]["dataset_hash"] = "sha256:" + "d" * 64
    other["outcomes"]["metric"] = "f1"
    r = run_cli("append", str(write_json(Path("o.json"), draft("run", other))),
                "--reproduces", "@3")
    assert r.code == 2 and "body.outcomes.metric" in r.err and "'f1'" in r.err
    no_suite = run_body(None, None, n_items=400, seed=3)  # says no dataset at all
    r = run_cli("append", str(write_json(Path("n.json"), draft("run", no_suite))),
                "--reproduces", "@3")
    assert r.code == 2 and "gives none" in r.err
    assert head() == before


def test_from_an_output_with_several_runs_is_refused(ledger: Path) -> None:
    before = head()
    r = run_cli("append", "--from", "lm-eval", str(FIXTURES / "lm_eval/run-2tasks-seed6"),
                "--reproduces", "@3")
    assert r.code == 2 and "holds 2 runs; a reproduction is one run" in r.err, r.err
    r = run_cli("append", "--spool", "--reproduces", "@3")
    assert r.code == 2 and head() == before


def test_logbook_run_records_the_link_and_refuses_a_bad_one_before_running(
        ledger: Path) -> None:
    body = run_body(None, None, n_items=400, seed=3)
    oc = body["outcomes"]
    src = Path("items.jsonl")
    src.write_text("".join(orjson.dumps({"id": i, "score": s}).decode() + "\n"
                           for i, s in zip(oc["id"], oc["score"], strict=True)))
    app = write_json(Path("app.json"), {"model": "m-7b", "dataset_hash": "sha256:" + "d" * 64})

    def run(*args: str) -> Any:
        return run_cli("run", *args, "--outcomes", "out.jsonl", "--apparatus", str(app), "--",
                       "cp", str(src), "out.jsonl")

    marker = Path("ran")
    before = head()
    r = run_cli("run", "--reproduces", "@1", "--outcomes", "out.jsonl", "--apparatus", str(app),
                "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')")
    assert r.code == 2 and "not a run" in r.err and not marker.exists() and head() == before
    first = seq_of(run().out)  # an exploratory run: its items' metric is `score`
    r = run("--reproduces", f"@{first}")
    assert r.code == 0, r.err
    last = entries()[-1]
    assert last["entry"]["body"]["reproduces"] == entries()[first]["digest"]
    # a run of another metric than the one it reproduces (@3 measured acc) is still kept, as
    # a failed run saying why: a run that happened is never lost
    r = run("--reproduces", "@3")
    assert r.code == 1
    kept = entries()[-1]["entry"]["body"]
    assert kept["status"] == "failed" and "reproduces" not in kept
    assert "a reproduction measures the same metric" in kept["reason"]


def test_verify_checks_what_a_reproduction_names(ledger: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A signer who skips the admission rules can write a link to a plan: verify and the
    independent verifier of format.md §7 both find it."""
    import independent_verifier as iv

    from logbook.ledger import admission

    draft_path = run_file("r.json", 0.7, 3, reproduces="@1")  # the plan, written in the draft
    r = run_cli("append", draft_path)
    assert r.code == 2 and "body.reproduces: entry" in r.err and "not a run" in r.err
    assert run_cli("verify").code == 0
    with monkeypatch.context() as mp:
        mp.setattr(admission, "check_state", lambda *_a: None)
        assert run_cli("append", draft_path).code == 0
    r = run_cli("verify")
    assert r.code == 1 and "body.reproduces names a plan, not a run" in r.out + r.err
    found = iv.verify_db(ledger / ".logbook" / "ledger.db")
    assert [f["message"].split(" names ")[0] for f in found] == ["entry 6: body.reproduces"]
