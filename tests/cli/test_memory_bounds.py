"""Bounded memory on long strings (issue 34, item 8): the checks made before a parser sees a
file cost a small constant per byte, so a legal 15 MiB note appends within a few times its
size, and a draft too large to be an entry is refused (exit 2) before any parser holds it.

Each command runs in a child process whose address space is capped (RLIMIT_AS): the cap is
what the same command needs for a small note plus eight times the input's size (about six
are used: the file, its parse, the canonical bytes, their parse, the row written), which the
old pre-parse check (about 120 bytes of memory per byte of a string) and orjson's worst-case
buffers (about 12 bytes a byte) overran by far."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

MIB = 1 << 20


def _append(path: Path, cap: int) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return subprocess.run([sys.executable, "-m", "logbook", "append", str(path)],
                          preexec_fn=limit, capture_output=True, text=True, timeout=300,
                          env=os.environ.copy(), check=False)


def _smallest_cap(path: Path) -> int:
    """The least address-space cap (to 8 MiB) under which a small note appends."""
    for cap in range(32 * MIB, 2048 * MIB, 8 * MIB):
        if _append(path, cap).returncode == 0:
            return cap
    pytest.fail("a small note does not append under 2 GiB of address space")


def _note(path: Path, size: int) -> Path:
    path.write_text(json.dumps({"kind": "note", "body": {"text": "a" * size}}))
    return path


@pytest.mark.slow
def test_a_15_mib_note_appends_within_a_few_times_its_size(ledger_dir: Path,
                                                           tmp_path: Path) -> None:
    base = _smallest_cap(_note(tmp_path / "small.json", 10))
    size = 15 * MIB - 4096
    r = _append(_note(tmp_path / "big.json", size), base + 8 * size)
    assert r.returncode == 0, r.stderr[-500:]


def test_a_draft_too_large_for_an_entry_is_refused_before_parsing(ledger_dir: Path,
                                                                  tmp_path: Path) -> None:
    from conftest import run_cli

    before = run_cli("log", "--json").json
    big = _note(tmp_path / "huge.json", 40 * MIB)
    r = run_cli("append", str(big))
    assert r.code == 2 and r.err.count("\n") == 1, r.err
    assert "huge.json" in r.err and "16 MiB" in r.err
    assert run_cli("log", "--json").json == before
