"""The web tests' fixtures: a ledger built with the public commands (`logbook demo`, then a
retraction and entries with planted markup), `logbook serve` on a free port in a subprocess,
and Chromium through Playwright (Debian's chromium, its path set: `playwright install` is never
run). A module the tests take their fixtures from, not a conftest: tests/conftest.py is
imported as `conftest`, and a second conftest.py would shadow it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_cli

SLUG = "kv-q8-vs-f16"
NOTE = "<img src=x onerror=\"document.title='pwned'\"><b id=planted-note>bold</b> & done"
ITEM = "<script id=planted-item>document.title='pwned'</script>"
ERROR = "<i id=planted-error>HTTP 500</i>"
LOG = {"name": "eval.log", "sha256": "sha256:" + "ab" * 32, "size": 2048,
       "excerpt": "item 57: <em id=planted-excerpt>timeout</em>"}
REASON = "<b id=planted-reason>judge prompt</b> had a bug"
CLAIM = "<b id=planted-claim>q8</b> costs <i>nothing</i> & more"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
# the console script's own entry point, in this interpreter
LAUNCH = "import sys\nfrom logbook.cli.main import run\nsys.exit(run())\n"


def get(url: str, method: str = "GET", host: str | None = None) -> tuple[int, Any, dict[str, str]]:
    """(status, the body (JSON parsed when it is JSON), headers) of one request."""
    req = urllib.request.Request(url, method=method)
    if host:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            body, status, headers = resp.read(), resp.status, dict(resp.headers)
    except urllib.error.HTTPError as exc:
        body, status, headers = exc.read(), exc.code, dict(exc.headers)
    is_json = headers.get("content-type", "").startswith("application/json")
    return status, orjson.loads(body) if is_json else body.decode(), headers


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-c", LAUNCH, *args]


def _needs(what: str) -> None:
    """A missing tool fails under CI=true (.ci/run installs it) and skips elsewhere."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} (CI=true: .ci/run installs it)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo ledger plus: a claim whose statement holds markup, a retraction of one q8
    run (which that claim rests on), a claim failed by the audit alone, an exploratory run
    whose note, item id and error hold markup, and a note entry holding markup; with what
    `report`, `log`, `claim check` and `compare --items` print of it."""
    base = tmp_path_factory.mktemp("ledger")
    folder = base / "demo"
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CONFIG_HOME", str(base / "config"))
    mp.chdir(base)
    try:
        r = run_cli("demo", "--dir", str(folder))
        assert r.code == 0, r.err
        mp.setenv("LOGBOOK_KEY", str(folder / "demo.key"))
        mp.setenv("LOGBOOK_DIR", str(folder))
        # a claim made before the retraction rests on the retracted run; one made after does
        # not rest on it, but fails all the same: the audit finds an error about its plan (one
        # q8 run withdrawn while its twins count, A22), and a claim does not stand on that
        r = run_cli("claim", SLUG, "--statement", CLAIM, "--json")
        assert r.code == 0, r.err
        claims = [r.json["digest"]]
        r = run_cli("retract", "@3", "--reason", REASON, "--category", "harness_defect",
                    "--correction", "re-run after the fix")
        assert r.code == 0, r.err
        r = run_cli("claim", SLUG, "--arm", "f16", "--statement", "f16 scores 72", "--json")
        assert r.code == 0, r.err
        claims.append(r.json["digest"])
        run = {"kind": "run", "body": {
            "plan": None, "arm": "probe", "status": "completed", "note": NOTE, "logs": [LOG],
            "apparatus": {"model": "<u>m</u>", "captured": {"model": "<u>m2</u>"}},
            "outcomes": {"metric": "acc", "id": [ITEM, "ok-1"], "score": [None, 1.0],
                         "error": [ERROR, None]}}}
        path = base / "planted.json"
        path.write_bytes(orjson.dumps(run))
        r = run_cli("append", str(path), "--json")
        assert r.code == 0, r.err + r.out
        r = run_cli("note", NOTE)
        assert r.code == 0, r.err
        rep = run_cli("report", SLUG, "--json")
        assert rep.code == 0, rep.err
        log = run_cli("log", "--json")
        assert log.code == 0, log.err
        checks = [run_cli("claim", "check", d, "--json") for d in claims]
        assert [c.code for c in checks] == [1, 1], [c.err for c in checks]
        items = run_cli("compare", f"{SLUG}:q8", "@2", "--items", "--json")
        assert items.code == 0, items.err
    finally:
        mp.undo()
    return {"folder": folder, "report": rep.json, "log": log.json,
            "claims": [c.json for c in checks], "items": items.json}


@contextmanager
def serving(folder: Path, logs: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """`logbook --ledger FOLDER serve --port 0` (its stderr in ``logs``), its URL read from
    its stderr; stopped with Ctrl-C (SIGINT) when the block ends, which must end it normally."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        _needs("starlette and uvicorn are not installed (the test and web extras have them)")
    with logs.open("w") as err:
        proc = subprocess.Popen(serve_command("--ledger", str(folder), "serve", "--port", "0"),
                                stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    url = None
    deadline = time.monotonic() + 30
    while url is None and time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"http://127\.0\.0\.1:\d+/", logs.read_text())
        url = found.group(0) if found else None
        time.sleep(0.1)
    try:
        assert url is not None, f"serve did not start: {logs.read_text()}"
        yield url.rstrip("/")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, logs.read_text()


@pytest.fixture(scope="module")
def server(planted: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server over the module's ledger (`serving`)."""
    with serving(planted["folder"], tmp_path_factory.mktemp("server") / "stderr.txt") as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Chromium context (Debian's chromium, a fresh profile) that refuses any dialog a page
    might open and records it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _needs("playwright is not installed (the test extra has it)")
    exe = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(exe).exists():
        _needs("Debian's chromium is not installed (apt-get install -y chromium)")
    profile = tmp_path_factory.mktemp("profile")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=exe, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1200, "height": 900})
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots of the key pages are kept (pytest keeps the last runs' tmp)."""
    return tmp_path_factory.mktemp("screens")
