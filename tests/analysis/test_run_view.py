"""RunView keeps what it works out once in slots of their own names, filled on first read: a
copy (an admission's count, the run as if unretracted) carries what is worked out and works
out nothing more (the entry of a run the audit reads by its facts is never read)."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from logbook.analysis.run_view import RunView
from logbook.format.runfacts import facts_of
from logbook.ledger.entry import Entry

BODY = {"plan": "p" * 64, "arm": "q8", "status": "completed", "apparatus": {"model": "m"},
        "outcomes": {"id": ["a", "b"], "score": [1, 0], "cluster": ["x", None]}}


def _run(reads: list[int]) -> RunView:
    def load(seq: int) -> Entry:
        reads.append(seq)
        return Entry(seq, "d" * 64, {"kind": "run", "body": BODY}, "sig", b"{}")

    return RunView(7, "d" * 64, "p" * 64, "q8", "completed", None,
                   facts=facts_of(BODY), load=load)


def test_a_twin_reads_no_entry_and_keeps_what_was_worked_out() -> None:
    reads: list[int] = []
    run = _run(reads)
    assert run.score == 0.5 and run.apparatus == {"model": "m"}  # from the facts
    admission = Entry(9, "e" * 64, {"kind": "admission", "body": {"plan": "z" * 64,
                                                                  "arm": "f16"}}, "s", b"{}")
    twin = run.counted_by(admission, None)
    plain = twin.unretracted()
    assert reads == [] and not twin.loaded and not plain.loaded
    assert (twin.plan, twin.arm, twin.admitted) == ("z" * 64, "f16", admission)
    assert (run.plan, run.arm, run.admitted) == ("p" * 64, "q8", None)
    assert twin.facts is run.facts and twin.score == 0.5 and twin.seq == 7
    assert twin.clusters == {"a": "x"} and reads == [7]  # read when first asked for
    again = pickle.loads(pickle.dumps(_run_without_load(run)))
    assert again.facts == run.facts and not again.loaded and reads == [7]


def _run_without_load(run: RunView) -> RunView:
    """The run with nothing to read its entry by (a closure does not pickle)."""
    twin = copy.copy(run)
    twin._load = None
    return twin


def test_a_lazy_value_is_worked_out_once_and_can_be_let_go() -> None:
    reads: list[int] = []
    run = _run(reads)
    ids, values = run.item_arrays
    assert ids == ["a", "b"] and values.tolist() == [1.0, 0.0] and reads == [7]
    assert run.item_arrays[0] is ids and reads == [7]
    run.forget()
    assert not run.loaded
    assert run.body["arm"] == "q8" and reads == [7, 7]


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    run: Any = _run([])
    with pytest.raises(AttributeError, match="nothing_of_the_kind"):
        run.nothing_of_the_kind  # noqa: B018
    assert not hasattr(run, "_k_facts") and run.facts is not None
