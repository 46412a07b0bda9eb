"""This machine's checked copy damaged, or met from another folder (a review found each): no
analysis crashes (exit 70) or blames an honest ledger for what the copy lost.

* bytes of a page of the copy garbled: every analysis either gives the output it gives without
  a copy, or exits 3 naming the copy (removed, so the next command checks the ledger in full
  and gives that output);
* a run's facts row of another shape: never a crash; facts that cannot be the copy's (a
  type no run's facts have) are not read, the run is read whole and the figures unchanged
  (a number changed within its type is the copy's word: it is trusted, docs/auditing.md §7);
* `--ledger .` names the folder the command runs in: two clones of one ledger are two places,
  each with its own copy, not one copy that the other then contradicts.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli

from logbook.format.runfacts import decode

SLUG = "kv-q8-vs-f16"
READS = (("brief", "--json"), ("audit", "--json"), ("report", SLUG, "--json"))
COPY_DAMAGED = "this machine's checked copy of the ledger"


def _ledger(tmp_path: Path) -> None:
    assert run_cli("plan", str(write_json(tmp_path / "plan.json", plan_body()))).code == 0
    runs = [draft("run", run_body(SLUG, ("f16", "q8")[s % 2], seed=s, session=f"s-{s}"))
            for s in range(4)]
    notes = [draft("note", {"text": f"step {i}: " + "looked fine " * 40}) for i in range(400)]
    assert run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "d.jsonl",
                                                        runs + notes))).code == 0


def _without_copy(read: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> tuple[int, Any]:
    with monkeypatch.context() as m:
        m.setenv("LOGBOOK_STATE_DIR", "off")
        r = run_cli(*read)
    return r.code, _figures(r.out)


def _figures(out: str) -> Any:
    """The output, less what says how it was checked (full or resumed) and the audit's record."""
    found = orjson.loads(out)
    for key in ("integrity", "audit"):
        found.pop(key, None)
    return found


def _copy() -> Path:
    [path] = sorted((Path.home() / "state" / "logbook" / "checked").glob("*.db"))
    return path


def _garble(path: Path, page: int) -> None:
    data = bytearray(path.read_bytes())
    for i in range(page * 4096 + 100, min(len(data), page * 4096 + 600)):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def test_a_garbled_copy_is_removed_never_a_crash_nor_the_ledgers_fault(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _ledger(tmp_path)
    want = {read: _without_copy(read, monkeypatch) for read in READS}
    assert run_cli("brief").code == 0  # the copy, at the ledger's size
    made = _copy()
    kept = tmp_path / "copy.db"
    shutil.copy(made, kept)
    with sqlite3.connect(made) as conn:  # a first, middle and last page of every table
        spans = conn.execute("SELECT name, min(pageno), max(pageno) FROM dbstat GROUP BY name "
                             "ORDER BY name").fetchall()
    conn.close()
    refused = 0
    for page in sorted({p - 1 for _name, lo, hi in spans for p in (lo, (lo + hi) // 2, hi)}):
        for read in READS:
            for suffix in ("-wal", "-shm"):
                Path(f"{made}{suffix}").unlink(missing_ok=True)
            shutil.copy(kept, made)
            _garble(made, page)
            r = run_cli(*read)
            if r.code == 3:
                assert r.err.startswith(f"logbook: {COPY_DAMAGED}") and "removed" in r.err, \
                    r.err
                assert not made.exists()
                refused += 1
                r = run_cli(*read)
            assert (r.code, _figures(r.out)) == want[read], (page, read, r.code, r.err[-400:])
    assert refused  # the index's pages lost: met after the check, what then exits 3


@pytest.mark.parametrize("wrong", ['"x"', "[1]", '{"a": [1]}', "-1", "null"])
def test_a_facts_row_of_another_shape_reads_the_run_whole(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wrong: str) -> None:
    _ledger(tmp_path)
    want = {read: _without_copy(read, monkeypatch) for read in READS}
    assert run_cli("brief").code == 0
    with sqlite3.connect(_copy()) as conn:
        for slot in range(15):  # every slot of one run's facts, one after another
            (facts,) = conn.execute("SELECT facts FROM run_facts ORDER BY seq LIMIT 1").fetchone()
            row = orjson.loads(facts)
            row[slot] = orjson.loads(wrong)
            conn.execute("UPDATE run_facts SET facts = ? WHERE seq = (SELECT min(seq) FROM "
                         "run_facts)", (orjson.dumps(row).decode(),))
            conn.commit()
            refused = decode(orjson.dumps(row).decode()) is None
            for read in READS[1:]:  # brief reads no facts
                r = run_cli(*read)
                assert r.code != 70, r.err
                if refused:  # facts that cannot be the copy's: the run is read whole
                    assert (r.code, _figures(r.out)) == want[read], (slot, read, r.err[-300:])
            conn.execute("UPDATE run_facts SET facts = ? WHERE seq = (SELECT min(seq) FROM "
                         "run_facts)", (facts,))
            conn.commit()


def test_ledger_dot_is_the_folder_the_command_runs_in(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _ledger(tmp_path)
    x, y = tmp_path / "x", tmp_path / "y"
    shutil.copytree(ledger_dir, x)
    shutil.copytree(ledger_dir, y)
    monkeypatch.chdir(x)
    assert run_cli("note", "only in x").code == 0
    assert run_cli("--ledger", ".", "brief", "--json").json["ledger"]["size"] == 407
    monkeypatch.chdir(y)
    r = run_cli("--ledger", ".", "brief", "--json")
    assert r.code == 0, r.err  # not "holds 406 entries, but this machine checked 407"
    assert r.json["ledger"]["size"] == 406
    assert len(os.listdir(Path.home() / "state" / "logbook" / "checked")) >= 2


def test_show_holds_the_signature_it_prints(ledger_dir: Path, tmp_path: Path) -> None:
    """An entry's signature column is not covered by the digest the copy holds its bytes to:
    `show`, which prints it, checks it against its signer's key after a resumed check too."""
    _ledger(tmp_path)
    shown = run_cli("show", "@3", "--json")
    assert shown.code == 0, shown.err
    assert run_cli("brief").code == 0  # the copy: show's check resumes from it
    with sqlite3.connect(ledger_dir / ".logbook" / "ledger.db") as conn:
        conn.execute("DROP TRIGGER entries_no_update")
        other = conn.execute("SELECT signature FROM entries WHERE seq = 4").fetchone()[0]
        conn.execute("UPDATE entries SET signature = ? WHERE seq = 3", (other,))
    conn.close()
    r = run_cli("show", "@3", "--json")
    assert r.code == 1 and "entry 3: its stored signature does not verify" in r.err, r.err
    assert r.out == ""
    assert run_cli("show", "@4", "--json").code == 0  # the others are shown as before


def _zero_tree(where: str) -> None:
    with sqlite3.connect(_copy()) as conn:
        conn.execute(f"UPDATE tree SET hash = zeroblob(32) WHERE {where}")
    conn.close()


def test_a_damaged_copy_tree_is_neither_signed_nor_blamed_on_the_ledger(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree below what a resumed check compares comes from the copy: a checkpoint signs
    the root the ledger's own entries make, and an honest ledger is not refused for it."""
    _ledger(tmp_path)
    want = {read: _without_copy(read, monkeypatch) for read in READS}
    assert run_cli("brief").code == 0
    _zero_tree("level = (SELECT max(level) FROM tree)")
    r = run_cli("checkpoint", "--json")
    assert r.code == 0, r.err
    with monkeypatch.context() as m:  # the checkpoint holds for anyone checking the ledger
        m.setenv("LOGBOOK_STATE_DIR", "off")
        checked = run_cli("verify", "--json")
        assert checked.code == 0 and checked.json["ok"], checked.out[-500:]
    # a node of the copy's tree damaged, then appends whose tree nodes are made from it
    _zero_tree("level = 2 AND idx = 0")
    assert run_cli("note", "after the damage").code == 0
    assert run_cli("note", "and another").code == 0
    with monkeypatch.context() as m:
        m.setenv("LOGBOOK_STATE_DIR", "off")
        want = {read: (code, _figures(run_cli(*read).out)) for read, (code, _) in want.items()}
    for read in READS:
        r = run_cli(*read)
        assert (r.code, _figures(r.out)) == want[read], (read, r.err[-300:])
