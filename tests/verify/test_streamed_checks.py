"""The derived tables are compared a window of entries at a time, the tree a level at a time
(logbook.verify.derived), and the signatures are checked by a pool while the chain is read: each
must find exactly what a whole-table comparison and the one-by-one check find, whatever the
window, on a real ledger damaged at the database, and hold memory flat with the ledger's size."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli

from logbook.findings import Finding
from logbook.tlog import merkle
from logbook.verify import signatures, stored
from logbook.verify.chain import Result, compare_rows, expected_tree
from logbook.verify.derived import Digests, check_tree

SLUG = "stream-plan"


def _ledger(work: Path) -> Path:
    assert run_cli("plan", str(write_json(work / "plan.json",
                                          plan_body(SLUG, runs_per_arm=9, n_items=12)))).code == 0
    runs = [draft("run", run_body(SLUG, ("f16", "q8")[i % 2], n_items=12, seed=i,
                                  missing=2 if i % 3 == 0 else 0)) for i in range(18)]
    r = run_cli("append", str(write_jsonl(work / "runs.jsonl", runs)), "--jsonl", "--json")
    assert r.code == 0, r.err
    for i in range(5):
        assert run_cli("note", f"note {i}", "--ref", r.json[i]["digest"]).code == 0
    return work / ".logbook" / "ledger.db"


DAMAGE = {
    "index-arm": "UPDATE entry_index SET arm = 'zz' WHERE seq IN (3, 11, 19)",
    "index-deleted": "DELETE FROM entry_index WHERE seq IN (2, 9, 20)",
    "index-extra": "INSERT INTO entry_index (seq, digest, kind, ts, signer) "
                   "VALUES (9999, 'ab', 'note', '', '')",
    "index-moved": "UPDATE entry_index SET seq = 5000 WHERE seq = 7",
    "outcomes-total": "UPDATE outcomes SET total = total + 1 WHERE seq IN (4, 15)",
    "outcomes-deleted": "DELETE FROM outcomes WHERE seq = 10",
    "outcomes-extra": "INSERT INTO outcomes (seq, metric, n, n_missing, total, columns) "
                      "SELECT 22, metric, n, n_missing, total, columns FROM outcomes WHERE seq = 5",
    "tree-node": "UPDATE tree SET hash = zeroblob(32) WHERE level = 1 AND idx IN (1, 6)",
    "tree-high-node": "UPDATE tree SET hash = zeroblob(32) WHERE level = 3 AND idx = 1",
    "tree-deleted": "DELETE FROM tree WHERE level = 2 AND idx = 2",
    "tree-extra": "INSERT INTO tree (level, idx, hash) VALUES (1, 500, zeroblob(32))",
    "tree-leaf-row": "INSERT INTO tree (level, idx, hash) VALUES (0, 0, zeroblob(32))",
}


def _damage(db: Path, sql: str) -> None:
    conn = sqlite3.connect(db)
    found = conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")
    for name in [n for (n,) in found]:  # an attacker with the file drops what stands in the way
        conn.execute(f'DROP TRIGGER "{name}"')
    try:
        conn.execute(sql)
    except sqlite3.IntegrityError as exc:  # pragma: no cover - the case itself is wrong
        raise AssertionError(f"{sql}: {exc}") from None
    conn.commit()
    conn.close()


def _findings(mp: pytest.MonkeyPatch, window: int) -> list[dict[str, Any]]:
    mp.setattr(stored, "WINDOW", window)
    r = run_cli("verify", "--json")
    assert r.code == 1, r.out
    return sorted(r.json["findings"], key=lambda f: (f["check"], f["message"]))


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_every_window_finds_what_the_whole_table_finds(case: str, ledger_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    db = _ledger(ledger_dir)
    assert run_cli("verify").code == 0
    _damage(db, DAMAGE[case])
    whole = _findings(monkeypatch, 1_000_000)
    assert whole and all(f["check"] == "derived" for f in whole), whole
    for window in (1, 2, 7):
        assert _findings(monkeypatch, window) == whole, window


def test_the_pool_finds_what_the_one_by_one_check_finds(ledger_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    db = _ledger(ledger_dir)
    conn = sqlite3.connect(db)
    for (name,) in list(conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")):
        conn.execute(f'DROP TRIGGER "{name}"')
    for seq in (4, 13, 21):  # a signature of another entry: well formed, wrong
        conn.execute("UPDATE entries SET signature = (SELECT signature FROM entries WHERE "
                     "seq = ?) WHERE seq = ?", (seq + 1, seq))
    conn.commit()
    conn.close()
    one_by_one = run_cli("verify", "--json")
    assert one_by_one.code == 1
    monkeypatch.setattr(signatures, "PARALLEL_MIN", 2)
    monkeypatch.setattr(signatures, "workers", lambda: 2)
    monkeypatch.setattr(signatures, "CHUNK", 3)  # many chunks in flight, answers out of turn
    pooled = run_cli("verify", "--json")
    assert pooled.code == 1
    assert pooled.json["findings"] == one_by_one.json["findings"]
    assert [f["seq"] for f in pooled.json["findings"]] == [4, 13, 21]


def _old_tree_findings(stored_rows: list[tuple[int, int, Any]],
                       digests: list[bytes]) -> list[Finding]:
    """The whole-table comparison the streamed one replaces (every node held in a dict)."""
    result = Result()
    tree = expected_tree(digests)
    compare_rows(result, "tree", [((lv, ix), h) for (lv, ix), h in sorted(tree.items()) if lv],
                 [((lv, ix), h) for lv, ix, h in stored_rows], digests)
    return result.findings


def _key(f: Finding) -> tuple[str, str]:
    return f.check, f.message


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5, 8, 13, 31, 32, 33, 100, 257])
def test_tree_level_by_level_agrees_with_the_whole_tree(size: int) -> None:
    rng = random.Random(size)
    leaves = [rng.randbytes(32) for _ in range(size)]
    digests = Digests()
    for d in leaves:
        digests.append(d)
    assert list(digests) == leaves and len(digests) == size
    honest = [n for n in merkle.all_nodes(leaves) if n[0] > 0]
    wanted = {(lv, ix) for lv, ix, _h in merkle.all_nodes(leaves)}
    found, kept = check_tree(honest, digests, wanted)
    assert found == []
    assert kept == expected_tree(leaves)  # every node asked for, recomputed
    if not honest:
        return
    damaged = list(honest)
    victim = rng.randrange(len(damaged))
    lv, ix, _h = damaged[victim]
    damaged[victim] = (lv, ix, bytes(32))  # altered
    if len(damaged) > 2:
        del damaged[rng.randrange(len(damaged))]  # missing
    damaged.append((1, size + 7, bytes(32)))  # not derived from any entry
    damaged.sort(key=lambda n: (n[0], n[1]))  # the store returns them in this order
    new, _kept = check_tree(damaged, digests, set())
    assert sorted(map(_key, new)) == sorted(map(_key, _old_tree_findings(damaged, leaves)))
    assert new


def test_memory_stays_flat_with_the_derived_rows(tmp_path: Path) -> None:
    """Only a window of expected rows is held: a fake store of 60,000 outcome rows is compared
    while at most WINDOW are pending."""
    from logbook.verify.derived import StreamedTable, entry_of

    rows = [(i, "acc", 3, 0, 1.0, b"{}") for i in range(60_000)]
    table = StreamedTable("outcomes", lambda: iter(rows), entry_of, Digests())
    most = 0
    for i, row in enumerate(rows):
        table.add(row)
        most = max(most, len(table._expected))
        if (i + 1) % 500 == 0:
            table.flush(i)
    table.flush(None)
    assert table.findings == [] and most <= 500
