"""`logbook demo`: a small ledger from the built-in example, built with the public commands."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import orjson
import typer

from logbook import config
from logbook.cli import state
from logbook.errors import CheckFailed, LogbookError


def _run_draft(arm: str, seed: int, session: str, fail: bool = False) -> dict[str, object]:
    """A synthetic run of the example plan: 200 items, about 2 in 200 requests failed."""
    rng = random.Random(seed)
    p = 0.74 if arm == "f16" else 0.73
    ids = [f"q{i:03d}" for i in range(200)]
    item_p = [min(0.98, max(0.02, p + (hash_item(i) - 0.5) * 0.8)) for i in range(200)]
    score: list[float | None] = []
    error: list[str | None] = []
    for i in range(200):
        if rng.random() < 0.005:
            score.append(None)
            error.append("HTTP 503 from the engine after 3 retries")
        else:
            score.append(1.0 if rng.random() < item_p[i] else 0.0)
            error.append(None)
    apparatus = {
        "model": "demo-7b-instruct", "engine": "llama.cpp", "engine_build": "b1234",
        "weights_precision": "q4_k_m", "kv_cache_precision": arm,
        "decoding": {"temperature": 0.0, "seed": seed, "max_tokens": 64},
        "hardware": {"gpu": "3xA10"}, "harness": {"name": "demo", "version": "1"},
    }
    body: dict[str, object] = {"plan": "kv-q8-vs-f16", "arm": arm, "session": session,
                               "apparatus": apparatus}
    if fail:
        body.update(status="failed", reason="engine crashed at item 57 (CUDA OOM)")
    else:
        body.update(status="completed",
                    outcomes={"metric": "acc", "id": ids, "score": score, "error": error})
    return {"kind": "run", "body": body}


def hash_item(i: int) -> float:
    return ((i * 2654435761) % 1000) / 1000


def demo(
    keep: Path = typer.Option(None, "--dir", help="Build the demo ledger here instead of a "
                              "temporary folder."),
) -> None:
    """Build a small ledger from a built-in example (a plan, two arms, runs, one failed),
    then verify it, report on it and audit it."""
    if keep is not None:
        _make_folder(keep)
    folder = Path(tempfile.mkdtemp(prefix="logbook-demo-")) if keep is None else keep
    run = state.options().run
    assert run is not None, "the demo runs inside the command line"
    # the demo signs with its own key in its own folder, never the user's default key
    with config.overridden(LOGBOOK_KEY=str(folder / "demo.key"), LOGBOOK_DIR=str(folder)):
        _steps(folder, run)


def _make_folder(folder: Path) -> None:
    """``--dir``: an existing folder, or one created; one sentence (exit 2) for a path that is
    a file, a FIFO or lies under one, exit 3 for a folder the system refuses to create."""
    import errno

    from logbook.errors import EnvironmentProblem, InputError

    if folder.exists() or folder.is_symlink():
        if not folder.is_dir():
            raise InputError(f"--dir {folder} is not a folder")
        return
    for parent in folder.parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise InputError(f"--dir {folder} cannot be created: {parent} is not a folder")
            break
    try:
        # 0755 or tighter whatever the umask: the demo's key is kept here, and a key folder
        # others can write is never used to sign
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    except OSError as exc:
        environment = exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC,
                                    errno.EDQUOT, errno.EIO)
        cls = EnvironmentProblem if environment else InputError
        raise cls(f"--dir {folder} cannot be created ({exc.strerror})") from None


def _steps(folder: Path, run: Callable[[list[str]], int]) -> None:
    plan_file = folder / "plan.toml"
    plan_file.write_text(resources.files("logbook.examples").joinpath("plan.toml").read_text())
    # the plan first, anchored by a checkpoint: anyone can later see it came before the runs
    steps: list[list[str]] = [["init", str(folder), "--name", "demo"], ["plan", str(plan_file)],
                              ["checkpoint", "--out", str(folder / "plan.checkpoint")]]
    order = [("f16", 1), ("q8", 11), ("f16", 2), ("q8", 12), ("q8", 99), ("f16", 3), ("q8", 13)]
    for n, (arm, seed) in enumerate(order):
        draft = _run_draft(arm, seed, "demo-session-1", fail=seed == 99)
        path = folder / f"run-{n}.json"
        path.write_bytes(orjson.dumps(draft))
        steps.append(["append", str(path)])
    steps += [["note", "q8 run with seed 99 crashed; rerun with seed 13 as planned"],
              ["log"], ["verify", "--checkpoint", str(folder / "plan.checkpoint")],
              ["report", "kv-q8-vs-f16"], ["audit"]]
    print(f"# demo ledger in {folder}")
    for args in steps:
        print(f"$ logbook {' '.join(args)}", flush=True)
        code = run(args)
        if code != 0:
            if code == 1:
                raise CheckFailed(f"demo step `logbook {' '.join(args)}` found a problem")
            raise LogbookError(f"demo step `logbook {' '.join(args)}` failed (exit {code})")
    print(f"# done: the ledger is in {folder}/.logbook/ledger.db")


def register(app: typer.Typer) -> None:
    app.command()(demo)
