"""Committed items (issue 39, item 1): a run of 2,000 items whose content stays private, its
figures the same as the run in the clear; 50 rows opened as a published checkpoint's root
chooses, verified with nothing but the public key (by logbook and by the independent verifier
written from docs/format.md); every altered opening, and a subset the checkpoint did not
choose, fails. Built through the public commands."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli

N = 2000


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def _runs() -> list[dict[str, Any]]:
    out = []
    for arm, seed, p in (("f16", 1, 0.72), ("q8", 2, 0.69)):
        body = run_body("kv", arm, n_items=N, seed=seed, p=p)
        body["outcomes"]["content"] = [f"Q{i}: what is {i} + {seed}? A: {i + seed}"
                                       for i in range(N)]
        out.append(body)
    return out


def _ledger(where: Path, committed: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    where.mkdir()
    monkeypatch.chdir(where)
    ok("init", ".", "--name", "private")
    ok("plan", str(write_json(where / "kv.json", plan_body("kv", runs_per_arm=1,
                                                           n_items=N))))
    for i, body in enumerate(_runs()):
        if committed:
            ok("append", str(write_json(where / f"r{i}.json", draft("run", body))),
               "--commit-items", str(where / "salts.jsonl"))
        else:
            clear = copy.deepcopy(body)
            del clear["outcomes"]["content"]
            ok("append", str(write_json(where / f"r{i}.json", draft("run", clear))))
    return dict(orjson.loads(ok("report", "kv", "--json")))


def _figures(report: dict[str, Any]) -> Any:
    """The report without what names entries (digests, seqs, times) or the ledger."""
    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()
                    if k not in ("digest", "plan_digest", "ledger", "head", "checked_at",
                                 "verified", "integrity", "runs", "ts", "entries")}
        return [walk(x) for x in v] if isinstance(v, list) else v
    return walk(report)


@pytest.fixture
def committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    clear = _ledger(tmp_path / "clear", False, monkeypatch)
    private = _ledger(tmp_path / "private", True, monkeypatch)
    ok("checkpoint", "--out", "published.checkpoint")
    ok("keys", "export", "--out", "ledger.pub")
    return {"clear": clear, "private": private, "dir": tmp_path / "private"}


def test_committed_items_keep_the_figures_and_reveal_no_content(
        committed: dict[str, Any]) -> None:
    assert committed["private"]["arms"] and committed["private"]["effects"]
    assert _figures(committed["private"]) == _figures(committed["clear"])
    where = committed["dir"]
    db = (where / ".logbook" / "ledger.db").read_bytes()
    assert b"what is 17 + 2" not in db and b"what is 17 +" not in db
    run = orjson.loads(ok("show", "@2", "--json"))["entry"]["body"]["outcomes"]
    assert "content" not in run and len(run["commitment"]) == N
    assert len(set(run["commitment"])) == N
    assert os.stat(where / "salts.jsonl").st_mode & 0o077 == 0  # the owner's alone


def _open(where: Path, *extra: str) -> dict[str, Any]:
    ok("open", "@2", "--items", "50", "--salts", "salts.jsonl", "--seed-from-checkpoint",
       "published.checkpoint", "--out", "open.json", *extra)
    return dict(orjson.loads((where / "open.json").read_bytes()))


def _verify(where: Path, doc: dict[str, Any]) -> Any:
    (where / "check.json").write_bytes(orjson.dumps(doc))
    return run_cli("verify-openings", "check.json", "--trust", "ledger.pub")


def test_fifty_openings_from_a_published_checkpoint_verify(committed: dict[str, Any]) -> None:
    import independent_verifier as iv

    where = committed["dir"]
    doc = _open(where)
    assert len(doc["openings"]) == 50 and len({o["row"] for o in doc["openings"]}) == 50
    r = _verify(where, doc)
    assert r.code == 0, r.out + r.err
    said = ("the 50 openings of run @2 verify: the rows the checkpoint at size 4 chooses, each "
            "opening its commitment to the run's id and score")
    assert r.out.strip() == said  # as docs/auditing.md prints it
    assert said in (Path(__file__).parents[2] / "docs" / "auditing.md").read_text()
    raw = _public_raw(where)
    assert iv.verify_openings(doc, raw) == []
    # the same rows whoever asks: the checkpoint chose them, not the owner
    again = _open(where)
    assert [o["row"] for o in again["openings"]] == [o["row"] for o in doc["openings"]]


def _public_raw(where: Path) -> bytes:
    import base64

    text = (where / "ledger.pub").read_text()
    for token in text.replace(":", " ").split():
        try:
            raw = base64.b64decode(token, validate=True)
        except ValueError:
            continue
        if len(raw) == 32:
            return raw
    raise AssertionError(f"no public key in {text!r}")


@pytest.mark.parametrize("change", ["salt", "content", "score", "id"])
def test_an_altered_opening_fails(committed: dict[str, Any], change: str) -> None:
    import independent_verifier as iv

    where = committed["dir"]
    doc = _open(where)
    o = doc["openings"][7]
    if change == "salt":
        o["salt"] = ("0" if o["salt"][0] != "0" else "1") + o["salt"][1:]
    elif change == "content":
        o["content"] += " (edited)"
    elif change == "score":
        o["score"] = 1.0 - (o["score"] or 0.0)
    else:
        o["id"] = "item-9999x"
    r = _verify(where, doc)
    assert r.code == 1 and f"row {o['row']}" in r.out, r.out
    assert iv.verify_openings(doc, _public_raw(where)) != []


def test_a_subset_the_checkpoint_did_not_choose_fails(committed: dict[str, Any]) -> None:
    import independent_verifier as iv

    where = committed["dir"]
    doc = _open(where)
    chosen = {o["row"] for o in doc["openings"]}
    other = next(i for i in range(N) if i not in chosen)
    salts = orjson.loads((where / "salts.jsonl").read_bytes().splitlines()[1])
    run = orjson.loads(ok("show", "@2", "--json"))["entry"]["body"]["outcomes"]
    # a true opening of a row the owner likes better, in place of one it was asked for
    doc["openings"][0] = {"row": other, "id": run["id"][other], "score": run["score"][other],
                          "content": salts["content"][other], "salt": salts["salts"][other]}
    r = _verify(where, doc)
    assert r.code == 1 and "not the 50 the checkpoint at size" in r.out, r.out
    assert "rows not the ones the checkpoint chooses" in iv.verify_openings(
        doc, _public_raw(where))


def test_openings_need_the_key_that_signed_them(committed: dict[str, Any],
                                                tmp_path: Path) -> None:
    where = committed["dir"]
    doc = _open(where)
    ok("keys", "new", "--out", str(tmp_path / "other.key"))
    os.environ["LOGBOOK_KEY"], saved = str(tmp_path / "other.key"), os.environ.get(
        "LOGBOOK_KEY")
    try:
        ok("keys", "export", "--out", "other.pub")
    finally:
        if saved is None:
            del os.environ["LOGBOOK_KEY"]
        else:
            os.environ["LOGBOOK_KEY"] = saved
    (where / "check.json").write_bytes(orjson.dumps(doc))
    r = run_cli("verify-openings", "check.json", "--trust", "other.pub")
    assert r.code == 1 and "not signed by the trusted key" in r.out, r.out


def test_bad_requests_change_nothing(committed: dict[str, Any]) -> None:
    where = committed["dir"]
    before = run_cli("log", "--json").json
    for args, field in (
            (["open", "@1", "--items", "5", "--salts", "salts.jsonl", "--out", "x.json"],
             "RUN @1"),
            (["open", "@2", "--items", "2001", "--salts", "salts.jsonl", "--out", "x.json"],
             "--items 2001"),
            (["open", "@2", "--items", "5", "--salts", "missing.jsonl", "--out", "x.json"],
             "missing.jsonl")):
        r = run_cli(*args)
        assert r.code == 2 and field in r.err, (args, r.err)
    assert not (where / "x.json").exists()
    # a draft whose content does not fit is refused before any salt is kept
    lines = (where / "salts.jsonl").read_bytes().count(b"\n")
    bad = run_body("kv", "q8", n_items=3, seed=9)
    bad["outcomes"]["content"] = ["a", "b"]
    r = run_cli("append", str(write_json(where / "bad.json", draft("run", bad))),
                "--commit-items", "salts.jsonl")
    assert r.code == 2 and "outcomes.content" in r.err, r.err
    r = run_cli("append", str(write_json(where / "once.json", draft("run", bad))),
                "--commit-items", "salts.jsonl", "--once", "k")
    assert r.code == 2 and "--once" in r.err, r.err
    assert (where / "salts.jsonl").read_bytes().count(b"\n") == lines
    assert run_cli("log", "--json").json == before
