"""What a command of `logbook run` wrote: its harness's output files, told apart from those that
were there before it started (docs/recording.md, "`logbook run`").

A folder is snapshotted before the command runs (each output file's mtime, size and inode, the
files being those its adapter names); afterwards only files created or changed since, and
modified after the command started, are read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from logbook.errors import LogbookError


class Harness(Protocol):
    """What `logbook run` needs of a harness's adapter (logbook.ingest.adapter.Adapter is
    one): its name, its output files in a folder, and the runs of one output."""

    @property
    def name(self) -> str: ...

    def outputs(self, folder: Path) -> set[Path]: ...

    def read_runs(self, path: Path, *, metric: str | None = None,
                  cut_off_ok: bool = False) -> list[dict[str, Any]]: ...


Snapshot = dict[Path, tuple[int, int, int]]

# a file system stamps times at its clock's granularity (a few ms), which may trail ours
_CLOCK_SLACK_NS = 20_000_000


def snapshot(harness: Harness, path: str) -> Snapshot:
    """(mtime_ns, size, inode) of every output file there before the command runs."""
    target = Path(path)
    files = harness.outputs(target) if target.is_dir() else {target}
    out: Snapshot = {}
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        out[f] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def written(before: Snapshot, f: Path, since: int | None = None) -> bool:
    """Created or changed since the snapshot, and (given ``since``) modified after it."""
    try:
        st = f.stat()
    except OSError:
        return False
    if since is not None and st.st_mtime_ns < since - _CLOCK_SLACK_NS:
        return False
    return before.get(f) != (st.st_mtime_ns, st.st_size, st.st_ino)


def read_outcomes(harness: Harness, path: str, before: Snapshot, metric: str | None = None,
                  cut_off_ok: bool = False,
                  since: int | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """The runs this command wrote, or why none could be read: only files it created or
    changed, modified after it started (``since``, ns), count. With cut_off_ok, a JSON Lines
    file whose last line was cut off mid-write keeps its whole lines."""
    target = Path(path)
    if target.is_dir():
        files = sorted(f for f in harness.outputs(target)
                       if f.is_file() and written(before, f, since))
        if not files:
            return [], (f"outcomes not read: {path} holds no {harness.name} output written by "
                        "this run")
    elif target.is_file() and not written(before, target, since):
        return [], (f"outcomes not read: {path} was not written by this run (it was there, "
                    "unchanged, before the command started)")
    else:
        files = [target]
    bodies: list[dict[str, Any]] = []
    try:
        for f in files:
            bodies.extend(harness.read_runs(f, metric=metric, cut_off_ok=cut_off_ok))
    except LogbookError as exc:
        return [], f"outcomes not read: {exc}"
    return bodies, None
