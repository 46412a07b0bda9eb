"""`logbook init --ledger postgresql://... --name team` (needs cli/write.py's change)."""

from __future__ import annotations

import pg_cluster as cluster_fixtures
from conftest import run_cli

pg_cluster = cluster_fixtures.pg_cluster
pg_url = cluster_fixtures.pg_url


def test_init_on_a_url_from_the_command_line(pg_url: str) -> None:
    r = run_cli("--ledger", pg_url, "init", "--name", "team")
    assert r.code == 0, r.err
    assert r.out.split()[0] == "0" and r.out.split()[2] == "genesis"  # the data: SEQ DIGEST KIND
    assert f"at {pg_url}, signed by " in r.err  # the confirmation, on stderr
    assert run_cli("--ledger", pg_url, "note", "first").code == 0
    assert run_cli("--ledger", pg_url, "verify").code == 0
    again = run_cli("--ledger", pg_url, "init", "--name", "team")
    assert again.code == 2 and "a ledger already exists at" in again.err
    r = run_cli("clone", pg_url, "copy")
    assert r.code == 0, r.err
    assert run_cli("--ledger", "copy", "log").out == run_cli("--ledger", pg_url, "log").out
