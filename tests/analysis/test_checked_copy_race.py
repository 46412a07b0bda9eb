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


def _append_and_brief(ledger_dir: Path, drafts: Path, seeds: range) -> int:
    """Another process appends runs of these seeds and runs `brief`, which carries the shared
    checked copy on: the size its brief verified."""
    script = (f"import sys; sys.path[:0] = {[str(Path(__file__).parents[1])]!r}\n"
              "from conftest import run_cli\n"
              "from builders import draft, run_body\n"
              "import json, pathlib\n"
              f"p = pathlib.Path({str(drafts)!r})\n"
              "p.write_text(''.join(json.dumps(draft('run', run_body('kv-q8-vs-f16', "
              f"'f16', seed=s, session='other'))) + '\\n' for s in range({seeds.start}, "
              f"{seeds.stop})))\n"
              "assert run_cli('append', '--jsonl', str(p)).code == 0\n"
              "r = run_cli('brief', '--json')\n"
              "assert r.code == 0, r.err\n"
              "print(r.json['integrity']['verified']['entries'])\n")
    other = subprocess.run([sys.executable, "-c", script], cwd=ledger_dir,
                           env=os.environ.copy(), capture_output=True, text=True,
                           timeout=300, check=False)
    assert other.returncode == 0, other.stderr
    return int(other.stdout.strip())


def test_a_reader_never_sees_the_copy_past_its_snapshot(ledger_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_cli("plan", str(write_json(tmp_path / "p.json",
                                          plan_body(runs_per_arm=20)))).code == 0
    mine = _runs(tmp_path, "a.jsonl", range(4))
    assert run_cli("brief", "--json").code == 0  # the copy, at this size
    mine += _runs(tmp_path, "b.jsonl", range(4, 6))  # the reader's check carries it on

    from logbook.ledger.read_model import ANALYSED_KINDS, checked_reading
    from logbook.ledger.service import Ledger

    with Ledger.open(ledger_dir) as ledger, checked_reading(ledger, ANALYSED_KINDS,
                                                            runs=True) as checked:
        assert checked.resumed  # read from the copy, as a brief under load is
        size = checked.entries
        reads = checked.reads
        plan = reads.plan_digest_by_slug("kv-q8-vs-f16")
        assert plan is not None
        summaries = (reads.completed_counts(), reads.run_counts([plan]),
                     reads.latest_session(), reads.plan_shapes(), reads.signing_keys())
        # meanwhile another process appends and its brief carries the copy on past `size`
        assert _append_and_brief(ledger_dir, tmp_path / "c.jsonl", range(10, 13)) == size + 3
        # brief's summaries too: not the other process's runs, nor its session
        assert (reads.completed_counts(), reads.run_counts([plan]), reads.latest_session(),
                reads.plan_shapes(), reads.signing_keys()) == summaries
        runs = reads.entries_where("run")
        assert [e.digest for e in runs] == mine
        assert [e.digest for e in reads.entries_where("run", last=2)] == mine[-2:]
        assert all(e.seq < size for e in reads.entries_mentioning(("run",), -1, ["f16"]))
    # and the next brief sees everything
    assert run_cli("brief", "--json").json["ledger"]["size"] == size + 3


def test_a_copy_carried_past_a_snapshot_before_its_check_is_no_rollback(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other order: the reader's snapshot begins (size N), then another process appends
    and its brief carries the copy to N + 3, and only then does the reader resume its check
    from the copy. The copy covers more than the snapshot holds, which is what a ledger cut
    back looks like from inside the snapshot; but the copy covered no more than N when the
    snapshot began, so it is no rollback: the reader checks its snapshot in full, reads N
    entries, and leaves the copy at N + 3 (it was "entries were removed" before)."""
    from contextlib import contextmanager

    from logbook.ledger.read_model import ANALYSED_KINDS, checked_reading
    from logbook.ledger.service import Ledger
    from logbook.storage.sqlite.store import SQLiteStore

    assert run_cli("plan", str(write_json(tmp_path / "p.json",
                                          plan_body(runs_per_arm=20)))).code == 0
    mine = _runs(tmp_path, "a.jsonl", range(4))
    size = run_cli("brief", "--json").json["ledger"]["size"]  # the copy, at this size
    original = SQLiteStore.snapshot
    raced: list[int] = []

    @contextmanager
    def racing(self: SQLiteStore) -> object:
        with original(self):
            if not raced:  # the outermost snapshot of the reader below, once
                self.head()  # a read: the snapshot holds the ledger as it is now
                raced.append(_append_and_brief(ledger_dir, tmp_path / "c.jsonl", range(10, 13)))
            yield

    monkeypatch.setattr(SQLiteStore, "snapshot", racing)
    with Ledger.open(ledger_dir) as ledger, checked_reading(ledger, ANALYSED_KINDS,
                                                            runs=True) as checked:
        assert checked.entries == size and not checked.resumed  # its snapshot, in full
        assert [row[1] for row in checked.kept.get("run", [])] == mine
    monkeypatch.setattr(SQLiteStore, "snapshot", original)
    assert raced == [size + 3]
    r = run_cli("brief", "--json")
    assert r.code == 0, r.err
    assert r.json["integrity"]["verified"]["resumed_from"] == size + 3  # the copy was kept


def test_a_slow_full_check_never_takes_back_a_copy_carried_on_meanwhile(tmp_path: Path) -> None:
    """Two checks start with no copy; the quick one makes it, a third carries it on and reads
    through it; the slow one, finishing last with a smaller ledger, must not replace it (the
    reader would find its checked entries gone from the copy: a false 'does not verify' seen
    once in 200 briefs under load). A full check replaces the copy only while it covers what
    it covered when that check began; otherwise it reads its own rows from memory."""
    from logbook.storage.sqlite.read_model import ReadModel

    copy = ReadModel.open(tmp_path / "copy.db")
    assert copy is not None

    def state(size: int) -> dict[str, object]:
        return {"ledger": "l", "size": size, "head": "h", "checked_at": "t"}

    assert copy.replace([], [], [], [], [], state(50), before=0)  # the quick check
    assert not copy.replace([], [], [], [], [], state(45), before=0)  # the slow one
    assert (copy.state() or {})["size"] == 50
    assert copy.replace([], [], [], [], [], state(60), before=50)  # a check that began at 50
    assert (copy.state() or {})["size"] == 60
    copy.close()
