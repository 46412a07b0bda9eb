"""The analysis check resumed from this machine's earlier check (logbook.verify.resume), under
every database attack of the tamper suite (tests/verify/test_tamper.py).

Each case makes this machine's checked copy of the scenario's ledger at its first ``K``
entries (the ledger cut to them, checked by `brief`, then the whole ledger put back at the same
place, as if the rest had been appended since), then attacks the ledger, then:

* an attack whose damage lies wholly in the entries appended since (every finding it expects
  is about an entry at ``K`` or after): the resumed check finds exactly what a full `verify`
  finds, check and entry;
* any other attack (on the entries checked before, their derived rows, or everything): the
  resumed check may not see it (those rows are not read again), but then no analysis prints
  anything but what it prints on the honest ledger: `brief`, `report` and `audit` either
  exit 1 with the banner or give the honest output, figure for figure.

Plus the honest path: a resumed check gives the same outputs as a full one, after appends,
and a cut or rewritten ledger below the checked size is refused.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import test_tamper
from builders import plan_body, write_json
from conftest import CliResult, run_cli
from test_tamper import DB_ATTACKS, SLUG, Attacker, Scenario, copy_ledger, reindex

from logbook.storage.sqlite.read_model import ReadModel
from logbook.storage.sqlite.store import SQLiteStore
from logbook.verify.integrity import BANNER
from logbook.verify.resume import resume

scenario = test_tamper.scenario
K = 2  # the entries checked before: genesis and the plan; everything else came after
READS = (("brief", "--json"), ("report", SLUG, "--json"), ("audit", "--json"))


@pytest.fixture(autouse=True)
def _resuming(monkeypatch: pytest.MonkeyPatch, scenario: Scenario) -> None:
    # the scenario's own key (test_tamper.build_scenario's config home), for appends
    monkeypatch.setenv("LOGBOOK_KEY", str(scenario.root.parent / "config" / "logbook" /
                                          "keys" / "default.key"))


@pytest.fixture(scope="module")
def cut(scenario: Scenario, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scenario's ledger cut to its first K entries (a ledger as it was back then)."""
    base = tmp_path_factory.mktemp("cut")
    db = copy_ledger(scenario, base)
    a = Attacker(db)
    a.conn.execute("DELETE FROM entries WHERE seq >= ?", (K,))
    a.conn.execute("DELETE FROM checkpoints")
    a.close()
    reindex(db)
    return base / ".logbook"


def state_files(home: Path) -> list[Path]:
    return sorted((home / "state" / "logbook" / "checked").glob("*.db"))


def resumed_ledger(scenario: Scenario, cut: Path, where: Path) -> Path:
    """The scenario's ledger at ``where`` with this machine's checked copy of its first K
    entries (made by `brief` on the cut ledger at the same place); returns its db."""
    shutil.copytree(cut, where / ".logbook")
    r = run_cli("--ledger", str(where), "brief", "--json")
    assert r.code == 0, r.err
    shutil.rmtree(where / ".logbook")
    return copy_ledger(scenario, where)


def shape(findings: list[Any]) -> set[tuple[str, int | None]]:
    return {(f["check"], f["seq"]) if isinstance(f, dict) else (f.check, f.seq)
            for f in findings}


def resumed_findings(db: Path, home: Path) -> tuple[int, list[Any]]:
    """(the size the checked copy covered, what the resumed check finds), read directly."""
    [path] = state_files(home)
    checked = ReadModel.open(path)
    assert checked is not None
    state = checked.state()
    assert state is not None and state["size"] == K
    store = SQLiteStore.open_read(db)
    try:
        with store.snapshot():
            found = resume(store, checked, state)
    finally:
        store.close()
        checked.close()
    return found.start, found.result.findings


def comparable(command: tuple[str, ...], r: CliResult) -> Any:
    """A command's JSON without what says how it was checked (which differs by design)."""
    out = orjson.loads(r.out)
    if command[0] == "brief":
        out["integrity"].pop("verified", None)
    return out


@pytest.fixture(scope="module")
def honest(scenario: Scenario, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each read's output on the untouched ledger, checked in full."""
    base = tmp_path_factory.mktemp("honest")
    copy_ledger(scenario, base)
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOGBOOK_STATE_DIR", "off")
        for command in READS:
            r = run_cli("--ledger", str(base), *command)
            assert r.code in (0, 1) and r.out, r.err  # the audit's findings exit 1
            out[command[0]] = (r.code, comparable(command, r))
    return out


@pytest.fixture
def home() -> Iterator[Path]:
    yield Path.home()


@pytest.mark.parametrize("name", sorted(DB_ATTACKS))
def test_resumed_check_under_attack(name: str, scenario: Scenario, cut: Path, home: Path,
                                    honest: dict[str, Any], tmp_path: Path) -> None:
    db = resumed_ledger(scenario, cut, tmp_path / "ledger")
    attacker = Attacker(db)
    expected = DB_ATTACKS[name](attacker, scenario)
    attacker.close()
    full = run_cli("--ledger", str(db), "verify", "--json")
    assert full.code == 1, full.out
    start, found = resumed_findings(db, home)
    if all(e.seq is not None and e.seq >= start for e in expected):
        assert shape(found) == shape(full.json["findings"]), name
        return
    for command in READS:
        r = run_cli("--ledger", str(db), *command)
        if r.code == 1 and not r.out:
            assert BANNER in r.err, (name, command, r.err)
        else:
            assert (r.code, comparable(command, r)) == honest[command[0]], (name, command)


def test_resumed_outputs_equal_full_ones_and_carry_on(scenario: Scenario, cut: Path,
                                                      home: Path, tmp_path: Path) -> None:
    where = tmp_path / "ledger"
    resumed_ledger(scenario, cut, where)
    for round_ in range(2):
        for command in READS:
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("LOGBOOK_STATE_DIR", "off")
                off = run_cli("--ledger", str(where), *command)
            on = run_cli("--ledger", str(where), *command)
            assert on.code == off.code and on.out, (on.err, off.err)
            assert comparable(command, on) == comparable(command, off), command
        brief = run_cli("--ledger", str(where), "brief", "--json").json
        checked = brief["integrity"]["verified"]
        assert checked["resumed_from"] == scenario.size + round_ * 2
        assert checked["signatures_checked"] == 0
        assert "this machine checked" in checked["checks"]
        # two more entries (a plan: brief reads every plan's shape from the copy): the next
        # check checks those two and carries on from here
        plan = write_json(tmp_path / f"plan{round_}.json",
                          plan_body(f"later-plan-{round_}", runs_per_arm=2, n_items=10))
        r = run_cli("--ledger", str(where), "plan", str(plan))
        assert r.code == 0, r.err
        r = run_cli("--ledger", str(where), "note", f"round {round_}")
        assert r.code == 0, r.err


def test_a_cut_ledger_is_refused(scenario: Scenario, cut: Path, tmp_path: Path) -> None:
    where = tmp_path / "ledger"
    resumed_ledger(scenario, cut, where)
    assert run_cli("--ledger", str(where), "brief").code == 0  # now checked at full size
    shutil.rmtree(where / ".logbook")
    shutil.copytree(cut, where / ".logbook")  # an older copy put in its place
    for command in READS:
        r = run_cli("--ledger", str(where), *command)
        assert r.code == 1 and not r.out, (command, r.out)
        assert f"{BANNER}: the ledger holds {K} entries, but this machine checked " \
               f"{scenario.size} of it" in r.err
    # `verify` checks the ledger as it is, and the older copy is a valid ledger
    assert run_cli("--ledger", str(where), "verify").code == 0


def test_a_ledger_rewritten_below_the_checked_size_is_refused(
        scenario: Scenario, cut: Path, tmp_path: Path) -> None:
    where = tmp_path / "ledger"
    resumed_ledger(scenario, cut, where)
    assert run_cli("--ledger", str(where), "brief").code == 0
    # the same ledger re-made from its first K entries with other entries after them, by
    # the key holder: valid on its own, but not what this machine checked
    shutil.rmtree(where / ".logbook")
    shutil.copytree(cut, where / ".logbook")
    for i in range(scenario.size - K + 3):
        assert run_cli("--ledger", str(where), "note", f"another history {i}").code == 0
    assert run_cli("--ledger", str(where), "verify").code == 0
    r = run_cli("--ledger", str(where), "brief")
    assert r.code == 1 and not r.out
    assert f"{BANNER}: entry {scenario.size - 1} is not the one this machine checked" in r.err
    [path] = state_files(Path.home())
    assert f"remove {path}" in r.err
    path.unlink()  # as the message says: this machine starts its checks again
    assert run_cli("--ledger", str(where), "brief").code == 0


def test_an_unusable_state_folder_checks_in_full(scenario: Scenario, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    where = tmp_path / "ledger"
    copy_ledger(scenario, where)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the state folder would be\n")
    monkeypatch.setenv("LOGBOOK_STATE_DIR", str(blocked))
    r = run_cli("--ledger", str(where), "brief", "--json")
    assert r.code == 0, r.err
    assert r.json["integrity"]["verified"]["resumed_from"] == 0


def test_a_damaged_state_file_is_made_again(scenario: Scenario, cut: Path, home: Path,
                                            tmp_path: Path) -> None:
    where = tmp_path / "ledger"
    resumed_ledger(scenario, cut, where)
    [path] = state_files(home)
    path.write_bytes(b"not a database at all" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    r = run_cli("--ledger", str(where), "brief", "--json")
    assert r.code == 0, r.err
    assert r.json["integrity"]["verified"]["resumed_from"] == 0  # checked in full
    r = run_cli("--ledger", str(where), "brief", "--json")
    assert r.json["integrity"]["verified"]["resumed_from"] == scenario.size


def test_an_entry_altered_below_the_checked_size_stops_the_analysis_that_reads_it(
        scenario: Scenario, cut: Path, tmp_path: Path) -> None:
    where = tmp_path / "ledger"
    db = resumed_ledger(scenario, cut, where)
    assert run_cli("--ledger", str(where), "brief").code == 0  # checked at full size
    seq = scenario.seqs["run"] + 3
    a = Attacker(db)
    row = a.row(seq)
    raw = row.raw.replace(b'"status":"completed"', b'"status":"completed" ', 1)
    assert raw != row.raw
    a.put(type(row)(seq, hashlib.sha256(raw).hexdigest(), raw, row.signature))
    a.close()
    r = run_cli("--ledger", str(where), "report", SLUG, "--json")
    assert r.code == 1 and not r.out
    assert f"{BANNER}: entry {seq}: its stored bytes hash to" in r.err
    assert "not to the digest this machine checked" in r.err
    assert run_cli("--ledger", str(where), "verify").code == 1


def test_a_checkpoint_carries_the_check_on_and_signs_the_checked_root(
        scenario: Scenario, cut: Path, tmp_path: Path) -> None:
    where = tmp_path / "ledger"
    db = resumed_ledger(scenario, cut, where)
    r = run_cli("--ledger", str(where), "checkpoint", "--out", str(tmp_path / "cp.txt"),
                "--json")
    assert r.code == 0, r.err
    assert r.json["size"] == scenario.size
    assert run_cli("--ledger", str(where), "verify", "--checkpoint",
                   str(tmp_path / "cp.txt")).code == 0
    brief = run_cli("--ledger", str(where), "brief", "--json").json
    assert brief["integrity"]["verified"]["resumed_from"] == scenario.size
    # one more entry, and the stored tree node it completes altered: the checkpoint is refused
    assert run_cli("--ledger", str(where), "note", "one more").code == 0
    a = Attacker(db)
    a.sql("UPDATE tree SET hash = zeroblob(32) WHERE level = 1 AND idx = ?", scenario.size // 2)
    a.close()
    r = run_cli("--ledger", str(where), "checkpoint", "--out", str(tmp_path / "cp2.txt"))
    assert r.code == 1 and BANNER in r.err and "tree" in r.err
    assert not (tmp_path / "cp2.txt").exists()
