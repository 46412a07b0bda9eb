"""A real PostgreSQL server for the tests: ``initdb`` in a temporary folder owned by the
``postgres`` user (PostgreSQL refuses to run as root), ``pg_ctl start`` on a free port of
127.0.0.1 with its unix socket in that folder, one database per test, and the cluster stopped
and removed at the end of the session.

TCP connections need a password (scram-sha-256): the tests pass it as libpq does, through
PGPASSWORD, so that no URL they use carries it. Under CI=true a cluster that cannot start
fails the tests instead of skipping them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def _bindir() -> Path:
    """PG_BINDIR when set, else the newest server the distribution installed (Debian keeps
    them in /usr/lib/postgresql/VERSION/bin, off the PATH), else initdb's folder on the PATH."""
    named = os.environ.get("PG_BINDIR")
    if named:
        return Path(named)
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                   key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                   else 0)
    if found:
        return found[-1].parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else Path("/usr/lib/postgresql/15/bin")


BIN = _bindir()
PASSWORD = "pw-" + uuid.uuid4().hex  # a secret no output may ever contain
SUPERUSER = "postgres"


def _as_postgres(*cmd: str) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", SUPERUSER, "--", *cmd]
    return list(cmd)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    folder: Path
    port: int

    def url(self, db: str, user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{db}"

    def admin(self, db: str = "postgres") -> Any:
        import psycopg

        return psycopg.connect(self.url(db), password=PASSWORD, autocommit=True)

    def pg_ctl(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(_as_postgres(str(BIN / "pg_ctl"), "-D", str(self.folder / "data"),
                                           "-w", "-t", "60", *args),
                              capture_output=True, timeout=120)


def _start() -> Cluster:
    if not (BIN / "initdb").exists():
        raise RuntimeError(f"no PostgreSQL binaries in {BIN}")
    folder = Path(tempfile.mkdtemp(prefix="logbook-pg-"))
    folder.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(folder, SUPERUSER, SUPERUSER)
    pwfile = folder / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        shutil.chown(pwfile, SUPERUSER, SUPERUSER)
    init = subprocess.run(_as_postgres(
        str(BIN / "initdb"), "-D", str(folder / "data"), "-U", SUPERUSER, "--pwfile",
        str(pwfile), "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
        "--no-sync"), capture_output=True, timeout=120)
    pwfile.unlink()
    if init.returncode:
        raise RuntimeError(f"initdb failed: {init.stderr.decode()[-400:]}")
    cluster = Cluster(folder, _free_port())
    opts = (f"-c listen_addresses=127.0.0.1 -c port={cluster.port} "
            f"-c unix_socket_directories={folder} -c fsync=on -c max_connections=60")
    started = cluster.pg_ctl("-l", str(folder / "log"), "-o", opts, "start")
    if started.returncode:
        log = (folder / "log").read_text() if (folder / "log").exists() else ""
        raise RuntimeError(f"pg_ctl start failed: {started.stderr.decode()[-300:]} {log[-300:]}")
    return cluster


_RUNNING: list[Cluster] = []  # one cluster a session, whichever test module asks first
_USERS: list[int] = [0]


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    if not _RUNNING:
        try:
            _RUNNING.append(_start())
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
            cluster = _RUNNING.pop()
            cluster.pg_ctl("-m", "immediate", "stop")
            shutil.rmtree(cluster.folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new, empty database of its own for this test; PGPASSWORD set as a user would."""
    db = "t_" + uuid.uuid4().hex[:12]
    with pg_cluster.admin() as conn:
        conn.execute(f"CREATE DATABASE {db}".encode())
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    return pg_cluster.url(db)
