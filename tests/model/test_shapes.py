"""The direct shape check of a well-formed run or note (logbook.model.shapes) against the
models: never True where the model refuses; True for the bodies appends actually carry, so
those cost no pydantic; and a bad body's message is the model's, word for word."""

from __future__ import annotations

import ast
import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logbook.errors import InputError
from logbook.model import shapes
from logbook.model.validate import check_body, validate_body

DIGEST = "ab" * 32
SHA = "sha256:" + "cd" * 32

texts = st.text(max_size=6) | st.sampled_from(["", "\ud800", "x" * 3])
numbers = (st.floats() | st.integers(-(2**60), 2**60) | st.booleans()
           | st.sampled_from([0.0, 1.0, -0.0, 1e100, 1.0000000000000002e100, 2**53, 2**53 + 1]))
leaf = st.none() | numbers | texts | st.sampled_from([DIGEST, SHA, DIGEST.upper()])
anything = st.recursive(leaf, lambda c: st.lists(c, max_size=3)
                        | st.dictionaries(texts, c, max_size=3), max_leaves=8)


# the typed apparatus fields (format.apparatus.TYPED), with values of right and wrong types
_VALUES = st.sampled_from([None, 0, 1, 8, -1, 2.5, True, False, "", "auto", "8", [1], {}])


@st.composite
def _typed(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group, names in (("execution", ("batch_size", "concurrency", "batch_invariant")),
                         ("retries", ("cap", "used")), ("scoring", ("order",))):
        if draw(st.booleans()):
            out[group] = draw(_VALUES) if draw(st.integers(0, 5)) == 0 else {
                n: draw(_VALUES) for n in draw(st.sets(st.sampled_from(names)))}
    return out


@st.composite
def runs(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(0, 8))
    ids = draw(st.lists(st.text(min_size=1, max_size=4), min_size=n, max_size=n))
    score = draw(st.lists(st.none() | st.floats(-2, 2) | st.sampled_from([0, 1, 0.5]),
                          min_size=n, max_size=n))
    outcomes: dict[str, Any] = {"metric": draw(st.sampled_from(["acc", "", "f1"])),
                                "id": ids, "score": score,
                                "error": [None if s is not None else "timeout" for s in score]}
    for name in draw(st.sets(st.sampled_from(["cluster", "sample", "component", "extra"]))):
        if name == "sample":
            outcomes[name] = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        elif name == "extra":
            outcomes[name] = {"tokens": draw(st.lists(st.none() | st.integers(0, 9),
                                                      min_size=n, max_size=n))}
        else:
            outcomes[name] = draw(st.lists(st.none() | st.text(max_size=3), min_size=n,
                                           max_size=n))
    status = draw(st.sampled_from(["completed", "completed", "failed", "aborted"]))
    body: dict[str, Any] = {"plan": draw(st.sampled_from([None, None, DIGEST])),
                            "status": status, "apparatus": {"model": "m", "t": 0.5,
                                                            **draw(_typed())},
                            "outcomes": outcomes}
    if body["plan"] or draw(st.booleans()):
        body["arm"] = draw(st.sampled_from(["a", "", None]))
    if status != "completed" or draw(st.booleans()):
        body["reason"] = draw(st.sampled_from(["crashed", ""]))
    if draw(st.booleans()):
        body["logs"] = [{"name": "stdout", "sha256": SHA, "size": draw(st.integers(-1, 9)),
                         "excerpt": None}]
    if draw(st.booleans()):
        body["source"] = {"harness": "jsonl", "file": "r.jsonl", "sha256": SHA,
                          "part": None, "ids": {"run": "1"}}
    if draw(st.booleans()):
        usage: dict[str, Any] = {}
        for key in draw(st.sets(st.sampled_from(["tokens_in", "tokens_out", "wall_seconds",
                                                 "cost"]))):
            usage[key] = (draw(st.sampled_from([0, 12, 1.5, -1, None, 2**53]))
                          if key != "cost" else
                          {"amount": draw(st.sampled_from([0.42, 0, -0.1, 3])),
                           "currency": draw(st.sampled_from(["USD", "usd", "EURO", "JPY"]))})
        body["usage"] = usage
    for key in draw(st.sets(st.sampled_from(["session", "note", "task", "started"]))):
        body[key] = "s"
    return body


def _mutated(draw: st.DrawFn, body: Any) -> Any:
    """``body`` with one value somewhere replaced by anything, or a key added or dropped."""
    body = copy.deepcopy(body)
    node = body
    while isinstance(node, dict | list) and node and draw(st.booleans()):
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        k = draw(st.sampled_from(keys))
        if not isinstance(node[k], dict | list) or draw(st.booleans()):
            node[k] = draw(anything)
            return body
        node = node[k]
    if isinstance(node, dict):
        if node and draw(st.booleans()):
            del node[draw(st.sampled_from(list(node)))]
        else:
            node[draw(st.sampled_from(["extra", "plan", "text", "id", "surplus"]))] = draw(
                anything)
    return body


@st.composite
def near_valid(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(["run", "note"]))
    if kind == "run":
        body = draw(runs())
    else:
        body = {"text": draw(st.sampled_from(["hello", ""])),
                "refs": draw(st.lists(st.sampled_from([DIGEST, "ab"]), max_size=2))}
    return kind, _mutated(draw, body) if draw(st.booleans()) else body


def _model_accepts(kind: str, body: Any) -> bool:
    try:
        validate_body(kind, body)
    except InputError:
        return False
    return True


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid())
def test_the_shape_check_never_accepts_what_the_model_refuses(case: tuple[str, Any]) -> None:
    kind, body = case
    if shapes.well_formed(kind, body):
        assert _model_accepts(kind, body), body


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["run", "note", "plan", "claim"]),
       st.dictionaries(st.sampled_from(["plan", "status", "apparatus", "outcomes", "text",
                                        "refs", "arm", "reason"]), anything, max_size=6))
def test_arbitrary_bodies_are_never_vouched_for_wrongly(kind: str, body: Any) -> None:
    if shapes.well_formed(kind, body):
        assert _model_accepts(kind, body), body


@settings(max_examples=300, deadline=None)
@given(near_valid())
def test_check_body_says_exactly_what_the_model_says(case: tuple[str, Any]) -> None:
    kind, body = case
    try:
        validate_body(kind, body)
        expected = None
    except InputError as exc:
        expected = str(exc)
    try:
        check_body(kind, body)
        found = None
    except InputError as exc:
        found = str(exc)
    assert found == expected


@settings(max_examples=200, deadline=None)
@given(runs())
def test_well_formed_runs_take_the_shortcut(body: dict[str, Any]) -> None:
    """The runs the model accepts (within the check's conservative types) are vouched for, so
    the fast path is the one appends take."""
    if _model_accepts("run", body):
        assert shapes.well_formed("run", body)


def test_the_score_bound_is_the_models() -> None:
    from logbook.model import run

    assert shapes.MAX_SCORE == run.MAX_SCORE


PROBE = """
import sys
from logbook.cli.main import run
code = run(sys.argv[1:])
print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in
              ('pydantic', 'pydantic_core', 'rfc8785', 'annotated_types')}
             | {m for m in sys.modules if m == 'cryptography.hazmat.primitives.serialization'}))
sys.exit(code)
"""


def _probe(args: list[str], cwd: Path) -> tuple[int, list[str], str]:
    r = subprocess.run([sys.executable, "-c", PROBE, *args], env=dict(os.environ), cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    lines = r.stdout.strip().splitlines()
    return r.returncode, list(ast.literal_eval(lines[-1])) if lines else [], r.stderr


def _run_draft(n: int, continuous: bool) -> dict[str, Any]:
    ids = [f"item-{i:04d}" for i in range(n)]
    score = [None if i % 97 == 5 else (i % 7) / 7 if continuous else float(i % 3 == 0)
             for i in range(n)]
    return {"kind": "run", "body": {
        "plan": None, "status": "completed",
        "apparatus": {"model": "m-7b", "decoding": {"temperature": 0.7, "seed": 1}},
        "outcomes": {"metric": "acc", "id": ids, "score": score,
                     "error": [None if s is not None else "timeout" for s in score]}}}


@pytest.mark.parametrize("continuous", [False, True])
def test_a_well_formed_append_loads_no_pydantic_and_no_reference_encoder(
        ledger_dir: Path, continuous: bool) -> None:
    (ledger_dir / "draft.json").write_bytes(orjson.dumps(_run_draft(500, continuous)))
    code, loaded, err = _probe(["append", "draft.json"], ledger_dir)
    assert code == 0, err
    assert loaded == []
    code, loaded, err = _probe(["note", "done", "--ref", "@1"], ledger_dir)
    assert code == 0, err
    assert loaded == []


def test_a_bad_append_still_says_what_the_model_says(ledger_dir: Path) -> None:
    draft = _run_draft(3, True)
    draft["body"]["outcomes"]["score"][1] = True
    (ledger_dir / "draft.json").write_bytes(orjson.dumps(draft))
    code, loaded, err = _probe(["append", "draft.json"], ledger_dir)
    assert code == 2
    assert err.strip().splitlines()[-1].endswith(
        "body.outcomes.score[1]: Input should be a valid number")
    assert "pydantic" in loaded
