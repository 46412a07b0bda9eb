"""What a check keeps of the runs it reads (logbook.verify.stored.Keep): runs of one suite share
one list of item ids, long lists known by their digest, which the runs' facts then take as
theirs; lists that differ in any id, or in its type, stay apart; nothing else of a body
changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli

from logbook.format import runfacts
from logbook.ledger.service import Ledger
from logbook.storage.sqlite.read_model import ReadModel
from logbook.verify import stored
from logbook.verify.integrity import check

N = stored.DIGEST_KEPT_FROM + 10


def _runs(tmp: Path) -> None:
    r = run_cli("plan", str(write_json(tmp / "p.json", plan_body("kept", n_items=N))), "--json")
    assert r.code == 0, r.err
    plan = r.json["digest"]
    bodies = [run_body(plan, arm, n_items=N, seed=i) for i, arm in enumerate(("f16", "q8"))]
    other = run_body(None, None, n_items=N, seed=7)  # exploratory: its own items
    other["outcomes"]["id"] = [*other["outcomes"]["id"][:-1], "item-last"]
    short = [run_body(None, None, n_items=40, seed=i) for i in range(2)]
    drafts = [draft("run", b) for b in (*bodies, other, *short)]
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp / "r.jsonl", drafts)))
    assert r.code == 0, r.err


def _ids(env: dict[str, Any]) -> list[Any]:
    return env["body"]["outcomes"]["id"]  # type: ignore[no-any-return]


def test_runs_of_one_suite_share_one_list_and_its_digest(ledger_dir: Path,
                                                         tmp_path: Path) -> None:
    _runs(tmp_path)
    with Ledger.open(str(ledger_dir)) as ledger:
        verified = check(ledger.entry_log, ReadModel.in_memory(), keep=("run",))
    long_a, long_b, other, short_a, short_b = (e[2] for e in verified.kept["run"])
    assert _ids(long_a) is _ids(long_b) and _ids(short_a) is _ids(short_b)
    assert _ids(other) is not _ids(long_a) and _ids(other)[-1] == "item-last"
    assert _ids(long_a) == [f"item-{i:04d}" for i in range(N)]
    plain = __import__("hashlib").sha256(__import__("orjson").dumps(_ids(long_a))).hexdigest()
    assert runfacts.items_digest(_ids(long_a)) == plain
    facts = [runfacts.facts_of(e["body"]) for e in (long_a, long_b, other)]
    assert facts[0] is not None and facts[1] is not None and facts[2] is not None
    assert facts[0].items == facts[1].items == plain != facts[2].items
