"""Ledgers built once per test module and copied into each test that uses them.

`logbook init` and every append write through SQLite with synchronous=FULL, so building the
same scenario for each test spends most of the suite's time waiting on fsync. A module builds
its scenario once, through the public commands, as a user of its own (a home and a working
folder of their own, as conftest's isolation gives each test); each test then gets a copy of
that user's config (the signing key) and of the working folder (the ledger and the files the
build wrote) at the places conftest points it to, ``tmp_path/home`` and ``tmp_path/work``: the
same state a build of its own would leave, which the test may change freely.

    @pytest.fixture(scope="module")
    def scenario(tmp_path_factory):
        return build_once(tmp_path_factory, "scenario", lambda work: ...)

    @pytest.fixture
    def ledger_dir(scenario, tmp_path):
        return copy_into(scenario, tmp_path)
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import isolate, run_cli


@dataclass(frozen=True)
class Prebuilt:
    home: Path  # the builder's home: config/logbook/keys holds the ledger's signing key
    work: Path  # the builder's working folder, holding the ledger


def build_once(factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], object] | None = None) -> Prebuilt:
    """`logbook init WORK --name test` (what conftest's ``ledger_dir`` runs), then ``build``
    in WORK, as a user of its own; the environment is restored afterwards."""
    base = factory.mktemp(name)
    home, work = base / "home", base / "work"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, home, work)
        r = run_cli("init", str(work), "--name", "test")
        assert r.code == 0, r.err
        if build is not None:
            build(work)
    return Prebuilt(home, work)


def copy_into(prebuilt: Prebuilt, tmp_path: Path) -> Path:
    """The prebuilt user's key and folder as this test's own; the folder (tmp_path/work)."""
    shutil.copytree(prebuilt.home, tmp_path / "home", symlinks=True, dirs_exist_ok=True)
    work = tmp_path / "work"
    shutil.copytree(prebuilt.work, work, symlinks=True, dirs_exist_ok=True)
    return work


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Prebuilt:
    """A fresh ledger, initialised once for the module."""
    return build_once(tmp_path_factory, "initialised")


@pytest.fixture
def ledger_dir(initialised: Prebuilt, tmp_path: Path) -> Path:
    """conftest's ``ledger_dir`` (a fresh ledger in the test's working folder), copied from
    the module's instead of initialised again. A module takes it with
    ``from prebuilt import initialised, ledger_dir``."""
    return copy_into(initialised, tmp_path)
