"""The shared checked copy carried on past a reader's snapshot (issue 34, item 10): a `brief`
that resumed its check at size N keeps reading while another process appends and carries the
copy on to N + k. What it reads stays the ledger as its snapshot holds it: the copy's rows
beyond N are neither read nor taken for entries missing from the ledger (the false alarm
"entries this machine checked are missing from the ledger" seen under load)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli


def _runs(tmp: Path, name: str, seeds: range) -> list[str]:
    drafts = [draft("run", run_body("kv-q8-vs-f16", ("f16", "q8")[s % 2], seed=s))
              for s in seeds]
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / name, drafts)), "--json")
    assert r.code == 0, r.err
    return [e["digest"] for e in r.json]


def test_a_reader_never_sees_the_copy_past_its_snapshot(ledger_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_CHECK_IN_FULL_BELOW", "1")
    assert run_cli("plan", str(write_json(tmp_path / "p.json",
                                          plan_body(runs_per_arm=20)))).code == 0
    mine = _runs(tmp_path, "a.jsonl", range(4))
    assert run_cli("brief", "--json").code == 0  # the copy, at this size
    mine += _runs(tmp_path, "b.jsonl", range(4, 6))  # the reader's check carries it on

    from logbook.cli.state import ANALYSED_KINDS, checked_reading
    from logbook.ledger.service import Ledger

    with Ledger.open(ledger_dir) as ledger, checked_reading(ledger, ANALYSED_KINDS,
                                                            runs=True) as checked:
        assert checked.resumed  # read from the copy, as a brief under load is
        size = checked.entries
        # meanwhile another process appends and its brief carries the copy on past `size`
        script = (f"import sys; sys.path[:0] = {[str(Path(__file__).parents[1])]!r}\n"
                  "from conftest import run_cli\n"
                  "from builders import draft, run_body\n"
                  "import json, pathlib\n"
                  f"p = pathlib.Path({str(tmp_path / 'c.jsonl')!r})\n"
                  "p.write_text(''.join(json.dumps(draft('run', run_body('kv-q8-vs-f16', "
                  "'f16', seed=s))) + '\\n' for s in range(10, 13)))\n"
                  "assert run_cli('append', '--jsonl', str(p)).code == 0\n"
                  "r = run_cli('brief', '--json')\n"
                  "assert r.code == 0, r.err\n"
                  "print(r.json['integrity']['verified']['entries'])\n")
        other = subprocess.run([sys.executable, "-c", script], cwd=ledger_dir,
                               env=os.environ.copy(), capture_output=True, text=True,
                               timeout=300, check=False)
        assert other.returncode == 0, other.stderr
        assert int(other.stdout.strip()) == size + 3  # the copy now covers more than `size`
        reads = checked.reads
        runs = reads.entries_where("run")
        assert [e.digest for e in runs] == mine
        assert [e.digest for e in reads.entries_where("run", last=2)] == mine[-2:]
        assert all(e.seq < size for e in reads.entries_mentioning(("run",), -1, ["f16"]))
    # and the next brief sees everything
    assert run_cli("brief", "--json").json["ledger"]["size"] == size + 3
