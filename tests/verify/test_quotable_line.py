"""`logbook verify` ends with one line a paper can cite and CI can compare (issue 21)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import run_cli

LINE = re.compile(r"logbook verify: (OK|FAIL findings=\d+) ledger=(\S+) size=(\d+) "
                  r"root=([0-9a-f]{64}) checked=(\S+) trusted=(\S+) logbook=(\S+)")


def test_the_last_line_names_ledger_size_root_checks_and_key(ledger_dir: Path) -> None:
    for i in range(3):
        assert run_cli("note", f"n{i}").code == 0
    assert run_cli("keys", "export", "--out", "me.pub").code == 0
    trusted = run_cli("keys", "list", "--json").json[0]["fingerprint"]
    r = run_cli("verify", "--trust", "me.pub")
    assert r.code == 0, r.err
    m = LINE.fullmatch(r.out.splitlines()[-1])
    assert m, r.out
    verdict, ledger, size, root, checked, key, _ = m.groups()
    made = run_cli("checkpoint", "--json").json  # signs the same size's root
    assert (verdict, ledger, int(size), root) == ("OK", made["ledger"], made["size"],
                                                  made["root"])
    assert checked == "digests,chain,signatures,references,derived" and key == trusted


def test_a_failed_verify_says_so_on_the_same_line(ledger_dir: Path) -> None:
    from test_tamper import Attacker, Row, flip_signature

    assert run_cli("note", "n").code == 0
    attacker = Attacker(ledger_dir / ".logbook" / "ledger.db")
    row = attacker.row(1)
    attacker.put(Row(row.seq, row.digest, row.raw, flip_signature(row.signature, 3)))
    attacker.close()
    r = run_cli("verify")
    assert r.code == 1
    m = LINE.fullmatch(r.out.splitlines()[-1])
    assert m and m.group(1) == "FAIL findings=1" and m.group(6) == "none", r.out
