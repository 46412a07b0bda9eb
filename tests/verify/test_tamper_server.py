"""Tampering only a database server allows (issue 18), and a cut tail on both stores: a
superuser's UPDATEs in place, a reordered seq, a middle row deleted with its derived rows, the
owner's TRUNCATE of a derived table (allowed with the triggers on), triggers disabled for good;
each caught by `verify`. The scenario, the template database and the attacker are those of
tests/verify/test_tamper_stores.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_tamper
import test_tamper_stores
from conftest import run_cli
from test_tamper import Scenario, assert_caught, expect
from test_tamper_stores import STORES, PostgresAttacker, fresh

# the fixtures this module's cases use (their own instances: module scope)
pg_cluster = test_tamper_stores.pg_cluster
pg_template = test_tamper_stores.pg_template
scenario = test_tamper.scenario


def _mid(sc: Scenario) -> int:
    return sc.size // 2


PG_ATTACKS: dict[str, tuple[list[str], Any]] = {
    # name: (statements, what verify must find: fn(scenario) -> list[Expect])
    "update-entry-bytes-in-place": (
        ["UPDATE entries SET entry = overlay(entry PLACING '\\x20'::bytea FROM 12 FOR 1) "
         "WHERE seq = {mid}"],
        lambda sc: [expect(_mid(sc), "digest", digests=(sc.digests[_mid(sc)],))]),
    "update-signature-in-place": (
        ["UPDATE entries SET signature = (SELECT signature FROM entries WHERE seq = {mid} + 1) "
         "WHERE seq = {mid}"],
        lambda sc: [expect(_mid(sc), "signature", digests=(sc.digests[_mid(sc)],))]),
    "seq-reordered-in-place": (
        ["UPDATE entries SET seq = -1 WHERE seq = {mid}",
         "UPDATE entries SET seq = {mid} WHERE seq = {mid} + 1",
         "UPDATE entries SET seq = {mid} + 1 WHERE seq = -1"],
        lambda sc: [expect(_mid(sc), "seq", "prev", digests=(sc.digests[_mid(sc) + 1],)),
                    expect(_mid(sc) + 1, "seq", "prev", digests=(sc.digests[_mid(sc)],))]),
    "middle-row-deleted-with-its-derived-rows": (
        [f"DELETE FROM {table} WHERE seq = {{mid}}"
         for table in ("entries", "entry_index", "outcomes", "run_sources")],
        lambda sc: [expect(_mid(sc), "prev", "seq")]),
    "tree-truncated-by-its-owner": (  # TRUNCATE is the owner's right on derived tables
        ["TRUNCATE tree"],
        lambda sc: [expect(None, "derived", digests=tuple(sc.digests[:2]))]),
    "index-truncated-by-its-owner": (
        ["TRUNCATE entry_index"],
        lambda sc: [expect(0, "derived", digests=(sc.digests[0],))]),
    "triggers-disabled-for-good-then-row-deleted": (
        ["ALTER TABLE entries DISABLE TRIGGER USER", "DELETE FROM entries WHERE seq = 3"],
        lambda sc: [expect(3, "prev", "seq")]),
}


@pytest.mark.parametrize("name", sorted(PG_ATTACKS))
def test_a_superuser_at_the_server_is_caught(name: str, scenario: Scenario,
                                             request: pytest.FixtureRequest) -> None:
    statements, expected = PG_ATTACKS[name]
    with fresh("postgresql", scenario, request) as target:
        a = PostgresAttacker(target.locator)
        if name.endswith("-by-its-owner"):  # with the triggers on: TRUNCATE needs none off
            a.pg.execute("SET session_replication_role = origin")
        for statement in statements:
            a.pg.execute(statement.format(mid=_mid(scenario)).encode())
        a.close()
        assert_caught(target.verify(), expected(scenario))


@pytest.mark.parametrize("kind", STORES)
def test_a_cut_tail_is_caught_by_the_stored_checkpoint(kind: str, scenario: Scenario,
                                                       request: pytest.FixtureRequest,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # deleting the last entries leaves a shorter chain that is whole: only a checkpoint of
    # the longer ledger (kept in the store, or published) can tell
    monkeypatch.setenv("LOGBOOK_KEY", str(scenario.root.parent / "config" / "logbook" / "keys"
                                          / "default.key"))
    with fresh(kind, scenario, request) as target:
        assert run_cli("--ledger", target.locator, "checkpoint").code == 0
        a = target.attacker()
        a.sql("DELETE FROM entries WHERE seq >= ?", scenario.size - 2)
        a.close()
        test_tamper.reindex(Path(target.locator) if kind == "sqlite" else target.locator)
        found = assert_caught(target.verify(), [
            expect(None, "checkpoint", message_has=f"records {scenario.size} entries but the "
                   f"ledger holds {scenario.size - 2}")])
        assert {f["check"] for f in found} == {"checkpoint"}, found
