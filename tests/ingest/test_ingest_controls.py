"""The typed harness controls the adapters read from real harness outputs (issue 36 item 6):
lm-eval's batch size as `execution.batch_size`; Inspect's `max_connections` and `max_retries`
as `execution.concurrency` and `retries.cap`, appended through `logbook append --from`."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _apparatus(seq: int) -> dict[str, object]:
    shown = run_cli("show", f"@{seq}", "--json")
    assert shown.code == 0, shown.err
    return dict(shown.json["entry"]["body"]["apparatus"])


def test_lm_eval_batch_size_is_the_typed_execution_field(ledger_dir: Path) -> None:
    results = next((FIXTURES / "lm_eval/run-seed1").rglob("results_*.json"))
    said = json.loads(results.read_text())["config"]["batch_size"]
    r = run_cli("append", "--from", "lm-eval", str(FIXTURES / "lm_eval/run-seed1"), "--json")
    assert r.code == 0, r.err
    app = _apparatus(1)
    assert said == 1 and app["execution"] == {"batch_size": 1}
    assert app["harness_config"]["batch_size"] == 1  # as lm-eval wrote it, kept beside


def test_inspect_connections_and_retries_are_typed_fields(ledger_dir: Path,
                                                          tmp_path: Path) -> None:
    """The fixtures' generate config sets neither (no typed field is made up); the same log
    run with `--max-connections 8 --max-retries 5` records both."""
    folder = FIXTURES / "inspect/run-failed"
    log = json.loads(next(folder.glob("*.json")).read_text())
    assert log["eval"]["model_generate_config"] == {}
    r = run_cli("append", "--from", "inspect", str(next(folder.glob("*.json"))), "--json")
    assert r.code == 0, r.err
    app = _apparatus(1)
    assert "execution" not in app and "retries" not in app
    log["eval"]["model_generate_config"] = {"max_connections": 8, "max_retries": 5}
    log["eval"]["eval_id"] = log["eval"]["eval_id"] + "x"  # another run of the harness
    log["eval"]["run_id"] = log["eval"]["run_id"] + "x"
    copy = tmp_path / "controls.json"
    copy.write_text(json.dumps(log))
    r = run_cli("append", "--from", "inspect", str(copy), "--json")
    assert r.code == 0, r.err
    app = _apparatus(2)
    assert app["execution"] == {"concurrency": 8} and app["retries"] == {"cap": 5}
