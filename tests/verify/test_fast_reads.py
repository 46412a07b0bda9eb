"""verify's reads at C speed (issue 22): the whole-table reads decode text with SQLite's own
UTF-8 decoder and fall back to the replacing one from the batch that holds text that is not
UTF-8, so every row reads exactly as the replacing decoder reads it, in whichever batch the
damage sits; and the Merkle root verify hands on (Result.root, from the tree it rebuilds) is
the root over the entries' digests, whatever the stored tree says."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli
from test_verify_storage import alter

from logbook.storage import open_store
from logbook.storage.sqlite import rows as sqlite_rows
from logbook.tlog import merkle
from logbook.verify.stored import verify_store

SLUG = "reads-plan"


def ok(*args: str) -> None:
    r = run_cli(*args)
    assert r.code == 0, (args, r.code, r.out, r.err)


@pytest.fixture
def ledger(ledger_dir: Path) -> Path:
    """plan, six runs, notes: 9 entries, 6 outcome rows."""
    ok("plan", str(write_json(ledger_dir / "plan.json", plan_body(SLUG, runs_per_arm=3,
                                                                  n_items=10))))
    runs = [draft("run", run_body(SLUG, ("f16", "q8")[i % 2], n_items=10, seed=i))
            for i in range(6)]
    ok("append", str(write_jsonl(ledger_dir / "runs.jsonl", runs)), "--jsonl")
    ok("note", "six runs done")
    return ledger_dir / ".logbook" / "ledger.db"


def replacing_read(db: Path, sql: str) -> list[tuple[Any, ...]]:
    """The reference: every row through a plain connection with the replacing decoder."""
    conn = sqlite3.connect(db)
    conn.text_factory = lambda b: b.decode("utf-8", "replace")
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


READS = {
    "raw_entries": f"SELECT {sqlite_rows.ENTRY_COLUMNS}, typeof(entry) FROM entries "
                   "ORDER BY seq",
    "entry_index": "SELECT seq, digest, kind, ts, signer, plan, arm, slug, status, session, "
                      "target FROM entry_index ORDER BY seq",
    "outcomes": "SELECT seq, metric, n, n_missing, total, columns FROM outcomes "
                        "ORDER BY seq",
}
DAMAGE = {
    "none": [],
    "a digest": ["UPDATE entries SET digest = CAST(X'FF' AS TEXT) WHERE seq = 5"],
    "a signature": ["UPDATE entries SET signature = CAST(X'FFFE41' AS TEXT) WHERE seq = 7"],
    "the first entry": ["UPDATE entries SET digest = CAST(X'C3' AS TEXT) WHERE seq = 0"],
    "the last entry": ["UPDATE entries SET signature = CAST(X'FF' AS TEXT) WHERE seq = 8"],
    "an index arm": ["UPDATE entry_index SET arm = CAST(X'FF' AS TEXT) WHERE seq = 4"],
    "an outcome metric": ["UPDATE outcomes SET metric = CAST(X'E282' AS TEXT) "
                          "WHERE seq = (SELECT max(seq) FROM outcomes)"],
    "two tables": ["UPDATE entries SET digest = CAST(X'FF' AS TEXT) WHERE seq = 3",
                   "UPDATE entry_index SET kind = CAST(X'FF' AS TEXT) WHERE seq = 6"],
}


@pytest.mark.parametrize("batch", [1, 2, 3, 2000])
@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_every_row_reads_as_the_replacing_decoder_reads_it(
        case: str, batch: int, ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alter(ledger, *DAMAGE[case])
    monkeypatch.setattr(sqlite_rows, "READ_BATCH", batch)
    store: Any = open_store(ledger)
    try:
        for method, sql in READS.items():
            for since in (0, 4):  # whole, and from a seq on as a resumed check reads
                want = replacing_read(ledger, sql.replace("ORDER BY", f"WHERE seq >= {since} "
                                                          "ORDER BY"))
                assert want, method
                read = (store.raw_entries(since) if method == "raw_entries"
                        else store.derived_rows(method, since))
                got = [tuple(r) for r in read]
                assert got == want, (method, case, batch, since)
        # reads interleaved, as verify makes them: each still reads its own rows
        pairs = zip(store.raw_entries(), store.derived_rows("entry_index"), strict=True)
        assert [(a[0], b[0]) for a, b in pairs] == [(i, i) for i in range(9)]
        # the connection's decoder is left as it was, for every other read
        assert store.conn.execute("SELECT CAST(X'FF' AS TEXT)").fetchone()[0] == "\ufffd"
    finally:
        store.close()


def _findings(db: Path) -> list[dict[str, Any]]:
    r = run_cli("verify", "--json")
    assert r.code == (0 if r.json["ok"] else 1), r.err
    return list(r.json["findings"])


@pytest.mark.parametrize("case", sorted(set(DAMAGE) - {"none"}))
def test_verify_finds_the_same_whatever_batch_the_damage_sits_in(
        case: str, ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alter(ledger, *DAMAGE[case])
    found = []
    for batch in (2000, 1, 2, 4):
        monkeypatch.setattr(sqlite_rows, "READ_BATCH", batch)
        found.append(_findings(ledger))
    assert found[0], case  # the damage is seen
    assert all(f == found[0] for f in found[1:]), case


def _verified(db: Path) -> Any:
    store: Any = open_store(db)
    try:
        return verify_store(store, logs=False)
    finally:
        store.close()


def test_the_root_verify_hands_on_is_the_root_over_the_entries(ledger_dir: Path) -> None:
    db = ledger_dir / ".logbook" / "ledger.db"
    for size in range(1, 10):  # every shape of tree up to 9 leaves: 1, 2, 3 = 2 + 1, ...
        if size > 1:
            ok("note", f"note {size}")
        result = _verified(db)
        assert result.ok and result.entries == size
        assert result.root == merkle.root_hash(result.digests), size
        assert len(result.digests) == size
    # a stored tree that lies changes findings, never the root (it is the entries')
    alter(db, "UPDATE tree SET hash = zeroblob(32)")
    result = _verified(db)
    assert not result.ok and {f.check for f in result.findings} == {"derived"}
    assert result.root == merkle.root_hash(result.digests)
    assert "root=" + result.root.hex() in run_cli("verify").out
