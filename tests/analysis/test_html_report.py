"""`logbook report PLAN --html FILE`: one self-contained page, opened in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import draft, plan_body, run_body, write_json, write_jsonl
from conftest import run_cli

SLUG = "kv-q8-vs-f16"
TITLE = "KV cache <script>alert(1)</script> & friends"
RETRACT_REASON = "wrong dataset <img src=x onerror=alert(2)>"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
# a src/href/url() that points off the page: what "self-contained" forbids
EXTERNAL = re.compile(r"""(?:\b(?:src|href)\s*=\s*["']?|url\(\s*["']?|@import\s+["']?)"""
                      r"""(?:https?:|//)""", re.IGNORECASE)


def _build_ledger(tmp_path: Path) -> None:
    """A plan whose q8 arm has a failed run and a retracted run beside 3 completed ones."""
    body = plan_body(SLUG, runs_per_arm=3, n_items=50, title=TITLE)
    assert run_cli("plan", str(write_json(tmp_path / "plan.json", body))).code == 0
    drafts = [draft("run", run_body(SLUG, "f16", seed=s, p=0.72)) for s in (1, 2, 3)]
    drafts += [draft("run", run_body(SLUG, "q8", seed=s, p=0.68, missing=s - 4))
               for s in (4, 5, 6)]
    drafts.append(draft("run", run_body(SLUG, "q8", status="failed")))
    drafts.append(draft("run", run_body(SLUG, "q8", seed=9, p=0.2)))
    r = run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "runs.jsonl", drafts)), "--json")
    assert r.code == 0, r.err
    r = run_cli("retract", r.json[-1]["digest"], "--reason", RETRACT_REASON, "--category",
                "data_error")
    assert r.code == 0, r.err


def _write_report(tmp_path: Path) -> str:
    out = tmp_path / "report.html"
    r = run_cli("report", SLUG, "--html", str(out))
    assert r.code == 0, r.err
    # the file is the output: stdout stays empty, stderr says where it went
    assert r.out == "" and r.err == f"wrote {out}\n"
    return out.read_text(encoding="utf-8")


def _chromium() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists()
                                       else None)
    if exe is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium; "
                    ".ci/run installs it): the HTML report cannot be opened headless")
    return exe


def _start_chromium(exe: str, tmp_path: Path, name: str, *args: str) -> subprocess.Popen[str]:
    """Start one headless Chromium with its own profile (two can run side by side)."""
    profile = tmp_path / f"profile-{name}"
    return subprocess.Popen([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err


def test_html_report_renders_in_chromium(ledger_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the HTML report needs the html extra")
    import matplotlib.image
    import numpy as np

    _build_ledger(tmp_path)
    page = _write_report(tmp_path)
    html_path = tmp_path / "report.html"

    # self-contained and escaped
    assert "<svg" in page and EXTERNAL.search(page) is None, EXTERNAL.search(page)
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    for shown in ("failed", "retracted", "engine crashed", "Verdict:", "Excluded from the"):
        assert shown in page

    exe = _chromium()
    url = html_path.as_uri()
    shot = tmp_path / "shot.png"
    dumping = _start_chromium(exe, tmp_path, "dom", "--dump-dom", url)
    shooting = _start_chromium(exe, tmp_path, "shot", f"--screenshot={shot}",
                               "--window-size=1200,1600", url)
    code, dom, err = _finish(dumping)
    assert code == 0, err[-2000:]
    assert "<svg" in dom and "<script" not in dom
    # 3 + 3 completed runs and the retracted one carry a marker; the failed run has no score
    markers = re.findall(r'id="lb-run-(\d+)(-retracted)?"', dom)
    assert len(markers) == 7, markers
    assert sum(1 for _, r in markers if r) == 1
    assert len(re.findall(r'id="lb-nonscore-\d+"', dom)) == 1
    assert 'id="lb-effect-0"' in dom and 'id="lb-min-effect-band"' in dom
    assert len(re.findall(r'id="lb-arm-\d-run-level"', dom)) == 2

    code, _, err = _finish(shooting)
    assert code == 0 and shot.exists(), err[-2000:]
    assert shot.stat().st_size > 10_000
    img = matplotlib.image.imread(shot)
    assert img.shape[:2] == (1600, 1200)
    rgb = (img[..., :3] * 255).astype(np.uint32)
    colours = np.unique(rgb[..., 0] << 16 | rgb[..., 1] << 8 | rgb[..., 2])
    assert len(colours) > 50, "the screenshot is (nearly) a single colour"


def test_html_report_without_runs(ledger_dir: Path, tmp_path: Path) -> None:
    """A plan with no runs yet still gives a page (incomplete verdict, no effect)."""
    pytest.importorskip("matplotlib", reason="the HTML report needs the html extra")
    assert run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(SLUG)))).code == 0
    out = tmp_path / "empty.html"
    r = run_cli("report", SLUG, "--html", str(out))
    assert r.code == 0, r.err
    page = out.read_text(encoding="utf-8")
    assert "<svg" in page and "incomplete" in page and 'id="lb-run-' not in page


def test_html_report_needs_matplotlib(ledger_dir: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_cli("plan", str(write_json(tmp_path / "p.json", plan_body(SLUG)))).code == 0
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out = tmp_path / "r.html"
    r = run_cli("report", SLUG, "--html", str(out))
    assert r.code == 3 and "pip install 'logbook[html]'" in r.err
    assert not out.exists()


def test_html_report_warnings_findings_and_apparatus(ledger_dir: Path, tmp_path: Path) -> None:
    """Suspect warnings and audit findings come before the verdict; all of it is escaped."""
    pytest.importorskip("matplotlib", reason="the HTML report needs the html extra")
    from logbook.analysis.report.html import render_html

    body = plan_body(SLUG, runs_per_arm=1, n_items=40, arms=("f16", "q8", "q4"))
    assert run_cli("plan", str(write_json(tmp_path / "p.json", body))).code == 0
    runs = [draft("run", run_body(SLUG, "f16", n_items=40, seed=1)),
            draft("run", run_body(SLUG, "q8", n_items=40, seed=2))]
    assert run_cli("append", "--jsonl", str(write_jsonl(tmp_path / "r.jsonl", runs))).code == 0
    rep = run_cli("report", SLUG, "--json").json
    assert [e.get("point") is None for e in rep["effects"]] == [False, True]  # q4 has no runs
    rep["verdict"]["suspect"] = ["negative control <b>scored</b> 0.9"]
    rep["findings"] = [{"check": "peeking", "severity": "warn", "message": "<i>late</i> plan"}]
    rep["arms"][0]["differing_apparatus"] = {"engine_build": ["'b1' <x>", "'b2'"]}
    page = render_html(rep)
    assert "<b>scored</b>" not in page and "<i>late</i>" not in page and "<x>" not in page
    assert page.index("WARNING:") < page.index("AUDIT peeking") < page.index("Verdict:")
    assert "engine_build</b> (&#x27;b1&#x27; &lt;x&gt;, &#x27;b2&#x27;)" in page
    assert "exact McNemar" in page and "an arm has no completed runs" in page
    assert 'id="lb-effect-0"' in page and 'id="lb-effect-1-none"' in page
