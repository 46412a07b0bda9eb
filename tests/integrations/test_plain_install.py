"""A plain `pip install .` (no extras: no inspect_ai) reads Inspect's default `.eval` logs:
zstandard is a core dependency (pyproject.toml), so a fresh virtual environment appends one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
EVAL_LOG = next((ROOT / "tests" / "fixtures" / "inspect" / "run-errors").glob("*.eval"))


@pytest.mark.slow
def test_a_fresh_environment_with_only_pip_install_appends_an_eval_log(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LOGBOOK_", "PYTHON", "VIRTUAL_ENV"))}
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", str(ROOT)], env=env,
                             capture_output=True, text=True, timeout=1800, check=False)
    assert install.returncode == 0, install.stderr
    probe = subprocess.run([str(py), "-c", "import importlib.util as u; "
                            "print(u.find_spec('inspect_ai') is None, "
                            "u.find_spec('zstandard') is not None)"],
                           env=env, capture_output=True, text=True, check=True, timeout=60)
    assert probe.stdout.split() == ["True", "True"]  # only logbook's own reader is there
    logbook = str(venv / "bin" / "logbook")
    work = tmp_path / "plain"
    work.mkdir()
    for args in (["init", "--name", "plain"], ["append", "--from", "inspect", str(EVAL_LOG)],
                 ["verify"]):
        done = subprocess.run([logbook, *args], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{args}: {done.stderr}"
    assert " run" in subprocess.run([logbook, "log"], cwd=work, env=env, capture_output=True,
                                    text=True, check=True, timeout=60).stdout
