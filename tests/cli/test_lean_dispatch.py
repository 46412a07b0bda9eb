"""The lean start (logbook.cli.lean) runs `append`, `note`, `log` and `brief` without typer, and
behaves as the typer application does: the same output, exit code and ledger for every command
line it takes, and typer itself for every one it declines."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from conftest import CliResult, run_cli

from logbook.cli import lean, main
from logbook.ledger.service import Ledger

# command lines the lean start reads (FILE names are in the drafts folder, given as D/...)
LEAN = [
    ["note", "a finding"],
    ["note", "x", "--ref", "@0"],
    ["note", "--json", "hello"],
    ["note", "a", "--ref=@0", "--ref", "@0"],
    ["note", "see https://user:hunter2@example.org/x"],
    ["note", "bad ref", "--ref", "nothing-of-the-kind"],
    ["note", ""],
    ["--debug", "note", "y"],
    ["--ledger", ".", "note", "z"],
    ["--ledger=.", "--debug", "note", "z"],
    ["--ledger", "nowhere", "note", "z"],
    ["append", "D/note.json"],
    ["append", "D/note.json", "--json"],
    ["append", "--jsonl", "D/two.jsonl"],
    ["append", "--jsonl", "D/empty.jsonl"],
    ["append", "--once", "k1", "D/note.json"],
    ["append", "--once=", "D/note.json"],
    ["append"],
    ["append", "D/missing.json"],
    ["append", "D/bad.json"],
    ["append", "D/list.json"],
    ["append", "D/extra.json"],
    ["append", "D/badrun.json"],
    ["append", "D/run.json"],
    ["append", "-"],
    ["log"],
    ["log", "-n", "2"],
    ["log", "-n", " 3 "],
    ["log", "-n", "0", "--json"],
    ["log", "--kind", "note", "-n", "1"],
    ["log", "--kind=plan"],
    ["log", "--kind", "nothing"],
    ["log", "--plan", "no-such-plan"],
    ["log", "--checkpoints"],
    ["--ledger", ".", "log", "--json"],
    ["--ledger", "nowhere", "log"],
    ["brief"],
    ["brief", "--json"],
    ["brief", "--since", "0"],
    ["brief", "--since=1", "--json"],
    ["--ledger", "nowhere", "brief"],
]

# command lines it leaves to typer: help, usage errors, other commands, declined options
DECLINED = [
    [], ["--debug"], ["--version"], ["-h"], ["--ledger"], ["note"],
    ["log", "-n", "x"], ["log", "-n=3"], ["log", "-n3"], ["log", "-n", "1.5"],
    ["log", "-n", "1", "-n", "2"], ["log", "extra"], ["log", "--kind"], ["log", "-h"],
    ["brief", "--since", "-1"], ["brief", "--since"], ["brief", "--since", "soon"],
    ["brief", "now"], ["brief", "--help"],
    ["note", "a", "b"], ["note", "--help"], ["note", "-h"], ["note", "a", "--ref"],
    ["note", "a", "--ref", "-x"], ["note", "--", "-a"], ["note", "a", "--jsonl"],
    ["note", "a", "--json=1"], ["note", "a", "--debug"], ["append", "-x"],
    ["append", "a", "b"], ["append", "x", "--once", "a", "--once", "b"],
    ["append", "--from", "jsonl", "x"], ["append", "--spool"], ["append", "x", "--plan", "p"],
    ["--ledger", ".", "--ledger", ".", "note", "x"], ["appendix", "x"],
]

STDIN = b'{"kind": "note", "body": {"text": "from stdin"}}'


def _drafts(folder: Path) -> None:
    folder.mkdir()
    (folder / "note.json").write_text('{"kind": "note", "body": {"text": "hello"}}')
    (folder / "two.jsonl").write_text('{"kind": "note", "body": {"text": "one"}}\n\n'
                                      '{"kind": "note", "body": {"text": "two"}}\n')
    (folder / "empty.jsonl").write_text("\n")
    (folder / "bad.json").write_text('{"kind": ')
    (folder / "list.json").write_text("[1]")
    (folder / "extra.json").write_text('{"kind": "note", "body": {}, "seq": 3}')
    (folder / "badrun.json").write_text('{"kind": "run", "body": {"status": "done"}}')
    (folder / "run.json").write_text(
        '{"kind": "run", "body": {"plan": null, "status": "completed", "apparatus": '
        '{"model": "m", "engine": "e", "engine_build": "1", "decoding": {"temperature": 0.0, '
        '"seed": 1}}, "outcomes": {"metric": "acc", "id": ["a", "b", "c"], "score": '
        '[1.0, 0.25, null], "error": [null, null, "timeout"]}}}')


def _typer_only(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> CliResult:
    """`logbook ARGS` with the lean start switched off: the typer application runs them."""
    with monkeypatch.context() as mp:
        mp.setattr(lean, "lean_call", lambda _args, _env: None)
        return run_cli(*args, stdin=STDIN)


def _entries(folder: Path) -> list[tuple[int, str, Any]]:
    with Ledger.open(str(folder)) as ledger:
        found = [ledger.entry_at(seq) for seq in range(ledger.size())]
    return [(e.seq, e.kind, e.envelope["body"]) for e in found if e is not None]


def _same(text: str) -> str:
    """Output with what differs between two appends of the same draft (its time, hence its
    digest and signature) replaced."""
    text = re.sub(r"[0-9a-f]{64}", "DIGEST", text)
    return re.sub(r'"ts": "[^"]+"', '"ts": "TS"', text)


@pytest.mark.parametrize("args", LEAN, ids=" ".join)
def test_lean_and_typer_paths_print_exit_and_write_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    assert run_cli("init", str(origin), "--name", "same").code == 0
    _drafts(tmp_path / "D")
    args = [str(tmp_path / a) if a.startswith("D/") else a for a in args]
    assert lean.lean_call(args, {}) is not None  # this case does take the lean start
    results, ledgers = [], []
    for name, runner in (("lean", lambda: run_cli(*args, stdin=STDIN)),
                         ("typer", lambda: _typer_only(monkeypatch, args))):
        folder = tmp_path / name
        shutil.copytree(origin, folder)
        monkeypatch.chdir(folder)
        results.append(runner())
        ledgers.append(_entries(folder))
    lean_r, typer_r = results
    assert lean_r.code == typer_r.code
    assert _same(lean_r.out) == _same(typer_r.out)
    assert _same(lean_r.err) == _same(typer_r.err)
    assert ledgers[0] == ledgers[1]
    if lean_r.code != 0:  # refused: nothing written, and one sentence said why
        assert ledgers[0] == _entries(origin)
        assert lean_r.err.startswith("logbook: ")


def test_once_returns_the_same_entry_on_either_path(ledger_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (ledger_dir / "d.json").write_text('{"kind": "note", "body": {"text": "once"}}')
    first = run_cli("append", "--once", "step-1", "d.json", "--json")
    again = _typer_only(monkeypatch, ["append", "d.json", "--once=step-1", "--json"])
    assert first.code == again.code == 0
    assert first.out == again.out  # byte for byte: the entry the first append wrote


@pytest.mark.parametrize("args", DECLINED, ids=lambda a: " ".join(a) or "(none)")
def test_what_the_lean_start_does_not_read_goes_to_typer(ledger_dir: Path,
                                                         args: list[str]) -> None:
    assert lean.lean_call(args, {}) is None
    r = run_cli(*args)
    assert r.code in (0, 2, 3), r.err  # typer's help or usage error, or the command's own
    if r.code == 2 and "--" not in args:  # a usage error, in typer's words
        assert r.err.startswith("logbook: ") and r.err.count("\n") <= 2, r.err


def test_completion_is_left_to_typer() -> None:
    assert lean.lean_call(["note", "x"], {lean.COMPLETE_VAR: "complete_bash"}) is None


def _click_command(name: str) -> Any:
    main._register()
    return typer.main.get_command(main.app).commands[name]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(lean.COMMANDS))
def test_the_lean_table_is_the_typer_declaration(name: str) -> None:
    spec, command = lean.COMMANDS[name], _click_command(name)
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    assert tuple(p.name for p in arguments) == spec.arguments
    assert sum(p.required for p in arguments) == spec.required
    flags, values, multiple = set(), set(), set()
    for p in command.params:
        if p.param_type_name != "option":
            continue
        assert not p.secondary_opts, p.opts  # no --no-X forms to read
        for opt in p.opts:
            if opt in spec.declined:
                continue
            (flags if p.is_flag else multiple if p.multiple else values).add((opt, p.name))
    assert flags == set(spec.flags.items())
    assert values == set(spec.values.items())
    assert multiple == set(spec.multiple.items())
    declared = {o for p in command.params for o in p.opts}
    assert spec.declined <= declared
    ints = {p.name for p in command.params if p.param_type_name == "option"
            and getattr(p.type, "name", None) == "int"}
    assert ints == set(spec.ints)


def test_the_root_options_read_are_the_typer_ones() -> None:
    main._register()
    root = typer.main.get_command(main.app)
    options = {o: p for p in root.params for o in p.opts}
    for opt, name in lean.ROOT_FLAGS.items():
        assert options[opt].is_flag and options[opt].name == name
    for opt, name in lean.ROOT_VALUES.items():
        assert not options[opt].is_flag and options[opt].name == name


PROBE = """
import sys
from logbook.cli.main import run
code = run(sys.argv[1:])
print(sorted(m for m in ("typer", "pydantic", "rich", "numpy", "traceback") if m in sys.modules))
sys.exit(code)
"""


@pytest.mark.parametrize("args,loaded", [
    (["note", "a finding"], []),
    (["append", "d.json"], []),
    (["log", "-n", "20"], []),
    (["brief"], []),
    (["note", "--help"], ["traceback", "typer"]),
])
def test_a_cold_append_note_log_or_brief_imports_no_typer(ledger_dir: Path, args: list[str],
                                                 loaded: list[str]) -> None:
    (ledger_dir / "d.json").write_text('{"kind": "note", "body": {"text": "hello"}}')
    r = subprocess.run([sys.executable, "-c", PROBE, *args], env=dict(os.environ),
                       cwd=ledger_dir, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == repr(loaded)
