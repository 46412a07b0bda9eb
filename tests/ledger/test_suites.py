"""Suites as records (issue 36, item 1): `logbook suite FILE` names a suite and its splits once;
plans name a split; runs name theirs with `--suite`/`--split` (or in their apparatus); every
look at a held-out split is counted, and a second look, or a plan written after the look, is
the audit's error A37 and the report's line. Built through the public commands, with real
lm-eval and Inspect outputs; every refusal leaves the ledger as it was."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from builders import write_json
from conftest import run_cli
from test_record import FIXTURES, PY, lb, lm_copy

from logbook.format.splits import id_set_digest

INSPECT_MAIN = FIXTURES / "inspect/run-main"
INSPECT_ERRORS = FIXTURES / "inspect/run-errors"
INSPECT_FAILED = FIXTURES / "inspect/run-failed"
LM_SEED1 = FIXTURES / "lm_eval/run-seed1"
LM_SEED2 = FIXTURES / "lm_eval/run-seed2"


def ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.code == 0, r.err
    return r.out


def refused(*args: str, says: str) -> None:
    """Exit 2, one sentence naming ``says``, and the ledger as it was."""
    before = run_cli("log", "--json").out
    r = run_cli(*args)
    assert r.code == 2, (r.code, r.out, r.err)
    assert says in r.err, r.err
    assert run_cli("log", "--json").out == before


def suite_file(name: str = "arith", dev: list[str] | None = None,
               test: list[str] | None = None, version: str = "1",
               listed: tuple[str, ...] = ("dev", "test")) -> Path:
    """A suite file (TOML) with dev and test splits, their ids in files beside it, or only
    their digest for a split not ``listed``."""
    dev = dev if dev is not None else [f"d{i:03d}" for i in range(60)]
    test = test if test is not None else [f"t{i:03d}" for i in range(40)]
    lines = [f'name = "{name}"', f'version = "{version}"']
    for split, ids in (("dev", dev), ("test", test)):
        lines.append(f"[splits.{split}]")
        if split in listed:
            Path(f"{name}-{split}.txt").write_text("\n".join(ids) + "\n")
            lines.append(f'ids_file = "{name}-{split}.txt"')
        else:
            lines += [f"n_items = {len(ids)}", f'items = "{id_set_digest(ids)}"']
    path = Path(f"{name}.suite.toml")
    path.write_text("\n".join(lines) + "\n")
    return path


def plan_file(slug: str, suite: str, metric: str = "acc", runs: int = 1) -> Path:
    path = Path(f"{slug}.plan.toml")
    path.write_text(f'slug = "{slug}"\ntitle = "{slug}"\nruns_per_arm = {runs}\n'
                    f'suite = "{suite}"\n[metric]\nname = "{metric}"\nkind = "proportion"\n'
                    '[[arms]]\nname = "f16"\nrole = "control"\n'
                    '[[arms]]\nname = "q8"\nrole = "treatment"\n')
    return path


def items(ids: list[str], seed: int) -> Path:
    """A JSON Lines outcome file for `append --from jsonl`."""
    path = Path(f"items-{seed}-{len(ids)}.jsonl")
    path.write_text("".join(json.dumps({"id": i, "score": float((k * 7 + seed) % 3 != 0)})
                            + "\n" for k, i in enumerate(ids)))
    return path


def run_on(ids: list[str], seed: int, *where: str) -> str:
    app = write_json(Path(f"app-{seed}.json"), {"model": "m-7b", "decoding": {"temperature": 0},
                                                "engine": "llama.cpp", "seed": seed})
    out = ok("append", "--from", "jsonl", str(items(ids, seed)), "--apparatus", str(app),
             *where)
    return out.split()[0]


def a37(plan: str | None = None) -> list[dict[str, Any]]:
    args = ["audit", "--json"] + (["--plan", plan] if plan else [])
    found = run_cli(*args).json["findings"]
    return [f for f in found if f["check"] == "A37"]


DEV = [f"d{i:03d}" for i in range(60)]
TEST = [f"t{i:03d}" for i in range(40)]


def test_a_suite_file_becomes_one_entry_with_its_splits(ledger_dir: Path) -> None:
    ok("suite", str(suite_file()))
    body = run_cli("show", "@1", "--json").json["entry"]["body"]
    assert body["n_items"] == 100 and body["splits"]["dev"]["n_items"] == 60
    # format.md §5: SHA-256 of the distinct ids, sorted, as a JSON array without spaces,
    # whatever order they came in (written out here apart from logbook's own function)
    spec = hashlib.sha256(json.dumps(sorted(set(TEST[::-1] + TEST[:3])),
                                     separators=(",", ":")).encode()).hexdigest()
    assert body["splits"]["test"]["items"] == f"sha256:{spec}" == id_set_digest(reversed(TEST))
    assert body["splits"]["test"]["holdout"] == {"looks": 1}
    assert "holdout" not in body["splits"]["dev"]
    # a plan names the split: the suite's fields come from the entry
    ok("plan", str(plan_file("kv", "arith:test")))
    suite = run_cli("show", "kv", "--json").json["entry"]["body"]["suite"]
    assert suite == {"name": "arith", "version": "1", "n_items": 40, "split": "test"}


def test_honest_work_tunes_on_dev_and_looks_at_test_once(ledger_dir: Path) -> None:
    ok("suite", str(suite_file()))
    for seed in range(3):  # exploratory tuning on dev, before the plan
        run_on(DEV, seed, "--suite", "arith", "--split", "dev")
    ok("plan", str(plan_file("kv", "arith:test")))
    for arm in ("f16", "q8"):
        run_on(TEST, 10 + len(arm), "--plan", "kv", "--arm", arm)
    assert a37() == []
    found = run_cli("audit", "--json").json["findings"]
    assert not [f for f in found if f["check"] == "A03"], found  # dev is not the plan's data
    report = ok("report", "kv")
    assert "test split of suite arith (version 1) looked at 1 time(s) (its holdout allows " \
           "1): plan kv @5 (2 run(s))" in report
    held = run_cli("report", "kv", "--json").json["checks"]["holdout"]
    assert held["looked"] == 1 and held["allowed"] == 1 and held["split"] == "test"
    # the search budget counts the dev configurations: tuned on dev, measured on test
    assert "search budget: 1 configuration(s) tried on suite arith in 5 run(s)" in report


def test_a_second_look_at_test_is_an_error_and_the_report_says_so(ledger_dir: Path) -> None:
    ok("suite", str(suite_file()))
    ok("plan", str(plan_file("kv", "arith:test")))
    for arm in ("f16", "q8"):
        run_on(TEST, len(arm), "--plan", "kv", "--arm", arm)
    peek = run_on(TEST, 99, "--suite", "arith", "--split", "test")
    found = a37()
    assert len(found) == 1 and found[0]["severity"] == "error"
    assert found[0]["seq"] == int(peek)
    assert "look 2 is run @" in found[0]["message"]
    assert "looked at 2 time(s)" in ok("report", "kv")
    assert a37("kv"), "the plan's own audit shows its split's second look"


def test_retracting_a_look_does_not_give_it_back(ledger_dir: Path) -> None:
    ok("suite", str(suite_file()))
    peek = run_on(TEST, 5, "--suite", "arith", "--split", "test")
    ok("retract", f"@{peek}", "--reason", "ran on the wrong split", "--category",
       "other")
    ok("plan", str(plan_file("kv", "arith:test")))
    found = a37()
    assert len(found) == 1 and "written after 1 look(s)" in found[0]["message"]
    assert "(retracted)" in found[0]["message"]
    for arm in ("f16", "q8"):
        run_on(TEST, len(arm), "--plan", "kv", "--arm", arm)
    found = a37()
    assert len(found) == 1 and "look 2 is plan kv" in found[0]["message"]


def test_test_items_under_the_dev_name_are_a_look_at_test(ledger_dir: Path) -> None:
    """The entry lists test's ids, not dev's: the door cannot refuse the run, the count
    finds it."""
    ok("suite", str(suite_file(listed=("test",))))
    run_on(TEST[:10] + DEV[:20], 3, "--suite", "arith", "--split", "dev")
    ok("plan", str(plan_file("kv", "arith:test")))
    found = a37()
    assert len(found) == 1 and "written after 1 look(s)" in found[0]["message"]


def test_a_second_plan_on_test_is_a_second_look(ledger_dir: Path) -> None:
    ok("suite", str(suite_file()))
    for slug in ("kv", "kv-again"):
        ok("plan", str(plan_file(slug, "arith:test")))
        for arm in ("f16", "q8"):
            run_on(TEST, len(arm) + len(slug), "--plan", slug, "--arm", arm)
    found = a37()
    assert len(found) == 1 and "look 2 is plan kv-again" in found[0]["message"]


def test_a_suite_allows_the_looks_it_says(ledger_dir: Path) -> None:
    path = suite_file()
    path.write_text(path.read_text() + "[splits.test.holdout]\nlooks = 2\n")
    ok("suite", str(path))
    ok("plan", str(plan_file("kv", "arith:test")))
    for arm in ("f16", "q8"):
        run_on(TEST, len(arm), "--plan", "kv", "--arm", arm)
    run_on(TEST, 77, "--suite", "arith", "--split", "test")
    assert a37() == []
    assert "looked at 2 time(s) (its holdout allows 2)" in ok("report", "kv")


def test_refusals_leave_the_ledger_as_it_was(ledger_dir: Path) -> None:
    ok("suite", str(suite_file()))
    refused("suite", str(suite_file()), says="body.version: suite 'arith' version '1' is "
            "already entry @1")
    refused("plan", str(plan_file("kv", "arith:holdout")), says="suite.split: suite 'arith' "
            "(@1) has no split 'holdout'")
    refused("plan", str(plan_file("kv", "nosuch:test")), says="suite: no suite entry names "
            "'nosuch'")
    refused("append", "--from", "jsonl", str(items(DEV[:5] + TEST[:1], 1)), "--suite", "arith",
            "--split", "dev", says="body.outcomes.id: item 't000' is not in split 'dev'")
    refused("append", "--from", "jsonl", str(items(DEV, 1)), "--split", "dev",
            says="--split goes with --suite")
    refused("append", "--from", "jsonl", str(items(DEV, 1)), "--suite", "other",
            says="--suite: no suite entry names 'other'")
    refused("append", "--from", "jsonl", str(items(DEV, 1)), "--suite", "arith", "--split",
            "val", says="--split: suite 'arith' (@1) has no split 'val'")
    refused("append", str(write_json(Path("d.json"), {"kind": "note", "body": {"text": "x"}})),
            "--suite", "arith", says="--suite and --split go with --from")
    ok("plan", str(plan_file("kv", "arith:test")))
    wrong = write_json(Path("wrong.json"), {"split": "dev", "model": "m"})
    refused("append", "--from", "jsonl", str(items(TEST, 2)), "--plan", "kv", "--arm", "f16",
            "--apparatus", str(wrong), says="body.apparatus.split: the run says 'dev', its "
            "plan's suite split is 'test'")
    # suite files the model refuses
    Path("dup.txt").write_text("a\nb\na\n")
    Path("dup.toml").write_text('name = "dup"\n[splits.test]\nids_file = "dup.txt"\n')
    refused("suite", "dup.toml", says="ids: item 'a' is listed twice")
    Path("x.txt").write_text("a\nb\n")
    Path("overlap.toml").write_text('name = "ov"\n[splits.dev]\nids_file = "x.txt"\n'
                                    '[splits.test]\nids_file = "x.txt"\n')
    refused("suite", "overlap.toml", says="splits.test.ids: item 'a' is in split 'dev' too")
    Path("gone.toml").write_text('name = "gone"\n[splits.test]\nids_file = "nope.txt"\n')
    refused("suite", "gone.toml", says="splits.test.ids_file")
    Path("digest.toml").write_text('name = "dg"\n[splits.test]\nids = ["a", "b"]\n'
                                   f'items = "{id_set_digest(["a"])}"\n')
    refused("suite", "digest.toml", says="items: sha256:")


@pytest.fixture
def inspect_ids(tmp_path: Path) -> list[str]:
    """The item ids of the Inspect fixture, read through the commands in a ledger of its own."""
    side = tmp_path / "side"
    side.mkdir()
    r = lb("init", side, "--name", "side", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = lb("append", "--from", "inspect", INSPECT_MAIN, cwd=side)
    assert r.returncode == 0, r.stderr
    shown = lb("show", "@1", "--items", "--json", "--limit", "1000", cwd=side)
    return sorted({i["id"] for i in json.loads(shown.stdout)["items"]})


def copy_cmd(dst: Path, src_dir: Path) -> list[str]:
    files = [str(f) for f in sorted(src_dir.iterdir()) if f.suffix == ".eval"]
    return [PY, "-c", "import pathlib, shutil, sys\n"
            "dst = pathlib.Path(sys.argv[-1]); dst.mkdir(parents=True, exist_ok=True)\n"
            "for s in sys.argv[1:-1]: shutil.copyfile(s, dst / pathlib.Path(s).name)\n",
            *files, str(dst)]


def test_logbook_run_with_inspect_counts_its_looks(ledger_dir: Path,
                                                   inspect_ids: list[str]) -> None:
    ok("suite", str(suite_file("arith", dev=[f"dev-{i}" for i in range(50)], test=inspect_ids)))
    ok("plan", str(plan_file("arith-kv", "arith:test", metric="match.accuracy")))
    for arm, logs in (("f16", INSPECT_MAIN), ("q8", INSPECT_ERRORS)):
        r = lb("run", "--plan", "arith-kv", "--arm", arm, "--from", "inspect", f"logs-{arm}",
               "--", *copy_cmd(ledger_dir / f"logs-{arm}", logs), cwd=ledger_dir)
        assert r.returncode == 0, r.stderr
    assert a37() == []
    # the held-out split, run again outside the plan (it failed after scoring 5 samples): a
    # second look
    r = lb("run", "--suite", "arith", "--split", "test", "--from", "inspect", "logs-peek", "--",
           *copy_cmd(ledger_dir / "logs-peek", INSPECT_FAILED), cwd=ledger_dir)
    assert r.returncode == 1, r.stderr  # the run failed, and is kept
    found = a37()
    assert len(found) == 1 and "look 2 is run @" in found[0]["message"]
    assert "looked at 2 time(s)" in ok("report", "arith-kv")
    # a split the suite does not have is refused before the command starts
    r = lb("run", "--suite", "arith", "--split", "nope", "--from", "inspect", "logs-x", "--",
           PY, "-c", "open('ran', 'w').close()", cwd=ledger_dir)
    assert r.returncode == 2 and "--split: suite 'arith'" in r.stderr
    assert not (ledger_dir / "ran").exists(), "refused before the command started"


def test_lm_eval_plan_written_after_a_look(ledger_dir: Path) -> None:
    ok("suite", str(suite_file("synth", dev=[f"dev-{i}" for i in range(20)],
                               test=[str(i) for i in range(200)])))
    ok("append", "--from", "lm-eval", str(LM_SEED1), "--suite", "synth", "--split", "test")
    ok("plan", str(plan_file("mc", "synth:test", metric="acc")))
    found = a37()
    assert len(found) == 1 and found[0]["severity"] == "error"
    assert "plan mc @3 is on the test split of suite synth (version 1) (suite entry @1), " \
           "written after 1 look(s) at it (run @2)" in found[0]["message"]
    r = lb("run", "--plan", "mc", "--arm", "f16", "--from", "lm-eval", "out", "--",
           *lm_copy(ledger_dir / "out", LM_SEED2), cwd=ledger_dir)
    assert r.returncode == 0, r.stderr
    assert "looked at 2 time(s)" in ok("report", "mc")


def test_a_ledger_with_suites_verifies_and_a_tampered_suite_does_not(ledger_dir: Path,
                                                                      tmp_path: Path) -> None:
    """`verify` and the independent verifier (tests/independent_verifier.py) know the kind;
    a suite entry's test split changed in the database is found."""
    import sqlite3
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1]))
    import independent_verifier as iv

    ok("suite", str(suite_file()))
    ok("plan", str(plan_file("kv", "arith:test")))
    ok("export", "--out", str(tmp_path / "e.jsonl"))
    assert iv.verify_export(tmp_path / "e.jsonl") == []
    db = ledger_dir / ".logbook" / "ledger.db"
    assert iv.verify_db(db) == []
    assert run_cli("verify").code == 0
    con = sqlite3.connect(db)  # an attacker with the file: the append-only triggers dropped
    con.execute("DROP TRIGGER IF EXISTS entries_no_update")
    (raw,) = con.execute("select entry from entries where seq = 1").fetchone()
    con.execute("update entries set entry = ? where seq = 1",
                (bytes(raw).replace(b'"t039"', b'"d000"'),))
    con.commit()
    con.close()
    assert run_cli("verify").code == 1
    assert iv.verify_db(db) != []


def test_brief_names_the_held_out_splits(ledger_dir: Path) -> None:
    """An agent reads the brief first: it names the split not to run outside its plan."""
    assert run_cli("brief", "--json").json["held_out"] == []
    ok("suite", str(suite_file()))
    assert run_cli("brief", "--json").json["held_out"] == [
        {"seq": 1, "suite": "arith", "version": "1", "split": "test", "looks": 1}]
    assert "  test split of suite arith (version 1), suite entry @1: allows 1 look(s)" \
        in ok("brief").splitlines()
    ok("retract", "@1", "--reason", "the splits were drawn wrong", "--category", "other")
    assert run_cli("brief", "--json").json["held_out"] == []
