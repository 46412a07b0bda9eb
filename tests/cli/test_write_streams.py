"""Writing commands print the same way: what they appended on stdout, one line `SEQ DIGEST
KIND` per entry (the data a script takes), and only `logbook: ` lines on stderr
(confirmations and warnings)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli

LINE = re.compile(r"(\d+) ([0-9a-f]{64}) ([a-z]+)")
SLUG = "kv-q8-vs-f16"


def _appended(out: str, kind: str) -> list[tuple[int, str]]:
    """The entries a command's stdout names, each line checked to be exactly the data."""
    rows = []
    for line in out.splitlines():
        m = LINE.fullmatch(line)
        assert m is not None, f"stdout holds more than the data: {line!r}"
        assert m.group(3) == kind, line
        rows.append((int(m.group(1)), m.group(2)))
    assert rows, "nothing printed on stdout"
    return rows


def _only_logbook_lines(err: str) -> None:
    for line in err.splitlines():
        assert line.startswith("logbook: "), f"stderr line without the prefix: {line!r}"


def test_every_writing_command_prints_the_data_on_stdout(ledger_dir: Path,
                                                          tmp_path: Path) -> None:
    # a plan too small for its own min_effect: plan warns, on stderr
    commands = [
        (["plan", str(write_json(tmp_path / "p.json", plan_body(n_items=20)))], "plan"),
        (["append", "--jsonl", str(write_jsonl(tmp_path / "r.jsonl", [
            draft("run", run_body(SLUG, arm, n_items=20, seed=s))
            for s, arm in enumerate(("f16", "q8", "f16", "q8"))]))], "run"),
        (["append", str(write_json(tmp_path / "n.json", draft(
            "note", {"text": "from a file", "refs": []})))], "note"),
        (["amend", SLUG, "--set", "due=2030-01-01", "--reason", "later"], "amendment"),
        (["note", "token ghp_" + "a" * 36 + " pasted"], "note"),  # redacted: a warning
        (["claim", SLUG, "--arm", "f16", "--statement", "f16 holds"], "claim"),
        (["retract", "@2", "--reason", "wrong build", "--category", "data_error"],
         "retraction"),
    ]
    seen: list[tuple[int, str]] = []
    warned = 0
    for args, kind in commands:
        r = run_cli(*args)
        assert r.code == 0, (args, r.err)
        seen += _appended(r.out, kind)
        _only_logbook_lines(r.err)
        warned += bool(r.err)
    assert warned >= 2  # the plan's power warning and the note's redaction: stderr, not stdout
    log = {(e["seq"], e["digest"]) for e in run_cli("log", "--json").json}
    assert set(seen) <= log and len(seen) == len(set(seen)) == 10


def test_json_is_the_data_too(ledger_dir: Path, tmp_path: Path) -> None:
    r = run_cli("note", "hello", "--json")
    assert r.code == 0 and r.err == ""
    entry = r.json
    assert set(entry) == {"seq", "digest", "entry"} and entry["entry"]["kind"] == "note"
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "n.jsonl", [
        draft("note", {"text": t, "refs": []}) for t in ("a", "b")])), "--json")
    assert r.code == 0 and [e["entry"]["body"]["text"] for e in r.json] == ["a", "b"]


def test_run_prints_the_data_on_stdout_like_append(ledger_dir: Path, tmp_path: Path) -> None:
    """`logbook run` streams the command's own output as it comes; what logbook adds is the
    same as append's: the run on stdout as data, the confirmation on stderr."""
    r = run_cli("run", "--outcomes", str(tmp_path / "never.jsonl"), "--", sys.executable,
                "-c", "import sys; sys.exit(3)")
    assert r.code == 3, r.err  # the command's own exit code
    (seq, digest), = _appended(r.out, "run")
    _only_logbook_lines(r.err)
    assert f"appended run {seq} {digest} (failed)" in r.err
    assert run_cli("show", digest, "--json").json["entry"]["body"]["status"] == "failed"


def test_init_prints_its_genesis_entry_as_the_data(tmp_path: Path) -> None:
    r = run_cli("init", str(tmp_path), "--name", "streams")
    assert r.code == 0, r.err
    ((seq, digest),) = _appended(r.out, "genesis")
    assert seq == 0
    _only_logbook_lines(r.err)
    assert "initialised ledger 'streams'" in r.err and "signed by" in r.err
    assert run_cli("--ledger", str(tmp_path), "show", "@0", "--json").json["digest"] == digest
