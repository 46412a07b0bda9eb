"""A run's facts (logbook.format.runfacts) are what the analysis would work out from the run's
body: the score, variance and counts its own paths compute (numpy and the exact sums of
logbook.stats), which items it covers, what its apparatus leaves unsaid; and the checked copy
gives back exactly what was written. A body they cannot summarise gives none, never wrong ones.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logbook.format import runfacts
from logbook.format.apparatus import flatten, is_identity, system_gaps
from logbook.format.runfacts import RunFacts, decode, encode, facts_of
from logbook.stats._exact import xmean
from logbook.stats.spread import population_variance

SCORE = st.none() | st.sampled_from([0, 1, 0.0, 1.0, True]) | st.floats(
    -1e6, 1e6, allow_nan=False) | st.integers(-(2**53), 2**53)
APP = st.dictionaries(st.sampled_from(["model", "engine", "seed", "decoding", "host",
                                       "kv_cache_precision", "dataset_hash", "tags"]),
                      st.none() | st.text(max_size=6) | st.integers(-5, 5) | st.floats(
                          allow_nan=False, allow_infinity=False) | st.lists(
                          st.integers(0, 3), max_size=3) | st.dictionaries(
                          st.sampled_from(["temperature", "seed", "top_p"]),
                          st.none() | st.floats(0, 2), max_size=3), max_size=6)


def body_of(scores: list[Any], app: dict[str, Any], plan: str | None = "p" * 64,
            ids: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    ids = ids if ids is not None else [f"i{k}" for k in range(len(scores))]
    return {"plan": plan, "arm": "a", "status": "completed", "session": "s",
            "apparatus": app, "outcomes": {"metric": "acc", "id": ids, "score": scores},
            **extra}


# few distinct scores (a rubric's levels, 0/1 items) take another path to the same sums
FEW = st.lists(SCORE, min_size=1, max_size=6).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), max_size=600))


@settings(max_examples=400, deadline=None)
@given(st.lists(SCORE, max_size=400) | FEW, APP)
def test_the_figures_are_the_ones_the_analysis_computes(scores: list[Any],
                                                        app: dict[str, Any]) -> None:
    body = body_of(scores, app)
    f = facts_of(body)
    assert f is not None and f.figures
    values = np.array(scores, dtype=float)  # as RunView.item_arrays reads them
    present = values[~np.isnan(values)]
    if present.size:
        assert f.score == xmean(present)  # the same float, not a close one
    else:
        assert f.score is None
    assert (f.variance, f.scored) == population_variance(present.tolist())
    assert f.scores == len(scores)
    assert f.binary == (bool(scores) and all(s in (0, 1, None) for s in scores))
    assert f.apparatus == flatten(app) and list(f.apparatus) == list(flatten(app))
    assert f.gaps == tuple(system_gaps(body))
    system = sorted((k, v) for k, v in flatten(app).items() if not is_identity(k))
    assert [tuple(p) for p in __import__("orjson").loads(f.system)] == system
    assert decode(encode(f)) == f


@settings(max_examples=150, deadline=None)
@given(FEW)
def test_sums_by_value_are_the_sums_item_by_item(scores: list[Any]) -> None:
    """Long runs of few distinct scores take `_by_value`: the same floats as the item by item
    sums (math.fsum, as logbook.stats._exact gives them)."""
    n, mean, variance = runfacts._by_value(scores)
    present = np.array([s for s in scores if s is not None], dtype=float)
    assert n == present.size
    if n:
        assert mean == xmean(present)
        assert (variance, n) == population_variance(present.tolist())
    else:
        assert mean is None and variance == 0.0
    if not scores:
        return
    long = scores * (runfacts.BY_VALUE_FROM // len(scores) + 1)  # takes the path in a run
    f = facts_of(body_of(long, {}))
    assert f is not None
    values = np.array([s for s in long if s is not None], dtype=float)
    assert (f.score, f.variance, f.scored) == ((xmean(values) if values.size else None),
                                               *population_variance(values.tolist()))


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8),
       st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8))
def test_runs_list_the_same_items_exactly_when_their_item_lists_agree(
        first: list[str], second: list[str]) -> None:
    a = facts_of(body_of([1] * len(first), {}, ids=first))
    b = facts_of(body_of([0] * len(second), {}, ids=second))
    assert a is not None and b is not None
    assert (a.items == b.items) == (first == second)


def test_a_run_with_samples_keeps_its_figures_in_its_body() -> None:
    body = body_of([1, 0, 1, None], {"model": "m"}, ids=["a", "a", "b", "b"],
                   outcomes=None)
    body["outcomes"] = {"metric": "acc", "id": ["a", "a", "b", "b"], "score": [1, 0, 1, None],
                        "sample": [0, 1, 0, 1]}
    f = facts_of(body)
    assert f is not None and not f.figures and f.score is None
    assert f.apparatus == {"model": "m"} and f.scores == 4


@pytest.mark.parametrize("odd", [
    None, [], "a run", {"status": 3}, {"status": "completed", "plan": 7},
    {"status": "completed", "arm": ["a"]}, {"status": "completed", "session": {"s": 1}},
    {"status": "completed", "apparatus": [1, 2]},
    {"status": "completed", "outcomes": "none"},
    {"status": "completed", "outcomes": {"id": ["a"], "score": ["1"]}},
    {"status": "completed", "outcomes": {"id": ["a"], "score": [[1]]}},
    {"status": "completed", "outcomes": {"id": "ab", "score": 5}},
])
def test_a_body_they_cannot_summarise_gives_no_facts(odd: Any) -> None:
    assert facts_of(odd) is None


def test_a_value_past_64_bits_is_kept_with_the_run_not_with_the_facts() -> None:
    f = facts_of(body_of([1], {"model": "m", "build": 2**70}))
    # orjson writes no integer past 64 bits: no facts then, and the run is read whole
    assert f is None or encode(f) is None


@pytest.mark.parametrize("text", [None, "", "[]", "{}", "[1,2,3]", "not json",
                                  '[[], "[]", "acc", [], true, 1, 0, 1, 1, true, "x"]'])
def test_text_that_does_not_hold_facts_decodes_to_none(text: str | None) -> None:
    assert decode(text) is None


def test_what_is_written_is_what_is_read() -> None:
    f = facts_of(body_of([1, 0, None, 0.25], {"model": "m", "decoding": {"temperature": 0.7,
                                                                        "seed": 3}}))
    assert isinstance(f, RunFacts)
    again = decode(encode(f))
    assert again == f
    assert again is not None and math.isclose(again.score or 0, (1 + 0 + 0.25) / 3)


LONG = st.lists(SCORE, min_size=1, max_size=5).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), min_size=runfacts.BY_VALUE_FROM,
                          max_size=runfacts.BY_VALUE_FROM + 300)) | st.lists(
    SCORE, min_size=runfacts.BY_VALUE_FROM, max_size=runfacts.BY_VALUE_FROM + 50)


@settings(max_examples=120, deadline=None)
@given(LONG)
def test_figures_from_the_item_array_are_the_facts_own(scores: list[Any]) -> None:
    """A long run read by the analysis takes its figures from the item array it builds
    (RunView._array_figures): the very facts this module works out from the list, binary
    runs, -0.0, integers and many distinct values alike."""
    from logbook.analysis.run_view import RunView
    from logbook.ledger.entry import Entry

    body = body_of(scores, {"model": "m"})
    pure = facts_of(body)
    entry = Entry(1, "d" * 64, {"kind": "run", "body": body}, "", b"")
    view = RunView.of(entry)
    assert view.facts == pure
    assert view.facts is not None and view.facts.figures


def test_a_column_that_is_not_numbers_gives_no_facts_on_either_path() -> None:
    scores: list[Any] = [1.0] * runfacts.BY_VALUE_FROM + ["0.5"]
    body = body_of(scores, {})
    assert facts_of(body) is None
    assert facts_of(body, lambda raw: runfacts.Figures(1, 1.0, 0.0, True)) is None


def test_a_shared_item_list_is_encoded_once_and_only_that_list_takes_its_digest() -> None:
    ids = [f"item-{k}" for k in range(2000)]
    twin = list(ids)
    plain = __import__("hashlib").sha256(__import__("orjson").dumps(ids)).hexdigest()
    assert runfacts.items_digest(ids) == plain == runfacts.items_digest(twin)
    runfacts.shared_ids(ids, "kept")  # what Keep names: the list itself, not its equals
    assert runfacts.items_digest(ids) == "kept" and runfacts.items_digest(twin) == plain
    for k in range(runfacts.SHARED_KEPT):  # the memory is bounded: the oldest goes first
        runfacts.shared_ids([k], "x")
    assert runfacts.items_digest(ids) == plain
    other = [*ids[:-1], "item-other"]
    a = facts_of(body_of([1] * len(ids), {}, ids=ids))
    b = facts_of(body_of([0] * len(ids), {}, ids=twin))
    c = facts_of(body_of([0] * len(ids), {}, ids=other))
    assert a is not None and b is not None and c is not None
    assert a.items == b.items == plain != c.items


def test_usage_is_kept_with_the_facts_and_read_back() -> None:
    usage = {"tokens_in": 1200, "tokens_out": 300, "wall_seconds": 4,
             "cost": {"amount": 0.42, "currency": "USD"}}
    f = facts_of(body_of([1, 0], {"model": "m"}, usage=usage))
    assert f is not None
    assert f.usage == {"tokens_in": 1200, "tokens_out": 300, "wall_seconds": 4.0,
                       "cost": {"amount": 0.42, "currency": "USD"}}
    kept = decode(encode(f))
    assert kept is not None and kept.usage == f.usage
    none = facts_of(body_of([1], {}))
    assert none is not None and none.usage is None and decode(encode(none)) == none
    # what a body says that is not usage is left out, never summed
    odd = facts_of(body_of([1], {}, usage={"tokens_in": "9", "tokens_out": True,
                                           "wall_seconds": -1, "cost": {"amount": 1}}))
    assert odd is not None and odd.usage is None


@pytest.mark.parametrize("slot", range(15))
@pytest.mark.parametrize("wrong", ["x", [1], {"a": 1}, 2**70, -1.5])
def test_facts_of_another_shape_decode_to_none_never_raise(slot: int, wrong: Any) -> None:
    """A checked copy's facts row altered or damaged slot by slot: no facts (the run is then
    read whole), never an exception (the analysis would exit 70)."""
    import orjson

    text = encode(facts_of(body_of([1, 0, None], {"model": "m"})))
    assert text is not None
    row = orjson.loads(text)
    row[slot] = wrong
    try:
        altered = orjson.dumps(row).decode()
    except TypeError:  # 2**70: orjson cannot write it; the copy could hold it as text
        altered = text.replace("[", f"[{wrong},", 1) if slot == 0 else text
    found = decode(altered)
    assert found is None or isinstance(found, RunFacts)
