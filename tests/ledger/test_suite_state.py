"""A plan's suite state kept in derived rows (issue 32, item 10): the door reads it instead of
the plan's runs, so it must say exactly what the plan's standing runs say, whatever happened
to them (retractions, admissions, suite amendments), on a ledger made before the rows, after
`reindex`, and on PostgreSQL; `verify` compares the rows with its own fold of the chain and an
edited row is a finding."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pg_cluster as cluster_fixtures
import prebuilt
import pytest
from builders import plan_body, run_body, write_json
from conftest import run_cli

from logbook.crypto.signing import SigningKey
from logbook.errors import InputError
from logbook.format.suite import SuiteFold
from logbook.ledger.service import Ledger

initialised, ledger_dir = prebuilt.initialised, prebuilt.ledger_dir
pg_cluster, pg_url = cluster_fixtures.pg_cluster, cluster_fixtures.pg_url

H_A = "sha256:" + "a" * 64
H_B = "sha256:" + "b" * 64


def cli_ok(*args: str) -> Any:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r


def run_file(slug: str, ids: list[str], dataset: str | None, name: str) -> str:
    body = run_body(slug, "f16", n_items=len(ids))
    body["outcomes"]["id"] = ids
    if dataset:
        body["apparatus"]["dataset_hash"] = dataset
    return str(write_json(Path(name), {"kind": "run", "body": body}))


def seq_of(r: Any) -> str:
    return "@" + r.out.split()[0]


def plan4(slug: str = "st") -> None:
    cli_ok("plan", str(write_json(Path(f"{slug}.json"), plan_body(slug, n_items=4))))


def test_a_retraction_frees_what_the_retracted_run_held(ledger_dir: Path) -> None:
    plan4()
    first = cli_ok("append", run_file("st", ["a", "b", "c", "d"], H_A, "r1.json"))
    assert run_cli("append", run_file("st", ["e"], H_A, "r2.json")).code == 2  # 5 ids > 4
    assert run_cli("append", run_file("st", ["a"], H_B, "r3.json")).code == 2  # H_A fixed
    cli_ok("retract", seq_of(first), "--reason", "wrong split", "--category", "data_error")
    # the plan holds no run now: another dataset and four other ids are its suite
    cli_ok("append", run_file("st", ["e", "f", "g", "h"], H_B, "r4.json"))
    assert run_cli("append", run_file("st", ["a"], H_B, "r5.json")).code == 2
    assert run_cli("append", run_file("st", ["e"], H_A, "r6.json")).code == 2
    cli_ok("verify")


def test_a_suite_amendment_and_an_admission(ledger_dir: Path) -> None:
    plan4()
    cli_ok("append", run_file("st", ["a", "b", "c", "d"], H_A, "r1.json"))
    loose = run_body(None, None, n_items=2)
    loose["outcomes"]["id"] = ["x", "y"]
    loose["apparatus"]["dataset_hash"] = H_B
    kept = cli_ok("append", str(write_json(Path("l.json"), {"kind": "run", "body": loose})))
    assert run_cli("admit", seq_of(kept), "--plan", "st", "--arm", "f16",
                   "--reason", "same suite").code == 2  # x, y: six ids in a suite of four
    amended = cli_ok("amend", "st", "--set", 'suite={"name": "suite", "version": "2", '
                     '"n_items": 2}', "--reason", "the suite is two items now")
    cli_ok("admit", seq_of(kept), "--plan", "st", "--arm", "f16", "--reason", "suite 2")
    assert run_cli("append", run_file("st", ["z"], H_B, "r2.json")).code == 2  # x, y fixed
    cli_ok("retract", seq_of(amended), "--reason", "back to four", "--category", "other")
    # the suite is four items again, held by the first run and the admitted one: six ids;
    # a run of ids it holds does not grow it, one new id does
    cli_ok("verify")
    cli_ok("append", run_file("st", ["a"], H_A, "r3.json"))
    assert run_cli("append", run_file("st", ["q"], H_A, "r4.json")).code == 2


def _as_before_the_rows(db: Path) -> None:
    """The ledger as a release before the rows left it: schema 7, no suite tables."""
    conn = sqlite3.connect(db)
    conn.executescript("DROP TABLE plan_suites; DROP TABLE plan_items; "
                       "DROP INDEX entry_index_plan_kind; PRAGMA user_version = 7;")
    conn.close()


def test_a_ledger_from_before_the_rows(ledger_dir: Path) -> None:
    plan4()
    cli_ok("append", run_file("st", ["a", "b", "c"], H_A, "r1.json"))
    _as_before_the_rows(ledger_dir / ".logbook" / "ledger.db")
    # the first write migrates; the door folds the plan's entries once
    assert run_cli("append", run_file("st", ["d", "e"], H_A, "r2.json")).code == 2
    assert run_cli("append", run_file("st", ["a"], H_B, "r3.json")).code == 2
    cli_ok("append", run_file("st", ["d"], H_A, "r4.json"))
    cli_ok("verify")
    assert run_cli("append", run_file("st", ["e"], H_A, "r5.json")).code == 2
    cli_ok("reindex")
    cli_ok("verify")
    assert run_cli("append", run_file("st", ["e"], H_A, "r6.json")).code == 2


# ----------------------------------------------------------------- edited rows are findings
def _tamper(db: Path, statement: str) -> Any:
    conn = sqlite3.connect(db)
    conn.execute(statement)
    conn.commit()
    conn.close()
    r = run_cli("verify", "--json")
    assert r.code == 1, r.out
    return [f for f in r.json["findings"] if "plan_suites" in f["message"]]


@pytest.mark.parametrize("statement", [
    "UPDATE plan_suites SET n_known = n_known - 1 WHERE seq = (SELECT max(seq) FROM "
    "plan_suites)",
    "UPDATE plan_suites SET first_hash = 'sha256:' || hex(randomblob(32)) WHERE first_hash "
    "IS NOT NULL",
    "DELETE FROM plan_items WHERE item = 'b'",
    "INSERT INTO plan_items SELECT plan, items_key, 'zz' FROM plan_items LIMIT 1",
    "INSERT INTO plan_suites VALUES ('" + "c" * 64 + "', 99, -1, NULL, NULL, 0, 99)",
    # an id kept as a blob of the same letters, and a latest row naming a set that is not kept
    "UPDATE plan_items SET item = CAST(item AS BLOB) WHERE item = 'b'",
    "UPDATE plan_suites SET items_key = items_key + 1 WHERE seq = (SELECT max(seq) FROM "
    "plan_suites)",
])
def test_an_edited_suite_row_is_a_finding(ledger_dir: Path, statement: str) -> None:
    plan4()
    cli_ok("append", run_file("st", ["a", "b", "c"], H_A, "r1.json"))
    cli_ok("verify")
    assert _tamper(ledger_dir / ".logbook" / "ledger.db", statement)


def test_postgres_keeps_the_same_rows_and_a_forged_newer_row_is_found(
        pg_url: str, ledger_dir: Path, pg_cluster: Any) -> None:
    cli_ok("clone", ".", pg_url)  # the module's initialised ledger, on the server
    cli_ok("--ledger", pg_url, "plan", str(write_json(Path("st.json"),
                                                      plan_body("st", n_items=4))))
    first = cli_ok("--ledger", pg_url, "append", run_file("st", ["a", "b", "c"], H_A, "1.json"))
    assert run_cli("--ledger", pg_url, "append",
                   run_file("st", ["d", "e"], H_A, "2.json")).code == 2
    cli_ok("--ledger", pg_url, "retract", seq_of(first), "--reason", "x", "--category", "other")
    cli_ok("--ledger", pg_url, "append", run_file("st", ["d", "e", "f", "g"], H_B, "3.json"))
    cli_ok("--ledger", pg_url, "verify")
    # an id added to the plan's current item set
    with pg_cluster.admin(pg_url.rsplit("/", 1)[1]) as conn:
        conn.execute("INSERT INTO plan_items SELECT plan, items_key, 'zz' FROM plan_suites "
                     "WHERE seq = (SELECT max(seq) FROM plan_suites)")
    r = run_cli("--ledger", pg_url, "verify", "--json")
    assert r.code == 1 and [f["message"].split(": ", 1)[1] for f in r.json["findings"]] == [
        "its item ids differ from those the plan's standing runs hold"], r.out
    # an agent may insert rows (its role has INSERT): a newer state row that lets any run in
    with pg_cluster.admin(pg_url.rsplit("/", 1)[1]) as conn:
        conn.execute("INSERT INTO plan_suites SELECT plan, seq + 1000, since, first_seq, "
                     "first_hash, 0, items_key + 1000 FROM plan_suites WHERE seq = (SELECT "
                     "max(seq) FROM plan_suites)")
    r = run_cli("--ledger", pg_url, "verify", "--json")
    assert r.code == 1 and any("plan_suites" in f["message"] for f in r.json["findings"])


# ------------------------------------------- the rows against a fold, under random histories
def _expected(fold: SuiteFold, plan: str, ids: list[str], dataset: str | None,
              n_items: int) -> bool:
    """Whether the door should take a completed run: the suite rules against the fold."""
    st = fold.state(plan)
    if st.first_seq is not None and st.first_hash and dataset != st.first_hash:
        return False
    return set(ids) <= set(st.items) or len(set(st.items) | set(ids)) <= n_items


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_door_agrees_with_a_fold_of_the_chain(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    key = SigningKey.generate()
    pool = [f"i{k}" for k in range(7)]
    n_items = {"v": 5}
    with Ledger.init(tmp_path / "lb", "fold", key) as ledger:
        plan = ledger.append("plan", plan_body("fold", n_items=5), key).digest
        loose: list[str] = []
        live: list[str] = []
        took = refused = 0
        for step in range(45):
            fold = SuiteFold()
            for e in ledger.entries():
                fold.add(e.seq, e.digest, orjson.loads(e.raw))
            op = rng.random()
            ids = rng.sample(pool, rng.randint(1, 3))
            dataset = rng.choice([H_A, H_A, H_B, None])
            body = run_body("fold", rng.choice(["f16", "q8"]), n_items=len(ids))
            body["outcomes"]["id"] = ids
            if dataset:
                body["apparatus"]["dataset_hash"] = dataset
            if op < 0.5:
                want = _expected(fold, plan, ids, dataset, n_items["v"])
                try:
                    live.append(ledger.append("run", body, key).digest)
                    took += 1
                    assert want, (seed, step, "the door took a run the fold refuses")
                except InputError:
                    refused += 1
                    assert not want, (seed, step, "the door refused a run the fold takes")
            elif op < 0.65:
                loose.append(ledger.append("run", {**body, "plan": None, "arm": None},
                                           key).digest)
            elif op < 0.75 and loose:
                run = loose.pop(rng.randrange(len(loose)))
                want = _expected(fold, plan, ids_of(ledger, run), dataset_of(ledger, run),
                                 n_items["v"])
                try:
                    live.append(ledger.append("admission", {"run": run, "plan": plan,
                                                            "arm": "f16"}, key).digest)
                    assert want, (seed, step)
                except InputError:
                    assert not want, (seed, step)
            elif op < 0.85:
                n_items["v"] = rng.choice([4, 5, 6])
                live.append(ledger.append("amendment", {
                    "plan": plan, "reason": "suite", "changes": {"suite": {
                        "name": "suite", "version": str(step), "n_items": n_items["v"]}}},
                    key).digest)
            elif live:
                target = live.pop(rng.randrange(len(live)))
                try:
                    ledger.append("retraction", {"target": target, "reason": "r",
                                                 "category": "other"}, key)
                except InputError:  # an amendment whose withdrawal the runs do not fit
                    continue
                if ledger.get(target).kind == "amendment":
                    n_items["v"] = int(ledger.plan_body(plan)["suite"]["n_items"])
        assert took and refused
    r = run_cli("--ledger", str(tmp_path / "lb"), "verify")
    assert r.code == 0, r.err


def ids_of(ledger: Ledger, digest: str) -> list[str]:
    return list(ledger.get(digest).body["outcomes"]["id"])


def dataset_of(ledger: Ledger, digest: str) -> str | None:
    return ledger.get(digest).body["apparatus"].get("dataset_hash")
