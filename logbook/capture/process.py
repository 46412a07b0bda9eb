"""Running the command of `logbook run`: its signals, its output streamed through, and what it
leaves behind.

The command's stdout and stderr are passed on as they come (a line ends at ``\\n`` or ``\\r``,
so progress bars move) and reach the terminal unchanged; a copy is kept for the run's log blob,
up to ``logbook.files.max_input_bytes()`` (the rest is counted, not kept), which the one
redaction policy scrubs when it is kept (logbook.capture.blobs). ``run_command`` runs it between
a snapshot of its harness's output and the reading of what it wrote (logbook.capture.outputs).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, Any

from logbook.capture.outputs import Harness, read_outcomes, snapshot

# the harness's own error in a command's output: an exception line, lm-eval's task lookup
# (two streams interleave: the exception's name may follow other output on its line)
_ERROR_LINE = re.compile(r"(?:(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b:?.*"
                         r"|Tasks not found:.*)")


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
        if self.child is not None and self.child.poll() is None \
                and not (signum == signal.SIGINT and _terminal_reached(self.child)):
            with contextlib.suppress(OSError):
                self.child.send_signal(signum)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)


def _terminal_reached(child: subprocess.Popen[bytes]) -> bool:
    """Whether a SIGINT came from the terminal's Ctrl-C, which the terminal sends to its whole
    foreground process group: the command too, when it shares ours. Passing it on would be a
    second Ctrl-C (Inspect stops finishing its log on the second). So: this process's group is
    the foreground group of the terminal on one of its standard streams, and the command is in
    that group. A `kill -INT` aimed at this process alone while it is in the foreground is then
    not passed on either (SIGTERM always is; `kill -INT -PGID` reaches both)."""
    try:
        group = os.getpgrp()
        if os.getpgid(child.pid) != group:
            return False
    except OSError:
        return False
    for fd in (0, 1, 2):
        try:
            if os.isatty(fd) and os.tcgetpgrp(fd) == group:
                return True
        except OSError:
            continue
    return False


def execute(command: list[str], out: Output, signals: Signals,
            env: Mapping[str, str] | None = None) -> tuple[str, str | None, int]:
    """Run the command (in ``env``, default ours), streaming its output; (status, reason,
    exit code to pass on)."""
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=env)
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


def harness_error(output: bytes) -> str | None:
    """The last error line of a command's output (``ValueError: Tasks not found: x``)."""
    text = output[-65536:].decode("utf-8", "replace")
    for line in reversed(text.splitlines()):
        m = _ERROR_LINE.search(line)
        if m:
            return m.group(0).strip()[:300]
    return None


@dataclass
class CommandRun:
    """What one command left: how it ended (``status``, ``reason``, the exit ``code`` to pass
    on), the run bodies read from what it wrote, when it ran, and its kept output."""

    status: str
    reason: str | None
    code: int
    bodies: list[dict[str, Any]]
    started: str
    finished: str
    output: Output
    seconds: float = 0.0  # the command's wall time, on a monotonic clock


def run_command(command: list[str], harness: Harness, path: str, signals: Signals, *,
                metric: str | None, clock: Callable[[], str],
                env: Mapping[str, str] | None = None) -> CommandRun:
    """Run the command and read the outputs it wrote at ``path`` with its ``harness``'s
    adapter. A run that did not complete says the harness's own error, from what the command
    printed, and keeps the whole lines of an output cut off mid-line; an output that cannot
    be read makes a completed run failed, saying why."""
    from logbook.files import max_input_bytes

    before = snapshot(harness, path)
    started, start_ns, ticks = clock(), time.time_ns(), time.monotonic()
    status, reason, code = execute(command, out := Output(max_input_bytes()), signals, env)
    finished, seconds = clock(), time.monotonic() - ticks
    if status != "completed":
        said = harness_error(out.data())
        reason = f"{reason}: {said}" if said else reason
    bodies, read_error = read_outcomes(harness, path, before, metric,
                                       cut_off_ok=status != "completed", since=start_ns)
    if read_error and status == "completed":
        status, reason = "failed", read_error
    elif read_error:
        reason = f"{reason}; {read_error}"
    return CommandRun(status, reason, code, bodies, started, finished, out, seconds)
