"""docs/web.md matches the code: its pages are the app's routes, its filters are the ones the
runs table reads and refuses, its example URLs answer 200 on the demo ledger."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import served
from served import get

planted, server = served.planted, served.server  # the module's fixtures

DOC = (Path(__file__).resolve().parents[2] / "docs" / "web.md").read_text()


def _section(title: str) -> str:
    return DOC.split(title, 1)[1].split("\n#", 1)[0]


def _documented_pages() -> set[str]:
    paths = set()
    for line in _section("## Pages").splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if cells and cells[0].startswith("`/"):
            paths |= {c.strip("`") for c in cells[:2] if c.startswith("`/")}
    return {re.sub(r"\bID\b", "{item:path}", re.sub(r"\b(PLAN|RUN|REF)\b", "{ref}", p))
            for p in paths}


def test_the_documented_pages_are_the_routes(tmp_path: Path) -> None:
    from logbook.web.app import make_app

    routes = {r.path for r in make_app(tmp_path / "ledger.db").routes}  # type: ignore[attr-defined]
    assert _documented_pages() == routes


def test_the_documented_filters_are_the_ones_read(server: str) -> None:
    rows = [line.split("|")[1] for line in _section("### Filters").splitlines()
            if line.startswith("| `")]
    names = {n.strip("` ") for row in rows for n in row.split(",")}
    assert names == {"plan", "arm", "session", "status", "retracted", "since", "until", "where",
                     "sort", "page", "per"}
    for name in names:  # each is read: a value it cannot take is refused, naming it
        status, d, _ = get(f"{server}/runs.json?{name}=%00bad")
        if name in ("arm", "session"):  # free text: no run has it
            assert status == 200 and d["runs"] == []
        else:
            assert status == 400, name
            assert name in d["error"].split(" ")[0] or d["error"].startswith("PLAN"), d


def test_the_example_urls_answer(server: str, planted: dict[str, Any]) -> None:
    blocks = re.findall(r"```urls\n(.*?)```", DOC, flags=re.S)
    assert len(blocks) == 2  # the runs table's and the comparison's
    urls = [u for block in blocks for u in block.split()]
    for url in urls:
        status, d, _ = get(server + url)
        assert status == 200, (url, d)
        if isinstance(d, dict) and "runs" in d:
            assert d["runs"], url
        if isinstance(d, dict) and "comparison" in d:
            assert d["comparison"]["counts"]["compared"] > 0, url


def test_the_setup_block_runs(tmp_path: Path) -> None:
    """The doc's sh block, line by line (the install line is the extra's, not rerun); the
    serve line with `--port 0` added, as 8000 may be taken on a test machine."""
    import shlex
    import signal
    import subprocess
    import sys
    import time

    from served import serve_command

    block = re.search(r"```sh\n(.*?)```", DOC, flags=re.S)
    assert block is not None
    lines = [ln.split("#", 1)[0].strip() for ln in block.group(1).splitlines()]
    install, demo, serve = [ln for ln in lines if ln]
    assert install.startswith("pip install 'logbook[web]'")
    r = subprocess.run([sys.executable, "-m", "logbook", *shlex.split(demo)[1:]],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    err = tmp_path / "serve.err"
    with err.open("w") as fh:
        proc = subprocess.Popen(serve_command(*shlex.split(serve)[1:], "--port", "0"),
                                cwd=tmp_path, stderr=fh)
    try:
        deadline, url = time.monotonic() + 30, None
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            found = re.search(r"http://127\.0\.0\.1:\d+/", err.read_text())
            url = found.group(0) if found else None
            time.sleep(0.1)
        assert url is not None, err.read_text()
        assert "serving ledger demo read-only at" in err.read_text()
        status, page, _ = get(url)
        assert status == 200 and "Ledger demo" in page
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=15)
    assert proc.returncode == 0, err.read_text()
