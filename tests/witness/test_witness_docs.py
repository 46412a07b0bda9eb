"""docs/auditing.md §11's example runs as a user would run it, in bash: a witness started in
the background, a witnessed checkpoint, `verify --quorum`, the witness stopped. The one change
made to the text is the port: a free one instead of 8931, as other tests run at once."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from running import ok

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_witness_example_runs(ledger_dir: Path) -> None:
    text = (DOCS / "auditing.md").read_text()
    section = text[text.index("## 11. Witnesses"):]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1 and "8931" in blocks[0]
    ok("note", "something worth witnessing")
    script = blocks[0].replace("8931", str(_free_port()))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ledger_dir, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "cosigned by at least 1 of the given witnesses" in r.stdout
    assert "stopped" in (ledger_dir / "witness" / "w1.log").read_text()
    note = (ledger_dir / "cosigned.checkpoint").read_text()
    assert "\n\u2014 w1.example " in note


def test_the_witness_commands_have_help() -> None:
    for command in (["witness", "serve"], ["witness", "key"]):
        r = ok(*command, "--help")
        assert len(r.out) > 200 and "--key" in r.out
