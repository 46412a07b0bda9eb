"""The epochs reducers (logbook.format.reducers) on hand-worked items, Inspect's semantics."""

from __future__ import annotations

import math

import pytest

from logbook.format.reducers import item_scores, known, reducer, reducer_of


@pytest.mark.parametrize(("name", "values", "expected"), [
    ("mean", [1.0, 0.0, 0.0], 1 / 3),
    ("median", [1.0, 0.0, 0.0], 0.0),
    ("median", [0.25, 1.0, 0.5, 0.0], 0.375),  # an even count: the middle two's mean
    ("mode", [0.5, 1.0, 1.0], 1.0),
    ("mode", [0.0, 1.0, 1.0, 0.0], 0.0),  # a tie: the value seen first
    ("mode", [1.0, 0.0, 0.0, 1.0], 1.0),
    ("max", [0.0, 0.25, 0.0], 0.25),
    ("at_least_2", [1.0, 0.0, 1.0], 1.0),
    ("at_least_2", [1.0, 0.5, 0.5], 0.0),  # passing is scoring 1 or more
    ("at_least_1", [2.0], 1.0),
    ("pass_at_2", [1.0, 0.0, 0.0], 1 - 1 / 3),  # 1 - C(2,2)/C(3,2)
    ("pass_at_2", [1.0, 1.0, 0.0], 1.0),  # n - c < k
    ("pass_at_1", [1.0, 0.0, 0.0, 0.0], 0.25),
    ("pass_at_2", [1.0], None),  # fewer scored than k
    ("max", [], None),
])
def test_reducers(name: str, values: list[float], expected: float | None) -> None:
    got = reducer(name)(values)
    assert (got is None) == (expected is None)
    if expected is not None:
        assert got == pytest.approx(expected, abs=1e-15)


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1 - math.comb(n - c, k) / math.comb(n, k)
                got = reducer(f"pass_at_{k}")([1.0] * c + [0.0] * (n - c))
                assert got == pytest.approx(exact, abs=1e-12)


def test_names() -> None:
    for name in ("mean", "median", "mode", "max", "at_least_3", "pass_at_10"):
        assert known(name)
    for name in ("majority", "pass_k_2", "collect", "at_least_0", "at_least_", "max\n", ""):
        assert not known(name)
        with pytest.raises(ValueError, match="not one logbook applies"):
            reducer(name)
    assert reducer_of({}) == reducer_of({"reducer": None}) == "mean"
    assert reducer_of({"reducer": "max"}) == "max"


def test_item_scores_leave_missing_samples_out() -> None:
    ids = ["a", "a", "a", "b", "b", "c"]
    scores = [1.0, None, 0.0, None, None, 0.5]
    assert item_scores(ids, scores, "max") == {"a": 1.0, "b": None, "c": 0.5}
    assert item_scores(ids, scores, "pass_at_2") == {"a": 1.0, "b": None, "c": None}
