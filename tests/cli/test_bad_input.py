"""Bad input exits 2 with one sentence naming the field, and changes nothing (issue 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import draft, plan_body, run_body, write_json
from conftest import run_cli


@pytest.fixture
def planned(ledger_dir: Path, tmp_path: Path) -> Path:
    r = run_cli("plan", str(write_json(tmp_path / "p.json", plan_body())))
    assert r.code == 0, r.err
    r = run_cli("append", str(write_json(tmp_path / "r.json",
                                         draft("run", run_body("kv-q8-vs-f16", "f16")))))
    assert r.code == 0, r.err
    return ledger_dir


def state() -> tuple[int, str]:
    r = run_cli("log", "-n", "1", "--json")
    assert r.code == 0, r.err
    return r.json[0]["seq"] + 1, r.json[0]["digest"]


def run_with(**changes):
    body = run_body("kv-q8-vs-f16", "f16")
    for k, v in changes.items():
        if k.startswith("outcomes."):
            body["outcomes"][k.split(".", 1)[1]] = v
        else:
            body[k] = v
    return draft("run", body)


CASES = {
    # name: (file content, words the one-sentence error must contain)
    "malformed json": (b'{"kind": "note", "body": {"text": "x"', ["not valid JSON"]),
    "not an object": (b"[1, 2]", ["must be a JSON object"]),
    "unknown kind": (b'{"kind": "wish", "body": {}}', ["kind", "wish"]),
    "missing kind": (b'{"body": {}}', ["kind", "required"]),
    "extra draft field": (b'{"kind": "note", "body": {"text": "x"}, "seq": 4}', ["seq"]),
    "extra body field": (b'{"kind": "note", "body": {"text": "x", "colour": "red"}}',
                         ["body.colour"]),
    "missing body field": (b'{"kind": "note", "body": {}}', ["body.text", "required"]),
    "wrong type": (b'{"kind": "note", "body": {"text": 5}}', ["body.text"]),
    "nan": (b'{"kind": "note", "body": {"text": "x", "refs": [NaN]}}',
            ["body.refs[0]", "finite"]),
    "infinity in run": (None, ["outcomes.score[3]", "finite"]),
    "big integer": (None, ["body.apparatus.build_number", "2^53"]),
    "unknown reference": (b'{"kind": "retraction", "body": {"target": "deadbeefdeadbeef", '
                          b'"reason": "x", "category": "other"}}', ["body.target", "deadbeef"]),
    "plan is not a plan": (None, ["body.plan", "not a plan"]),
    "arm not in plan": (None, ["body.arm", "bf16"]),
    "mismatched outcome column": (None, ["outcomes.score", "outcomes.id"]),
    "integer item id": (None, ["body.outcomes.id[0]", "string"]),
    "null score without error": (None, ["outcomes.score[0]", "error"]),
    "duplicate item": (None, ["item-0001", "twice"]),
    "completed without outcomes": (None, ["outcomes"]),
    "bad retraction category": (b'{"kind": "retraction", "body": {"target": "@1", '
                                b'"reason": "x", "category": "oops"}}', ["body.category"]),
    "duplicate slug": (None, ["slug", "already exists"]),
    "hex-only slug": (None, ["slug", "non-hex"]),
    "genesis again": (None, ["genesis"]),
}


def _content(name: str, tmp_path: Path) -> bytes:
    import orjson

    fixed = CASES[name][0]
    if fixed is not None:
        return fixed
    if name == "infinity in run":
        d = run_with()
        text = orjson.dumps(d).decode()
        # put a literal Infinity where score[3] is: JSON has no such number
        scores = d["body"]["outcomes"]["score"]
        head = text.index('"score":[') + len('"score":[')
        parts = text[head:].split(",", 4)
        parts[3] = "Infinity"
        del scores
        return (text[:head] + ",".join(parts)).encode()
    if name == "big integer":
        d = run_with(apparatus={"build_number": 2**60})
    elif name == "plan is not a plan":
        d = run_with(plan="@0")
    elif name == "arm not in plan":
        d = run_with(arm="bf16")
    elif name == "mismatched outcome column":
        d = run_with(**{"outcomes.score": [1.0, 0.0]})
    elif name == "integer item id":
        d = run_with(**{"outcomes.id": list(range(50))})
    elif name == "null score without error":
        body = run_body("kv-q8-vs-f16", "f16")
        body["outcomes"]["score"][0] = None
        del body["outcomes"]["error"]
        d = draft("run", body)
    elif name == "duplicate item":
        body = run_body("kv-q8-vs-f16", "f16")
        body["outcomes"]["id"][2] = "item-0001"
        d = draft("run", body)
    elif name == "completed without outcomes":
        body = run_body("kv-q8-vs-f16", "f16")
        del body["outcomes"]
        d = draft("run", body)
    elif name == "duplicate slug":
        d = draft("plan", plan_body())
    elif name == "hex-only slug":
        d = draft("plan", plan_body(slug="cafe1234"))
    elif name == "genesis again":
        d = draft("genesis", {"name": "x", "uuid": "00000000-0000-0000-0000-000000000000",
                              "keys": [{"name": "k", "public": "A" * 43 + "="}]})
    else:  # pragma: no cover
        raise AssertionError(name)
    return orjson.dumps(d)


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_and_unchanged(name: str, planned: Path, tmp_path: Path) -> None:
    before = state()
    path = tmp_path / "draft.json"
    path.write_bytes(_content(name, tmp_path))
    r = run_cli("append", str(path))
    assert r.code == 2, (name, r.code, r.err)
    lines = [ln for ln in r.err.strip().splitlines() if ln]
    assert len(lines) == 1, r.err  # one sentence, no traceback
    for word in CASES[name][1]:
        assert word in r.err, (name, word, r.err)
    assert state() == before


def test_unreadable_file(planned: Path, tmp_path: Path) -> None:
    before = state()
    r = run_cli("append", str(tmp_path / "nope.json"))
    assert r.code == 2 and "nope.json" in r.err and "does not exist" in r.err
    r = run_cli("append", str(tmp_path))
    assert r.code == 2 and "directory" in r.err
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    locked.chmod(0)
    import os

    if os.geteuid() != 0:  # root reads anything; the directory case above still covers OSError
        r = run_cli("append", str(locked))
        assert r.code == 2 and "locked.json" in r.err
    assert state() == before


def test_bad_plan_file(ledger_dir: Path, tmp_path: Path) -> None:
    before = state()
    bad = tmp_path / "plan.toml"
    bad.write_text('slug = "x-plan"\ntitle = \n')
    r = run_cli("plan", str(bad))
    assert r.code == 2 and "TOML" in r.err
    bad.write_text('slug = "x-plan"\ntitle = "t"\nruns_per_arm = 0\n')
    r = run_cli("plan", str(bad))
    assert r.code == 2 and "body." in r.err
    assert state() == before


def test_bad_amendment_changes_nothing(planned: Path) -> None:
    before = state()
    r = run_cli("amend", "kv-q8-vs-f16", "--set", "runs_per_arm=-1", "--reason", "x")
    assert r.code == 2 and "runs_per_arm" in r.err
    r = run_cli("amend", "kv-q8-vs-f16", "--set", "colour=red", "--reason", "x")
    assert r.code == 2 and "colour" in r.err
    r = run_cli("amend", "kv-q8-vs-f16", "--set", "slug=other-slug", "--reason", "x")
    assert r.code == 2 and "slug" in r.err
    assert state() == before


def test_non_utf8_text_is_escaped_not_a_crash(ledger_dir: Path) -> None:
    from logbook.format.canonical import escape_text

    raw = b"python eval.py --out /tmp/\xff\xfe-results"
    text = escape_text(raw)
    assert text == "python eval.py --out /tmp/\\xff\\xfe-results"
    import os

    as_fs = os.fsdecode(raw)  # what sys.argv holds for such bytes
    assert escape_text(as_fs) == text
    r = run_cli("note", escape_text(as_fs))
    assert r.code == 0, r.err


def test_non_utf8_argv_through_the_console_script(ledger_dir: Path) -> None:
    import os
    import subprocess
    import sys

    arg = b"context from /data/\xff\xfe-run"
    r = subprocess.run([sys.executable, "-m", "logbook", "note", arg, "--json"],
                       capture_output=True, cwd=ledger_dir, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    import orjson

    assert orjson.loads(r.stdout)["entry"]["body"]["text"] == "context from /data/\\xff\\xfe-run"
