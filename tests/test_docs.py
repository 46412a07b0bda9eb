"""The docs' shell examples run, verbatim and in order, against a fresh ledger."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def sh_blocks(name: str) -> list[str]:
    text = (DOCS / name).read_text()
    return re.findall(r"```sh\n(.*?)```", text, flags=re.S)


def run_blocks(blocks: list[str], cwd: Path) -> list[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    outputs = []
    for block in blocks:
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"block failed:\n{block}\n--- stderr ---\n{r.stderr}"
        outputs.append(r.stdout)
    return outputs


def test_quickstart_runs(tmp_path: Path) -> None:
    blocks = sh_blocks("quickstart.md")
    assert blocks[0].startswith("pip install")  # the install line is the README's, not rerun
    out = run_blocks(blocks[1:], tmp_path / "work")
    report = out[-2]
    assert "Report: kv-q8-vs-f16" in report
    assert "failed" in report and "engine OOM" in report
    # three items answered alike never earn success from a zero-width interval (issue 33)
    assert "Verdict: inconclusive" in report and "paired-newcombe-score" in report, report
    brief = out[-1]
    assert "\nNEXT:" in brief and "retracts" in brief


def test_readme_first_screen_has_the_two_setup_commands() -> None:
    readme = (DOCS.parent / "README.md").read_text()
    first = "\n".join(readme.splitlines()[:25])
    block = re.search(r"```sh\n(.*?)```", first, flags=re.S)
    assert block is not None
    lines = [ln for ln in block.group(1).splitlines() if ln.strip()]
    assert len(lines) == 2
    assert lines[0].startswith("pip install . && logbook demo")
    assert lines[1].startswith("pip install -e '.[test]' && python -m pytest")
    ci = (DOCS.parent / ".ci" / "run").read_text()
    assert "pip install -q -e '.[test]'" in ci and "python -m pytest" in ci


@pytest.mark.parametrize("name", ["quickstart.md", "format.md", "auditing.md", "agents.md",
                                  "statistics.md", "recording.md", "reporting.md", "audit.md",
                                  "publishing.md", "architecture.md", "web.md", "team.md",
                                  "exports.md"])
def test_docs_exist_and_link(name: str) -> None:
    assert (DOCS / name).is_file(), name


def test_reporting_example_is_what_the_demo_reports(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    env.pop("LOGBOOK_DIR", None)
    env.pop("LOGBOOK_KEY", None)
    r = subprocess.run([sys.executable, "-m", "logbook", "demo", "--dir", str(tmp_path / "d")],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "logbook", "report", "kv-q8-vs-f16"],
                       env={**env, "LOGBOOK_DIR": str(tmp_path / "d")}, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    actual = re.sub(r"\b[0-9a-f]{12,64}\b", "<digest>", r.stdout).rstrip()
    text = (DOCS / "reporting.md").read_text()
    example = re.search(r"```text\n(.*?)\n```", text, flags=re.S)
    assert example is not None
    assert example.group(1).rstrip() == actual, (
        f"docs/reporting.md is stale; the demo reports:\n{actual}")


def test_demo_plan_decision_says_what_its_criteria_test() -> None:
    # issue 33: the demo's decision and its criteria name the same margin (five points)
    import tomllib

    plan = tomllib.loads((DOCS.parent / "logbook" / "examples" / "plan.toml").read_text())
    margin = -plan["success"][0]["value"]
    assert plan["success"][0]["stat"] == "effect_low" and margin == plan["min_effect"] == 0.05
    assert "five points" in plan["decision"] and "five points" in plan["hypothesis"]
    assert plan["failure"][0]["value"] == -margin


def test_quickstart_lists_every_plan_field() -> None:
    # The plan-field table in docs/quickstart.md names exactly the fields schemas/plan.json
    # accepts, so the docs cannot fall behind the model.
    import json

    schema = json.loads((DOCS.parent / "schemas" / "plan.json").read_text())
    text = (DOCS / "quickstart.md").read_text()
    rows = re.findall(r"^\| (`[^|]+`) \| (?:yes|no) \|", text, flags=re.M)
    listed = {name for cell in rows for name in re.findall(r"`(\w+)`", cell)}
    assert listed == set(schema["properties"]), listed ^ set(schema["properties"])
    required = {name for cell in re.findall(r"^\| (`[^|]+`) \| yes \|", text, flags=re.M)
                for name in re.findall(r"`(\w+)`", cell)}
    assert required == set(schema["required"])


def test_every_environment_variable_is_documented_and_every_documented_one_exists() -> None:
    import re

    from logbook.config import VARIABLES

    text = " ".join(p.read_text() for p in [*DOCS.glob("*.md"), DOCS.parent / "README.md"])
    named = set(re.findall(r"LOGBOOK_[A-Z_]*[A-Z]", text))
    assert named == set(VARIABLES), (sorted(named - set(VARIABLES)),
                                     sorted(set(VARIABLES) - named))
