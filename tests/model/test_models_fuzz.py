"""Property tests for the record models: any JSON body is either accepted or refused with one
InputError naming a field, never another exception; valid runs round-trip through the ledger."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logbook.errors import InputError
from logbook.model import KINDS
from logbook.model.validate import validate_body

scalars = (st.none() | st.booleans() | st.integers(-(2**60), 2**60)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=10))
json_like = st.recursive(scalars, lambda c: st.lists(c, max_size=4)
                         | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=20)
FIELDS = ["plan", "arm", "status", "apparatus", "outcomes", "metric", "id", "score", "error",
          "text", "refs", "target", "reason", "category", "slug", "title", "suite", "arms",
          "runs_per_arm", "statement", "value", "interval", "runs", "ledger_size",
          "ledger_root", "changes", "keys", "name", "uuid", "public", "action"]
bodies = st.dictionaries(st.sampled_from(FIELDS), json_like, max_size=8)


@settings(max_examples=400, deadline=None)
@given(kind=st.sampled_from((*KINDS, "nonsense")), body=bodies | json_like)
def test_any_body_is_accepted_or_refused_with_one_sentence(kind: str, body: object) -> None:
    try:
        validate_body(kind, body)
    except InputError as exc:
        text = str(exc)
        assert text and "\n" not in text
        assert text.startswith(("body", "kind"))


ids = st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=30, unique=True)


@st.composite
def runs(draw: st.DrawFn) -> dict[str, object]:
    item_ids = draw(ids)
    scores = draw(st.lists(st.none() | st.floats(0, 1) | st.sampled_from([0, 1]),
                           min_size=len(item_ids), max_size=len(item_ids)))
    errors = [("timeout" if s is None else None) for s in scores]
    return {"plan": None, "status": "completed",
            "apparatus": draw(st.dictionaries(st.text(min_size=1, max_size=5),
                                              st.text(max_size=5) | st.integers(0, 99),
                                              max_size=4)),
            "outcomes": {"metric": "acc", "id": item_ids, "score": scores, "error": errors}}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(body=runs())
def test_valid_runs_round_trip_through_the_ledger(tmp_path_factory, body: dict) -> None:
    from conftest import run_cli

    folder = tmp_path_factory.mktemp("fuzz")
    assert run_cli("init", str(folder), "--name", "fuzz").code == 0
    import os

    os.environ["LOGBOOK_DIR"] = str(folder)
    try:
        draft = folder / "draft.json"
        draft.write_text(json.dumps({"kind": "run", "body": body}))
        r = run_cli("append", str(draft), "--json")
        assert r.code == 0, r.err
        shown = run_cli("show", r.json["digest"], "--json").json["entry"]["body"]
        assert json.loads(json.dumps(shown)) == json.loads(json.dumps(body))
        assert run_cli("verify").code == 0
    finally:
        os.environ.pop("LOGBOOK_DIR", None)
