"""Progress bars: drawn on stderr when it is a terminal (a real pseudo-terminal here, from the
`pty` module) over a large ledger; never in a pipe, never over a small ledger; stdout keeps
only the data."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli

LAUNCH = "import sys\nfrom logbook.cli.main import run\nsys.exit(run())\n"
NOTES = 1200  # over logbook.cli.progress.LARGE


@pytest.fixture
def big(ledger_dir: Path, tmp_path: Path) -> Path:
    """A plan with two runs, and enough notes beside them to be a large ledger."""
    assert run_cli("plan", str(write_json(tmp_path / "p.json", plan_body()))).code == 0
    drafts = [draft("run", run_body("kv-q8-vs-f16", arm, seed=s))
              for s, arm in enumerate(("f16", "q8"))]
    drafts += [draft("note", {"text": f"note {i}", "refs": []}) for i in range(NOTES)]
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "all.jsonl", drafts)))
    assert r.code == 0, r.err
    return ledger_dir


def _env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["LOGBOOK_DIR"] = str(folder)
    return env


def _on_a_terminal(folder: Path, out: Path, *args: str) -> tuple[int, str]:
    """Run `logbook ARGS` with stderr on a pseudo-terminal, stdout into ``out``: (exit code,
    everything the terminal got)."""
    master, slave = pty.openpty()
    with out.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCH, *args], stdin=subprocess.PIPE,
                                stdout=sink, stderr=slave, env=_env(folder), cwd=folder)
    os.close(slave)
    assert proc.stdin is not None
    proc.stdin.close()
    seen = bytearray()
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return proc.wait(timeout=120), seen.decode("utf-8", "replace")


def _in_a_pipe(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LAUNCH, *args], capture_output=True,
                          text=True, env=_env(folder), cwd=folder, timeout=120)


def test_export_draws_a_bar_on_a_terminal_and_none_in_a_pipe(big: Path, tmp_path: Path) -> None:
    total = len(run_cli("log", "--json").json)
    dest = tmp_path / "export.jsonl"
    code, tty = _on_a_terminal(big, tmp_path / "stdout.txt", "export", "--out", str(dest))
    assert code == 0, tty
    assert "\rexporting entries [" in tty and f"100% {total}/{total}" in tty
    # the bar's line is cleared before the confirmation, which ends the output alone
    assert tty.replace("\r\n", "\n").rstrip("\n").endswith(f"\rexported {total} entries to "
                                                           f"{dest}")
    assert (tmp_path / "stdout.txt").read_bytes() == b""
    assert len(dest.read_bytes().splitlines()) == total

    piped = _in_a_pipe(big, "export", "--out", str(tmp_path / "again.jsonl"))
    assert piped.returncode == 0
    assert piped.stderr == f"exported {total} entries to {tmp_path / 'again.jsonl'}\n"

    # to stdout: the bar on the terminal, the entries alone on stdout
    code, tty = _on_a_terminal(big, tmp_path / "lines.jsonl", "export")
    assert code == 0 and "\rexporting entries [" in tty
    lines = (tmp_path / "lines.jsonl").read_bytes().splitlines()
    assert len(lines) == total and all(orjson.loads(ln)["entry"] for ln in lines)


def test_report_draws_a_bar_on_a_terminal_only(big: Path, tmp_path: Path) -> None:
    code, tty = _on_a_terminal(big, tmp_path / "report.txt", "report", "kv-q8-vs-f16")
    assert code == 0, tty
    assert "\rreport kv-q8-vs-f16 [" in tty and "100% 3/3" in tty
    assert "Verdict:" in (tmp_path / "report.txt").read_text()
    piped = _in_a_pipe(big, "report", "kv-q8-vs-f16")
    assert piped.returncode == 0 and piped.stderr == "" and "\r" not in piped.stdout
    assert piped.stdout == (tmp_path / "report.txt").read_text()


def test_verify_and_the_analysis_check_draw_a_bar_on_a_terminal(big: Path, tmp_path: Path) -> None:
    total = len(run_cli("log", "--json").json)
    code, tty = _on_a_terminal(big, tmp_path / "verify.txt", "verify")
    assert code == 0, tty
    assert "\rverifying [" in tty and f"100% {total}/{total}" in tty
    assert "logbook verify: OK ledger=" in (tmp_path / "verify.txt").read_text()
    assert f"verified {total} entries" in (tmp_path / "verify.txt").read_text()
    code, tty = _on_a_terminal(big, tmp_path / "audit.txt", "audit")
    assert "\rchecking the ledger [" in tty and f"100% {total}/{total}" in tty, tty
    piped = _in_a_pipe(big, "verify")
    assert piped.returncode == 0 and "\r" not in piped.stderr + piped.stdout


def test_publish_mirror_and_a_published_verify_draw_a_bar(big: Path, tmp_path: Path) -> None:
    total = len(run_cli("log", "--json").json)
    site, copy = tmp_path / "site", tmp_path / "copy"
    code, tty = _on_a_terminal(big, tmp_path / "p.txt", "publish", str(site))
    assert code == 0, tty
    assert "\rpublishing [" in tty and f"100% {total}/{total}" in tty
    code, tty = _on_a_terminal(big, tmp_path / "m.txt", "mirror", str(site), str(copy))
    assert code == 0, tty
    assert "\rmirroring [" in tty and f"100% {total}/{total}" in tty
    assert f"mirrored {total} entries" in (tmp_path / "m.txt").read_text()
    code, tty = _on_a_terminal(big, tmp_path / "v.txt", "verify", str(site))
    assert code == 0 and "\rverifying [" in tty, tty
    piped = _in_a_pipe(big, "mirror", str(site), str(copy))
    assert piped.returncode == 0 and "\r" not in piped.stderr + piped.stdout


def test_clone_draws_a_bar_on_a_terminal(big: Path, tmp_path: Path) -> None:
    total = len(run_cli("log", "--json").json)
    code, tty = _on_a_terminal(big, tmp_path / "c.txt", "clone", str(big),
                               str(tmp_path / "copy.db"))
    assert code == 0, tty
    assert "\rcloning [" in tty and f"100% {2 * total}/{2 * total}" in tty  # both checks
    assert f"copied {total} entries" in (tmp_path / "c.txt").read_text()


def test_a_small_ledger_gets_no_bar(ledger_dir: Path, tmp_path: Path) -> None:
    assert run_cli("note", "one").code == 0
    code, tty = _on_a_terminal(ledger_dir, tmp_path / "out.txt", "export", "--out",
                               str(tmp_path / "e.jsonl"))
    assert code == 0 and "[" not in tty and tty.strip() == \
        f"exported 2 entries to {tmp_path / 'e.jsonl'}"


def test_the_callback_a_library_takes() -> None:
    """What verify, publish, mirror and clone are to take: ``on_progress(done, total)``."""
    from logbook.cli.progress import progress, quiet

    shown = io.StringIO()
    with progress("checking", stream=shown, force=True) as on_progress:
        for i in range(1, 11):
            on_progress(i, 10)
    text = shown.getvalue()
    assert text.startswith("\rchecking [") and "100% 10/10" in text
    assert text.endswith("\r") and text.rsplit("\r", 2)[-2].strip() == ""  # cleared
    with progress("checking", stream=io.StringIO()) as on_progress:
        assert on_progress is quiet  # not a terminal, not forced: nothing is drawn
