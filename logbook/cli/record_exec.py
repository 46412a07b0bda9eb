"""Running the command of `logbook run`: its output streamed through and kept, signals passed
on and remembered, so that however it ends its run is recorded."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
from typing import IO, Any


class Tee(threading.Thread):
    """Copy a child's stream to ours as it comes, keeping a copy for the log blob."""

    def __init__(self, src: IO[bytes], dst: IO[bytes], sink: list[bytes]) -> None:
        super().__init__(daemon=True)
        self.src, self.dst, self.sink = src, dst, sink

    def run(self) -> None:
        for chunk in iter(lambda: self.src.read1(65536), b""):  # type: ignore[attr-defined]
            self.sink.append(chunk)
            try:
                self.dst.write(chunk)
                self.dst.flush()
            except (OSError, ValueError):
                pass


class Signals:
    """While a run is recorded: SIGINT and SIGTERM (Ctrl-C, `timeout`, Slurm, `docker stop`)
    are passed to the command and remembered, so the run is appended as aborted, not lost."""

    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.received: int | None = None
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> Signals:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._saved[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.received is None:
            self.received = signum
        if self.child is not None and self.child.poll() is None:
            with contextlib.suppress(OSError):
                self.child.send_signal(signum)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)


def execute(command: list[str], out: list[bytes],
             signals: Signals) -> tuple[str, str | None, int]:
    """Run the command, streaming its output; (status, reason, exit code to pass on)."""
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        return "failed", f"could not start {command[0]!r}: {exc.strerror}", 127
    signals.child = child
    if signals.received is not None:  # a signal arrived while the command was starting
        child.send_signal(signals.received)
    tees = [Tee(child.stdout, sys.stdout.buffer, out),  # type: ignore[arg-type]
            Tee(child.stderr, sys.stderr.buffer, out)]  # type: ignore[arg-type]
    for t in tees:
        t.start()
    rc = child.wait()
    for t in tees:
        t.join(timeout=5)
    if signals.received is not None:
        name = signal.Signals(signals.received).name
        how = "interrupted by Ctrl-C (SIGINT)" if name == "SIGINT" else f"stopped by {name}"
        return "aborted", f"logbook run was {how}; the command was passed the signal", \
            128 + signals.received
    if rc < 0:
        name = signal.Signals(-rc).name
        return "aborted", f"the command was killed by {name}", 128 - rc
    if rc != 0:
        return "failed", f"the command exited with status {rc}", rc
    return "completed", None, 0
