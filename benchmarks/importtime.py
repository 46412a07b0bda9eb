"""Budget (issue 35): what `logbook append` pays in imports is no more than before the read-model
work began (commit 5139cd0): `python -X importtime` of a cold `logbook append` of a 200-item
run, the imports the command makes summed over its top-level modules, this tree against that
commit's `logbook/` (taken with `git archive` into a temporary folder, each appending into a
ledger of its own), alternating, medians of 15 (ratio <= 1.0).

Prints the ratio and never fails on it. Without the commit in the clone's history (a shallow
clone, a tarball) it says so and measures nothing.

Run: python benchmarks/importtime.py
"""

from __future__ import annotations

import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from _common import report, top_level_imports

BEFORE = "5139cd0"  # the last commit before issue 35's changes
ROOT = Path(__file__).resolve().parent.parent
REPEAT = 15

# the command as `logbook` runs it, from the tree on PYTHONPATH
PROBE = "import sys; from logbook.cli.main import run; raise SystemExit(run(sys.argv[1:]))"


def tree_at(commit: str, dest: Path) -> bool:
    """``logbook/`` as it was at ``commit``, unpacked into ``dest``; False without it."""
    r = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit, "logbook"],
                       capture_output=True)
    if r.returncode != 0:
        return False
    with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return True


def before_tree(tmp: Path, script: str) -> tuple[Path, dict[str, str]] | None:
    """``logbook/`` at BEFORE unpacked under ``tmp``, and the environment a command of either
    tree runs in (no ledger or key of the user's, a config folder of its own); None, said,
    without the commit in this clone's history."""
    before = tmp / "before"
    if not tree_at(BEFORE, before):
        print(f"{script}: commit {BEFORE} is not in this clone's history; not measured",
              flush=True)
        return None
    env = {k: v for k, v in os.environ.items() if k not in ("LOGBOOK_DIR", "LOGBOOK_KEY")}
    env["XDG_CONFIG_HOME"] = str(tmp / "cfg")
    return before, env


def imports_of(tree: Path, ledger: Path, draft: Path, env: dict[str, str]) -> float:
    """Microseconds the command's own imports took in one cold append from ``tree``."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", PROBE, "append", str(draft)],
                       env={**env, "PYTHONPATH": str(tree)}, cwd=ledger, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit(f"benchmark step failed: logbook append from {tree}\n{r.stderr[-2000:]}")
    return sum(top_level_imports(r.stderr).values())


def draft_of(n: int) -> dict[str, object]:
    ids = [f"item-{i:04d}" for i in range(n)]
    return {"kind": "run", "body": {
        "plan": None, "status": "completed",
        "apparatus": {"model": "m-7b", "engine": "vllm", "decoding": {"temperature": 0.0}},
        "outcomes": {"metric": "acc", "id": ids, "score": [float(i % 3 == 0) for i in range(n)],
                     "error": [None] * n}}}


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-importtime-"))
    try:
        found = before_tree(tmp, "importtime")
        if found is None:
            return
        before, env = found
        draft = tmp / "run.json"
        draft.write_bytes(orjson.dumps(draft_of(200)))
        trees = {"now": ROOT, "before": before}
        ledgers = {}
        for name, tree in trees.items():
            ledgers[name] = tmp / f"ledger-{name}"
            ledgers[name].mkdir()
            r = subprocess.run([sys.executable, "-c", PROBE, "init", str(ledgers[name]),
                                "--name", f"bench-{name}"], env={**env, "PYTHONPATH": str(tree)},
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"benchmark step failed: logbook init ({name})\n{r.stderr}")
        times: dict[str, list[float]] = {"now": [], "before": []}
        for name in trees:  # one untimed append each: the trees' bytecode is written
            imports_of(trees[name], ledgers[name], draft, env)
        for _ in range(REPEAT):
            for name, tree in trees.items():
                times[name].append(imports_of(tree, ledgers[name], draft, env))
        now, then = statistics.median(times["now"]), statistics.median(times["before"])
        report("append imports (-X importtime) vs before issue 35", now / then, "<= 1.0",
               f"now {now / 1000:.1f} ms, at {BEFORE} {then / 1000:.1f} ms of imports in a cold "
               f"`logbook append` of 200 items (medians of {REPEAT}, alternating)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
