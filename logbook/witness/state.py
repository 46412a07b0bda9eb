"""The witness's state file: the latest checkpoint it cosigned, per log origin.

JSON `{"version": 1, "logs": {origin: {"size": n, "root": base64, "note": text}}}`. Every
change is a compare-and-swap under an exclusive `fcntl` lock on `<state>.lock`: the state is
read, the decision made against it, and the new state written to a temporary file, synced,
renamed over the old and the folder synced, all before the lock is released. Two requests,
threads or processes alike, therefore never decide against the same old state, so a witness
cannot cosign two roots of one size, nor roll a log back.
"""

from __future__ import annotations

import base64
import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import orjson

from logbook.errors import EnvironmentProblem, InputError

__all__ = ["Latest", "WitnessState"]

T = TypeVar("T")
_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class Latest:
    """The latest checkpoint cosigned for one log."""

    size: int
    root: bytes
    note: str


class WitnessState:
    """The state file at `path` (created empty on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    def check(self) -> None:
        """EnvironmentProblem unless the state can be read and its folder written."""
        folder = self.path.parent
        if not folder.is_dir():
            raise EnvironmentProblem(f"--state {self.path}: its folder {folder} does not exist")
        if not os.access(folder, os.W_OK):
            raise EnvironmentProblem(f"--state {self.path}: its folder {folder} cannot be "
                                     "written")
        with self._locked():
            self._read()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise EnvironmentProblem(f"the witness lock {self.lock_path} cannot be opened: "
                                     f"{exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _read(self) -> dict[str, Latest]:
        from logbook.reading import read_bytes

        if not self.path.exists():
            return {}
        # bounded: a state file is never read whole past what a witness state may be
        data = read_bytes(self.path, "--state", limit=_LIMIT, kind="a logbook witness state",
                          unreadable=EnvironmentProblem)
        try:
            doc = orjson.loads(data)
            if doc.get("version") != 1:
                raise ValueError("version")
            return {origin: Latest(int(v["size"]), base64.b64decode(v["root"], validate=True),
                                   str(v["note"]))
                    for origin, v in doc["logs"].items()}
        except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError):
            raise InputError(f"--state {self.path} is not a logbook witness state file") \
                from None

    def _write(self, logs: dict[str, Latest]) -> None:
        doc = {"version": 1, "logs": {
            origin: {"size": v.size, "root": base64.b64encode(v.root).decode(), "note": v.note}
            for origin, v in sorted(logs.items())}}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as fh:
                fh.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise EnvironmentProblem(f"--state {self.path} cannot be written: {exc.strerror}") \
                from None

    def latest(self, origin: str) -> Latest | None:
        with self._locked():
            return self._read().get(origin)

    def update(self, origin: str,
               decide: Callable[[Latest | None], tuple[Latest | None, T]]) -> T:
        """Compare and swap: `decide` gets the latest checkpoint held for `origin` (None
        before the first) and returns (the new one to keep, or None to keep the old; its
        answer); the new one is on disk before `update` returns the answer."""
        with self._locked():
            logs = self._read()
            new, answer = decide(logs.get(origin))
            if new is not None:
                logs[origin] = new
                self._write(logs)
            return answer
