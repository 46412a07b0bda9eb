"""Shared fixtures: every test gets its own config home and working folder, never the user's."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

_SKIPPED: list[str] = []

# tests are grouped by package (tests/cli, tests/verify, ...) and some reuse another group's
# scenario builders (the tamper suite's attacker, the hostile-input helpers): every group's
# folder is importable, whichever part of the suite is run
for _group in sorted(Path(__file__).parent.iterdir()):
    if _group.is_dir() and any(_group.glob("test_*.py")) and str(_group) not in sys.path:
        sys.path.append(str(_group))


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return orjson.loads(self.out)


def run_cli(*args: str, stdin: bytes = b"") -> CliResult:
    """Run `logbook ARGS` in-process, as a user would, capturing its output and exit code."""
    from logbook.cli.main import run

    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(err_b, encoding="utf-8", write_through=True)
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr = out, err
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        code = run([str(a) for a in args])
    finally:
        out.flush()
        err.flush()
        sys.stdout, sys.stderr, sys.stdin = saved
    return CliResult(code, out_b.getvalue().decode(), err_b.getvalue().decode())


def isolate(mp: pytest.MonkeyPatch, home: Path, work: Path) -> None:
    """A user of their own: config and keys under ``home``, no LOGBOOK_* settings, working in
    ``work`` (created)."""
    mp.setenv("XDG_CONFIG_HOME", str(home / "config"))
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_STATE_HOME", str(home / "state"))
    for var in ("LOGBOOK_DIR", "LOGBOOK_KEY", "LOGBOOK_SESSION", "LOGBOOK_STATE_DIR"):
        mp.delenv(var, raising=False)
    work.mkdir(parents=True, exist_ok=True)
    mp.chdir(work)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    home = tmp_path / "home"
    home.mkdir()
    isolate(monkeypatch, home, tmp_path / "work")
    yield


@pytest.fixture
def cli() -> Any:
    return run_cli


@pytest.fixture
def ledger_dir(tmp_path: Path) -> Path:
    """A fresh ledger in the test's working folder."""
    work = tmp_path / "work"
    r = run_cli("init", str(work), "--name", "test")
    assert r.code == 0, r.err
    return work


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files that hold a test marked slow or long come first, each file's tests in their
    order: the workers (a file to a worker, in this order: --no-loadscope-reorder in
    pyproject.toml) start on the minutes-long files, and the many short ones fill in at the
    end, instead of one worker finishing a simulation alone."""
    first = {item.path for item in items
             if item.get_closest_marker("slow") or item.get_closest_marker("long")}
    items.sort(key=lambda item: item.path not in first)  # stable: the order otherwise kept


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _SKIPPED.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI=true a skip is a failure: a test that needs a tool gets it from .ci/run."""
    if os.environ.get("CI") == "true" and _SKIPPED:
        print(f"\nCI=true: {len(_SKIPPED)} test(s) skipped, which counts as a failure:",
              file=sys.stderr)
        for nodeid in _SKIPPED:
            print(f"  {nodeid}", file=sys.stderr)
        session.exitstatus = 1
