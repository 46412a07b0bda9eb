"""A real PostgreSQL server for the tests: one private cluster a session
(tests/pg_local.py, shared with the benchmarks), one database per test, and
the cluster stopped and removed at the end of the session.

TCP connections need a password (scram-sha-256): the tests pass it as libpq does, through
PGPASSWORD, so that no URL they use carries it. Under CI=true a cluster that cannot start
fails the tests instead of skipping them.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator

import pg_local as local
import pytest
from pg_local import SUPERUSER, Cluster

BIN = local.bindir()
PASSWORD = "pw-" + uuid.uuid4().hex  # a secret no output may ever contain
_as_postgres = local._as_postgres  # the restart test runs pg_ctl as the cluster's owner
__all__ = ["BIN", "PASSWORD", "SUPERUSER", "Cluster", "pg_cluster", "pg_url"]

_RUNNING: list[Cluster] = []  # one cluster a session, whichever test module asks first
_USERS: list[int] = [0]


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    if not _RUNNING:
        try:
            _RUNNING.append(local.start(PASSWORD))
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            if os.environ.get("CI") == "true":
                pytest.fail(f"PostgreSQL could not start: {exc}")
            pytest.skip(f"PostgreSQL could not start: {exc}")
    _USERS[0] += 1
    try:
        yield _RUNNING[0]
    finally:
        _USERS[0] -= 1
        if not _USERS[0]:
            _RUNNING.pop().stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new, empty database of its own for this test; PGPASSWORD set as a user would."""
    url = pg_cluster.create_database("t")
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    return url
