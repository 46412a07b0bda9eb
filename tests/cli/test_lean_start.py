"""The commands agents call most import only what they use (issue 22's lean start, begun)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logbook.cli import main

PROBE = """
import sys
from logbook.cli.main import run
code = run(sys.argv[1:])
heavy = ("numpy", "scipy", "matplotlib", "logbook.analysis", "logbook.stats",
         "logbook.cli.analysis", "logbook.cli.record", "logbook.ingest")
print(sorted(m for m in heavy if m in sys.modules))
sys.exit(code)
"""


def _loaded(args: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    r = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return list(ast.literal_eval(r.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["note", "a finding"], ["log", "-n", "1"],
                                  ["append", "draft.json"]])
def test_writing_and_listing_import_no_statistics(ledger_dir: Path, args: list[str]) -> None:
    folder = ledger_dir
    (folder / "draft.json").write_text('{"kind": "note", "body": {"text": "hello"}}')
    assert _loaded(args, dict(os.environ), folder) == []


def test_help_lists_every_command_in_one_order_whatever_ran_first() -> None:
    main._register(["note", "x"])  # one module first, as an in-process caller would
    main._register()
    names = [main._name(info) for info in main.app.registered_commands]
    groups = {"keys", "witness", "spool", "check"}  # typer groups: listed with their subcommands
    assert names == [c for cs in main.MODULES.values() for c in cs if c not in groups]
