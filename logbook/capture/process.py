"""Running the command of `logbook run`: its signals, and its output streamed through.

The command's stdout and stderr are passed on line by line (a line ends at ``\\n`` or ``\\r``, so
progress bars move) with the one redaction policy applied, so a secret taken out of its command
line is not printed back by it either; a copy, scrubbed the same way, is kept for the run's log
blob, up to ``logbook.files.max_input_bytes()`` (the rest is counted, not kept).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
from typing import IO, Any


class Output:
    """What the command printed, as kept for its log blob: bounded."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.kept = 0
        self.dropped = 0
        self.lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self.lock:
            room = self.limit - self.kept
            if room > 0:
                self.chunks.append(data[:room])
                self.kept += min(room, len(data))
            self.dropped += max(0, len(data) - max(room, 0))

    def data(self) -> bytes:
        tail = (f"\n[logbook: {self.dropped} more bytes of output were not kept]\n".encode()
                if self.dropped else b"")
        return b"".join(self.chunks) + tail


class Tee(threading.Thread):
    """Copy a child's stream to ours as it comes, keeping a bounded copy."""

    def __init__(self, src: IO[bytes], dst: IO[bytes], sink: Output) -> None:
        super().__init__(daemon=True)
        self.src, self.dst, self.sink = src, dst, sink

    def run(self) -> None:
        for chunk in iter(lambda: self.src.read1(65536), b""):  # type: ignore[attr-defined]
            self.sink.add(chunk)
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


def execute(command: list[str], out: Output,
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
