"""One read path for every size (issue 35): the second analysis of a ledger, however small,
carries the check on from this machine's checked copy and reads through it; with no state
folder every analysis checks in full. No size chooses the path."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli


def _verified() -> dict[str, object]:
    r = run_cli("brief", "--json")
    assert r.code == 0, r.err
    return dict(r.json["integrity"]["verified"])


def test_a_three_entry_ledger_is_read_through_the_copy(ledger_dir: Path) -> None:
    assert run_cli("note", "one").code == 0
    first = _verified()
    assert first["resumed_from"] == 0 and first["entries"] == 2
    assert run_cli("note", "two").code == 0
    again = _verified()
    assert again["resumed_from"] == 2 and again["entries"] == 3
    assert str(again["checks"]).startswith("the ledger extends the 2 entries this machine")


def test_without_a_state_folder_every_check_is_made_in_full(
        ledger_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    for text in ("one", "two"):
        assert run_cli("note", text).code == 0
        assert _verified()["resumed_from"] == 0


def test_no_setting_chooses_a_read_path_by_size() -> None:
    from logbook import config

    assert not [v for v in config.VARIABLES if "BELOW" in v or "THRESHOLD" in v]


def _reads_of_a_check(where: Path) -> tuple[object, int]:
    from logbook.ledger.read_model import ANALYSED_KINDS, checked_reading
    from logbook.ledger.service import Ledger

    with Ledger.open(where) as ledger, checked_reading(ledger, ANALYSED_KINDS) as checked:
        return checked.reads, checked.resumed


def test_the_first_check_is_read_through_the_copy_it_made(ledger_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A full check and a resumed one hand the analysis the same reader: the checked copy
    (in memory when none is kept)."""
    from logbook.verify.checked_reads import CheckedReads

    assert run_cli("note", "one").code == 0
    first, resumed = _reads_of_a_check(ledger_dir)
    assert isinstance(first, CheckedReads) and resumed == 0
    second, resumed = _reads_of_a_check(ledger_dir)
    assert isinstance(second, CheckedReads) and resumed == 2
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")  # no copy kept: one in memory, read alike
    third, resumed = _reads_of_a_check(ledger_dir)
    assert isinstance(third, CheckedReads) and resumed == 0


def test_a_copy_that_cannot_take_the_rows_gives_way_to_a_spare(ledger_dir: Path,
                                                               tmp_path: Path) -> None:
    """A copy whose write fails after reading the rows (a disk that fills mid-write): the
    analysis reads through a spare in memory, made from the rows read again, every entry
    found."""
    from logbook.ledger.service import Ledger
    from logbook.storage.sqlite.read_model import ReadModel
    from logbook.verify.checked_reads import CheckedReads
    from logbook.verify.integrity import verified

    for text in ("one", "two", "three"):
        assert run_cli("note", text).code == 0

    class FillsUp(ReadModel):
        def replace(self, index, tree, keys, shapes, facts, state, before=0):  # type: ignore[no-untyped-def]
            list(index), list(tree), list(shapes)  # read, then the disk is full
            return False

    opened = ReadModel.open(tmp_path / "copy.db")
    assert opened is not None
    copy = FillsUp(opened.conn, opened.path)
    with Ledger.open(ledger_dir) as ledger, verified(ledger.entry_log, copy) as checked:
        assert isinstance(checked.reads, CheckedReads)
        with ledger.reading_checked({}, checked.reads):
            assert [e.body["text"] for e in ledger.log(kind="note")] == ["one", "two", "three"]
            assert ledger.reads.kind_of(ledger.log(kind="note")[-1].digest) is not None
    copy.close()


def _two_suites(tmp_path: Path) -> tuple[str, dict[str, object]]:
    """Plans "mine" and "theirs" on suites of their own, two runs an arm each, a run of no
    plan on "theirs"'s suite, and two runs reproducing mine's first (one recording its usage:
    its facts are decoded for it, the other's read off their text). The plan's slug and
    `report mine --json`."""
    from builders import draft, plan_body, run_body, write_json, write_jsonl

    for slug, suite in (("mine", "suite"), ("theirs", "other-suite")):
        body = plan_body(slug, runs_per_arm=2)
        dataset = f"sha256:{len(suite):064x}"
        body["suite"].update(name=suite, dataset_hash=dataset)
        assert run_cli("plan", str(write_json(tmp_path / f"{slug}.json", body))).code == 0
        drafts = []
        for arm in ("f16", "q8"):
            for k in range(2):
                run = run_body(slug, arm, seed=k)
                run["apparatus"]["dataset_hash"] = dataset
                drafts.append(draft("run", run))
        r = run_cli("append", "--jsonl", str(write_jsonl(tmp_path / f"{slug}.jsonl", drafts)))
        assert r.code == 0, r.err
    other = run_body(None, None, seed=9)
    other["apparatus"] = {**other["apparatus"], "suite": "other-suite"}
    assert run_cli("append", str(write_json(tmp_path / "x.json", draft("run", other)))).code == 0
    first = run_cli("log", "--kind", "run", "--json").json[0]["seq"]
    for k, usage in enumerate((None, {"tokens_in": 900, "cost": {"amount": 0.5,
                                                                 "currency": "EUR"}})):
        again = run_body(None, None, seed=20 + k)
        again["apparatus"]["dataset_hash"] = f"sha256:{len('suite'):064x}"
        if usage is not None:
            again["usage"] = usage
        r = run_cli("append", str(write_json(tmp_path / f"r{k}.json", draft("run", again))),
                    "--reproduces", f"@{first}")
        assert r.code == 0, r.err
    expected = run_cli("report", "mine", "--json")
    assert expected.code == 0, expected.err
    assert len(expected.json["reproductions"]) == 2, expected.json["reproductions"]
    return "mine", expected.json


def _facts_worked_out(ledger_dir: Path, slug: str,
                      monkeypatch: pytest.MonkeyPatch) -> tuple[list[str | None], str, object]:
    """The plans of the runs whose facts `report SLUG` works out (or decodes), its plan's
    digest, and its JSON."""
    from logbook.analysis import run_view
    from logbook.analysis.report import report_with_findings
    from logbook.analysis.view import LedgerView
    from logbook.ledger.read_model import ANALYSED_KINDS, checked_reading
    from logbook.ledger.service import Ledger

    read: list[str | None] = []
    facts = run_view._LAZY["facts"]
    monkeypatch.setitem(run_view._LAZY, "facts", lambda r: (read.append(r.plan), facts(r))[1])
    with Ledger.open(ledger_dir) as ledger, checked_reading(ledger, ANALYSED_KINDS) as checked:
        view = LedgerView(ledger, checked)
        digest = view.plan(slug).digest
        rep = report_with_findings(view, slug, lambda: None)
    return read, digest, rep.as_json()


def test_a_report_of_one_plan_reads_the_runs_of_its_suite_alone(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`report PLAN` after a full check (and its findings, the search budget among them) works
    out the facts of the runs on its plan's suite only, and of runs of no plan (which say
    their suite in their apparatus alone): the runs of another plan that declares its suite
    are not read (a one-plan report of the audit benchmark's 100,501 entries took 21.6 s
    without this, verify 9.0 s)."""
    monkeypatch.setenv("LOGBOOK_STATE_DIR", "off")
    slug, expected = _two_suites(tmp_path)
    read, mine, got = _facts_worked_out(ledger_dir, slug, monkeypatch)
    # the other suite's plan's runs are not read; a run of no plan says its suite only in its
    # apparatus (read for it); the plan's own runs are
    assert mine in read and set(read) <= {mine, None}, read
    assert got == expected


def test_after_a_resumed_check_a_report_of_one_plan_decodes_the_facts_of_its_suite_alone(
        ledger_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same after a check resumed from the checked copy: the copy's facts of the other
    plan's runs are not decoded, not even to find the runs that reproduce the plan's
    (`RunView.reproduces` reads that off the end of their text; a one-plan report of the
    audit benchmark's 100,501 entries took 6.0 s with every run's decoded, 3.1 s without)."""
    slug, expected = _two_suites(tmp_path)
    assert run_cli("brief").code == 0  # the checked copy, carried up to the head
    read, mine, got = _facts_worked_out(ledger_dir, slug, monkeypatch)
    assert mine in read and set(read) <= {mine, None}, read
    assert got == expected


@pytest.mark.parametrize("reproduces", [None, "ab" * 32, "short", '",null]', "x,null", "AB" * 32])
@pytest.mark.parametrize("usage", [None, {"tokens_in": 3}, {"cost": {"amount": 1.0,
                                                                     "currency": "EUR"}}])
def test_the_end_of_the_facts_text_says_what_decoding_says(reproduces: str | None,
                                                           usage: object) -> None:
    """`reproduces` read off the end of the checked copy's text of a run's facts is what
    decoding the text gives, or is left to decoding (False)."""
    from logbook.format.runfacts import RunFacts, decode, encode, reproduces_in_text

    facts = RunFacts({"model": 'm",null,null]'}, '[["model","m"]]', "accuracy", ("x",), True,
                     0.5, 0.25, 2, 2, True, "ab" * 32, None, False, reproduces, usage)  # type: ignore[arg-type]
    text = encode(facts)
    assert text is not None and decode(text) == facts
    read, target = reproduces_in_text(text)
    assert not read or target == reproduces
    assert read == (usage is None and (reproduces is None or reproduces == "ab" * 32))
