"""The tamper suite's database attacks on both stores (issue 18): every case of
tests/verify/test_tamper.py that mutates a ledger's tables runs against the SQLite file and
against a PostgreSQL team ledger, and `verify` must catch it with the same finding.

The PostgreSQL ledger is the scenario's SQLite ledger copied in with `logbook clone` once per
module (a template database on the session's cluster, tests/storage/pg_cluster.py); each case
gets its own database made from that template and dropped after it. The attacker there is a
superuser who turns the triggers off for its session (``session_replication_role = replica``)
and rewrites rows with plain SQL: the same statements as on SQLite, in PostgreSQL's dialect.

Cases that damage the SQLite file itself (a value stored with the wrong storage class, a
missing table, torn pages) have no PostgreSQL twin: its columns have fixed types. They stay in
tests/verify/test_verify_storage.py. The cases only a server allows, and a cut tail, are in
tests/verify/test_tamper_server.py.
"""

from __future__ import annotations

import hashlib
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pg_cluster as cluster_fixtures
import psycopg
import pytest
import rfc8785
import test_tamper
from conftest import CliResult, run_cli
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_cluster import PASSWORD, Cluster
from test_tamper import (
    DB_ATTACKS,
    TYPE_CONFUSIONS,
    Attacker,
    Expect,
    Row,
    Scenario,
    assert_caught,
    assert_verified,
    copy_ledger,
    expect,
    fingerprint,
    resign_all,
)

# the session's cluster (pg_cluster.py) and the module's scenario ledger (test_tamper.py)
pg_cluster = cluster_fixtures.pg_cluster
scenario = test_tamper.scenario
STORES = ("sqlite", "postgresql")

# SQLite's spelling -> PostgreSQL's, for the statements the attacks share
_DIALECT = (
    ("?", "%s"),
    ("zeroblob(32)", "decode(repeat('00', 32), 'hex')"),
    ("CAST(replace(CAST(columns AS TEXT), '1,', '0,') AS BLOB)",
     "convert_to(replace(convert_from(columns, 'UTF8'), '1,', '0,'), 'UTF8')"),
)
# attacks on what only a SQLite file can hold (a value of the wrong storage class)
SQLITE_ONLY = frozenset({"derived-outcomes-columns-as-text"})


def postgres_sql(statement: str) -> str:
    for sqlite, postgres in _DIALECT:
        statement = statement.replace(sqlite, postgres)
    return statement


class PostgresAttacker(Attacker):
    """A superuser of the ledger's database with the triggers off for its own session."""

    def __init__(self, url: str) -> None:  # not super().__init__: that opens a SQLite file
        self.db = url  # type: ignore[assignment]  # what reindex() and verify take
        self.pg = psycopg.connect(url, password=PASSWORD, autocommit=True)
        self.pg.execute("SET session_replication_role = replica")  # no user triggers fire

    def rows(self) -> list[Row]:
        return [Row(s, d, bytes(e), g) for s, d, e, g in self.pg.execute(
            "SELECT seq, digest, entry, signature FROM entries ORDER BY seq")]

    def row(self, seq: int) -> Row:
        found = self.pg.execute("SELECT seq, digest, entry, signature FROM entries "
                                "WHERE seq = %s", (seq,)).fetchone()
        assert found is not None, seq
        s, d, e, g = found
        return Row(s, d, bytes(e), g)

    def put(self, row: Row) -> None:
        self.pg.execute("INSERT INTO entries (seq, digest, entry, signature) VALUES "
                        "(%s,%s,%s,%s) ON CONFLICT (seq) DO UPDATE SET digest = "
                        "EXCLUDED.digest, entry = EXCLUDED.entry, signature = EXCLUDED.signature",
                        (row.seq, row.digest, row.raw, row.signature))

    def replace_all(self, rows: list[Row]) -> None:
        self.pg.execute("DELETE FROM entries")
        for r in rows:
            self.put(r)

    def sql(self, statement: str, *args: Any) -> None:
        cur = self.pg.execute(postgres_sql(statement).encode(), args)
        assert cur.rowcount != 0, f"the attack changed nothing: {statement}"

    def close(self) -> None:
        self.pg.close()


@dataclass
class Template:
    """The scenario cloned into one database of the cluster, copied for each case."""

    cluster: Cluster
    name: str

    @contextmanager
    def copy(self) -> Iterator[str]:
        db = "tamper_" + uuid.uuid4().hex[:12]
        with self.cluster.admin() as conn:
            conn.execute(f"CREATE DATABASE {db} TEMPLATE {self.name}".encode())
        try:
            yield self.cluster.url(db)
        finally:
            with self.cluster.admin() as conn:
                conn.execute(f"DROP DATABASE {db} WITH (FORCE)".encode())


@pytest.fixture(scope="module")
def pg_template(pg_cluster: Cluster, scenario: Scenario) -> Template:
    name = "tamper_template_" + uuid.uuid4().hex[:8]
    with pg_cluster.admin() as conn:
        conn.execute(f"CREATE DATABASE {name}".encode())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PGPASSWORD", PASSWORD)
        r = run_cli("clone", str(scenario.db), pg_cluster.url(name))
    assert r.code == 0, r.err
    return Template(pg_cluster, name)


@dataclass(frozen=True)
class Target:
    """One store holding a fresh copy of the scenario's ledger."""

    kind: str
    locator: str  # the .db file or the postgresql:// URL

    def attacker(self) -> Attacker:
        if self.kind == "sqlite":
            return Attacker(Path(self.locator))
        return PostgresAttacker(self.locator)

    def verify(self, *extra: str) -> CliResult:
        return run_cli("--ledger", self.locator, "verify", "--json", *extra)


@contextmanager
def fresh(kind: str, sc: Scenario, request: pytest.FixtureRequest) -> Iterator[Target]:
    """A copy of the honest ledger in store ``kind``, checked to verify before any attack."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            target = Target(kind, str(copy_ledger(sc, Path(tmp))))
            assert_verified(target.verify(), sc.size)
            yield target
        return
    template: Template = request.getfixturevalue("pg_template")
    with pytest.MonkeyPatch.context() as mp, template.copy() as url:
        mp.setenv("PGPASSWORD", PASSWORD)  # as a user passes it: never in the URL
        target = Target(kind, url)
        assert_verified(target.verify(), sc.size)
        yield target


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, scenario: Scenario) -> Iterator[Target]:
    with fresh(request.param, scenario, request) as target:
        yield target


def attacked(target: Target, name: str, sc: Scenario) -> tuple[list[Expect], CliResult]:
    attacker = target.attacker()
    expected = DB_ATTACKS[name](attacker, sc)
    attacker.close()
    return expected, target.verify()


def shape(findings: list[dict[str, Any]]) -> set[tuple[str, int | None]]:
    """What a finding is about, whatever store it came from: its check and entry."""
    return {(f["check"], f["seq"]) for f in findings}


@pytest.mark.parametrize(("store", "name"), [
    (kind, name) for kind in STORES for name in sorted(DB_ATTACKS)
    if kind == "sqlite" or name not in SQLITE_ONLY], indirect=["store"])
def test_db_attack_is_caught(name: str, store: Target, scenario: Scenario,
                             request: pytest.FixtureRequest) -> None:
    expected, r = attacked(store, name, scenario)
    found = assert_caught(r, expected)
    if store.kind == "postgresql":  # the same findings as the same attack on the file
        with fresh("sqlite", scenario, request) as twin:
            _, on_file = attacked(twin, name, scenario)
        assert shape(found) == shape(on_file.json["findings"]), (found, on_file.json)


# A single changed byte anywhere in any stored entry, chosen by hypothesis, in either store.
@pytest.mark.parametrize("kind", STORES)
@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_changed_entry_byte_is_caught(kind: str, scenario: Scenario,
                                          request: pytest.FixtureRequest,
                                          data: st.DataObject) -> None:
    seq = data.draw(st.integers(0, scenario.size - 1), label="seq")
    with fresh(kind, scenario, request) as target:
        a = target.attacker()
        row = a.row(seq)
        offset = data.draw(st.integers(0, len(row.raw) - 1), label="offset")
        xor = data.draw(st.integers(1, 255), label="xor")
        raw = bytearray(row.raw)
        raw[offset] ^= xor
        a.put(Row(seq, row.digest, bytes(raw), row.signature))
        a.close()
        assert_caught(target.verify(), [expect(seq, "digest", digests=(row.digest,))])


def _resigned(target: Target, keep_genesis_keys: bool) -> Ed25519PrivateKey:
    mallory = Ed25519PrivateKey.generate()
    a = target.attacker()
    rows = resign_all([r.env for r in a.rows()], mallory, keep_genesis_keys)
    a.replace_all(rows)
    a.close()
    test_tamper.reindex(Path(target.locator) if target.kind == "sqlite" else target.locator)
    return mallory


def test_resigned_db_passes_alone_and_fails_trust(store: Target, scenario: Scenario) -> None:
    mallory = _resigned(store, keep_genesis_keys=False)
    # a consistent ledger by another key: nothing in the ledger itself can tell
    assert_verified(store.verify(), scenario.size)
    assert_verified(store.verify("--trust", fingerprint(mallory)), scenario.size)
    for trust in (scenario.fp_a, str(scenario.pub_a)):
        found = assert_caught(store.verify("--trust", trust), [expect(0, "trust")])
        assert {f["check"] for f in found} == {"trust"}, found


def test_honest_db_passes_trust(store: Target, scenario: Scenario) -> None:
    assert_verified(store.verify("--trust", scenario.fp_a), scenario.size)
    assert_verified(store.verify("--trust", str(scenario.pub_a)), scenario.size)
    assert_caught(store.verify("--trust", scenario.fp_b), [expect(0, "trust")])


def test_resigned_db_keeping_original_key_in_genesis_fails_trust(store: Target,
                                                                 scenario: Scenario) -> None:
    # the attacker's genesis lists the original key A beside its own and is signed by its own
    _resigned(store, keep_genesis_keys=True)
    assert_caught(store.verify("--trust", scenario.fp_a), [expect(0, "trust")])


@pytest.mark.parametrize("name", sorted(k for k, v in TYPE_CONFUSIONS.items()
                                        if v[0] in ("entry", "body")))
def test_db_wrong_type_is_a_finding_not_a_crash(name: str, store: Target) -> None:
    # the export's type confusions written into the store as canonical bytes, digest fixed
    where, seq, fld, value = TYPE_CONFUSIONS[name]
    a = store.attacker()
    rows = a.rows()
    if seq == -1:
        seq = max(r.seq for r in rows if r.env["kind"] == "note")
    env = rows[seq].env
    (env if where == "entry" else env["body"])[fld] = value
    raw = rfc8785.dumps(env)
    a.put(Row(seq, hashlib.sha256(raw).hexdigest(), raw, rows[seq].signature))
    a.close()
    r = store.verify()
    assert r.code == 1, (r.code, r.err[-400:])
    assert any(f["seq"] == seq for f in r.json["findings"]), r.json["findings"]


def test_empty_database_fails(store: Target) -> None:
    a = store.attacker()
    for table in ("entries", "entry_index", "outcomes", "signing_keys", "tree", "plan_suites",
                  "plan_items"):
        a.sql(f"DELETE FROM {table}")
    a.close()
    r = store.verify()
    assert r.code == 1, (r.code, r.err)
    assert r.json["ok"] is False and r.json["entries"] == 0
    assert [f["check"] for f in r.json["findings"]] == ["empty"]


# --- checkpoints kept in the store: made honestly, then edited ---------------------------


def stored_note(a: Attacker) -> str:
    """The note of the one checkpoint the store keeps."""
    if isinstance(a, PostgresAttacker):
        found = a.pg.execute("SELECT note FROM checkpoints").fetchone()
    else:
        found = a.conn.execute("SELECT note FROM checkpoints").fetchone()
    assert found is not None
    return str(found[0])


def _checkpoint_note(note: str, line: int, value: str) -> str:
    lines = note.split("\n")
    lines[line] = value
    return "\n".join(lines)


CHECKPOINT_EDITS: dict[str, tuple[str, str]] = {
    # name: (statement on the one stored checkpoint, what verify says of it)
    "row-size": ("UPDATE checkpoints SET size = size - 1", "does not match its signed note"),
    "root-in-note": ("UPDATE checkpoints SET note = ?, root = ?", "is not the ledger's root"),
    "signature-in-note": ("UPDATE checkpoints SET note = ?", "is not signed by a key"),
    "origin-in-note": ("UPDATE checkpoints SET note = ?", "does not name this ledger"),
}


@pytest.mark.parametrize("name", sorted(CHECKPOINT_EDITS))
def test_an_edited_stored_checkpoint_is_caught(name: str, store: Target, scenario: Scenario,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGBOOK_KEY", str(scenario.root.parent / "config" / "logbook" / "keys"
                                          / "default.key"))  # the ledger's genesis key
    r = run_cli("--ledger", store.locator, "checkpoint", "--json")
    assert r.code == 0, r.err
    assert_verified(store.verify(), scenario.size)
    a = store.attacker()
    note = stored_note(a)
    statement, says = CHECKPOINT_EDITS[name]
    args: tuple[str, ...] = ()
    if name == "root-in-note":
        args = (_checkpoint_note(note, 2, "A" * 43 + "="), (b"\x00" * 32).hex())
    elif name == "signature-in-note":
        sig_line = note.rstrip("\n").split("\n")[-1]
        flipped = sig_line[:-3] + ("A" if sig_line[-3] != "A" else "B") + sig_line[-2:]
        args = (note.replace(sig_line, flipped),)
    elif name == "origin-in-note":
        args = (_checkpoint_note(note, 0, "logbook/another ledger"),)
    a.sql(statement, *args)
    a.close()
    found = assert_caught(store.verify(), [expect(None, "checkpoint", message_has=says)])
    assert {f["check"] for f in found} == {"checkpoint"}, found
