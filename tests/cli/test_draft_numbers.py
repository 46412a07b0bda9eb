"""A draft is read the same at any size: the fast parser (orjson, below 1 MiB) and Python's
json (from 1 MiB) agree on every draft, so whether a draft is refused never depends on its
size, and no number is changed on its way in.

orjson reads an integer past 64 bits as a float: `"seed": 100000000000000000000001` would have
been kept as 1.0000000000000001e+23, a number the draft did not write (a review found it; the
same draft past 1 MiB was refused). Such drafts are read the exact way and then refused for
what they are (beyond 2^53); a lone surrogate and a number past the largest float are refused
on either path; a refusal names its field and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

PAD = 1 << 20  # a draft at least this long is read by Python's json (logbook.limits)


def _draft(tmp_path: Path, name: str, apparatus: str, pad: int, score: str = "1.0") -> Path:
    """A run draft whose apparatus holds ``apparatus`` (JSON members, written as text so that
    numbers stay as the user typed them), padded to about ``pad`` bytes."""
    text = ('{"kind": "run", "body": {"plan": null, "status": "completed", "apparatus": '
            f'{{"model": "m", "pad": "{"x" * pad}", {apparatus}}}, "outcomes": '
            f'{{"metric": "acc", "id": ["a"], "score": [{score}]}}}}}}')
    path = tmp_path / f"{name}-{pad}.json"
    path.write_text(text)
    return path


REFUSED = [
    ("a 24-digit seed", '"seed": 100000000000000000000001', "1.0",
     "body.apparatus.seed: integer 100000000000000000000001 is beyond 2^53"),
    ("a negative integer past 64 bits", '"seed": -9223372036854775809', "1.0",
     "integer -9223372036854775809 is beyond 2^53"),
    ("a score past 64 bits", '"seed": 1', "100000000000000000000000",
     "100000000000000000000000"),
    ("a typed field past 64 bits", '"execution": 18446744073709551616', "1.0",
     "execution is 18446744073709551616"),
    ("a lone surrogate", '"note": "\\ud800"', "1.0", "surrogate"),
    ("a number past the largest float", '"temperature": 1e400', "1.0", "infinity"),
]


@pytest.mark.parametrize(("case", "apparatus", "score", "said"), REFUSED,
                         ids=[c[0] for c in REFUSED])
def test_a_draft_is_refused_alike_at_any_size(ledger_dir: Path, tmp_path: Path, case: str,
                                             apparatus: str, score: str, said: str) -> None:
    before = run_cli("log", "--json").json
    for pad in (10, PAD):
        r = run_cli("append", str(_draft(tmp_path, "d", apparatus, pad, score)))
        assert r.code == 2, (case, pad, r.code, r.out[-300:], r.err[-500:])
        assert r.err.count("\n") == 1 and said in r.err, (case, pad, r.err[-500:])
        assert run_cli("log", "--json").json == before


def test_digits_that_only_look_long_keep_the_fast_path_or_append_the_same(
        ledger_dir: Path, tmp_path: Path) -> None:
    """A fraction or an exponent of many digits, and long digit runs inside strings, are not
    integers: the draft appends, and its body is kept as written whichever parser read it."""
    apparatus = ('"temperature": 0.0001234567890123456789, "top_p": 1.5e-0000000000000000000007, '
                 '"build": "12345678901234567890123", "notes": "run 98765432109876543210"')
    for pad in (10, PAD):
        path = _draft(tmp_path, "ok", apparatus, pad)
        r = run_cli("append", str(path), "--json")
        assert r.code == 0, r.err
        kept = r.json["entry"]["body"]["apparatus"]
        want = json.loads(path.read_text())["body"]["apparatus"]
        assert kept == want


def test_an_amendment_value_past_64_bits_is_refused_as_written(ledger_dir: Path,
                                                                tmp_path: Path) -> None:
    """`amend --set FIELD=VALUE` reads VALUE as JSON the same way: the integer is refused for
    what it is, not amended in as 1e23."""
    plan = {"slug": "p1", "title": "t", "runs_per_arm": 3,
            "metric": {"name": "acc", "kind": "proportion"},
            "suite": {"name": "s", "version": "1", "n_items": 4},
            "arms": [{"name": "a", "role": "control"}, {"name": "b", "role": "treatment"}],
            "success": [{"stat": "effect_low", "op": ">", "value": -0.01}]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    assert run_cli("plan", str(tmp_path / "plan.json")).code == 0
    before = run_cli("log", "--json").json
    r = run_cli("amend", "p1", "--set", "min_effect=100000000000000000000001", "--reason", "x")
    assert r.code == 2 and "body.changes.min_effect: integer 100000000000000000000001" in r.err
    assert run_cli("log", "--json").json == before
