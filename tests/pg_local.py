"""A private PostgreSQL cluster on this machine, for the tests (tests/storage/pg_cluster.py)
and the benchmarks (team.py, intake.py): test scaffolding, kept out of the package.

``start`` runs ``initdb`` in a new temporary folder owned by the ``postgres`` user when run as
root (PostgreSQL refuses to run as root), then ``pg_ctl start`` on a free port of 127.0.0.1
with its unix socket in that folder and ``fsync`` on; ``Cluster.stop`` stops it and removes
the folder. TCP connections need the cluster's password (scram-sha-256), which callers pass
as libpq does, through PGPASSWORD, so that no URL carries it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUPERUSER = "postgres"


def bindir() -> Path:
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
    password: str
    bin: Path = field(default_factory=bindir)

    def url(self, db: str, user: str = SUPERUSER) -> str:
        """The database's URL, without the password (PGPASSWORD carries it)."""
        return f"postgresql://{user}@127.0.0.1:{self.port}/{db}"

    def admin(self, db: str = "postgres") -> Any:
        """An autocommit superuser connection (psycopg)."""
        import psycopg

        return psycopg.connect(self.url(db), password=self.password, autocommit=True)

    def create_database(self, prefix: str = "db") -> str:
        """A new, empty database's URL."""
        db = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with self.admin() as conn:
            conn.execute(f"CREATE DATABASE {db}".encode())
        return self.url(db)

    def pg_ctl(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(_as_postgres(str(self.bin / "pg_ctl"), "-D",
                                           str(self.folder / "data"), "-w", "-t", "60", *args),
                              capture_output=True, timeout=120)

    def stop(self) -> None:
        self.pg_ctl("-m", "immediate", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


def start(password: str, max_connections: int = 60) -> Cluster:
    """A new cluster, started; RuntimeError (or OSError) when it cannot be."""
    binaries = bindir()
    if not (binaries / "initdb").exists():
        raise RuntimeError(f"no PostgreSQL binaries in {binaries}")
    folder = Path(tempfile.mkdtemp(prefix="logbook-pg-"))
    folder.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(folder, SUPERUSER, SUPERUSER)
    pwfile = folder / "pw"
    pwfile.write_text(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(pwfile, SUPERUSER, SUPERUSER)
    init = subprocess.run(_as_postgres(
        str(binaries / "initdb"), "-D", str(folder / "data"), "-U", SUPERUSER, "--pwfile",
        str(pwfile), "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
        "--no-sync"), capture_output=True, timeout=120)
    pwfile.unlink()
    if init.returncode:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {init.stderr.decode()[-400:]}")
    cluster = Cluster(folder, _free_port(), password, binaries)
    opts = (f"-c listen_addresses=127.0.0.1 -c port={cluster.port} "
            f"-c unix_socket_directories={folder} -c fsync=on "
            f"-c max_connections={max_connections}")
    started = cluster.pg_ctl("-l", str(folder / "log"), "-o", opts, "start")
    if started.returncode:
        log = (folder / "log").read_text() if (folder / "log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"pg_ctl start failed: {started.stderr.decode()[-300:]} {log[-300:]}")
    return cluster
