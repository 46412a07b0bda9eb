"""docs/publishing.md's examples run, verbatim and in order, against a fresh ledger; the
commands it names have help text."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from conftest import run_cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "publishing.md"


def test_the_publishing_examples_run(tmp_path: Path) -> None:
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 3
    outputs = []
    for block in blocks:
        for line in block.strip().splitlines():
            args = shlex.split(line)
            assert args[0] == "logbook", line
            r = run_cli(*args[1:])
            assert r.code == 0, (line, r.out, r.err)
            outputs.append(r.out)
    assert "verified 2 entries" in outputs[3]
    assert "from size 2" in outputs[-2]
    assert "verified 3 entries" in outputs[-1]
    assert (tmp_path / "work" / "copy" / "mirror" / "checkpoints" / "3").is_file()


@pytest.mark.parametrize("command", ["publish", "mirror"])
def test_the_commands_have_help(command: str) -> None:
    r = run_cli(command, "--help")
    assert r.code == 0 and len(r.out) > 200 and command in r.out
