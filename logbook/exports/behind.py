"""Writing behind reading: an export's output is written on a thread of its own while the next
runs are read and laid out, in the order given and at most a few blocks behind (memory stays
bounded). Writing a block (a system call, or pyarrow encoding and compressing a row group) lets
the interpreter go on with the next one meanwhile, so on a machine with two cores the write's
time mostly hides behind the reading's. What the writing raises is raised again in the caller,
as it is (a full disk is still exit 3, an unwritable path exit 2)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_DONE = object()


class _Behind:
    def __init__(self, write: Callable[[Any], object], depth: int) -> None:
        self._write = write
        self._queue: queue.Queue[Any] = queue.Queue()
        self._room = threading.Semaphore(depth)  # blocks queued or being written, at most
        self._failed: BaseException | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="logbook-export-writer",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            block = self._queue.get()
            if block is _DONE:
                return
            if self._failed is None and not self._stopped:  # else let go unwritten
                try:
                    self._write(block)
                except BaseException as exc:  # raised again in the caller
                    self._failed = exc
            block = None  # not kept while the next is awaited
            self._room.release()

    def put(self, block: Any) -> None:
        """Queue ``block`` to be written (waiting while ``depth`` blocks are queued or being
        written)."""
        self._room.acquire()
        self._raise()
        self._queue.put(block)

    def finish(self) -> None:
        """Wait until every queued block is written; raise what writing one raised."""
        self._queue.put(_DONE)
        self._thread.join()
        self._raise()

    def stop(self) -> None:
        """Let what is queued go unwritten and wait for the thread to end."""
        self._stopped = True
        self._queue.put(_DONE)
        self._thread.join()

    def _raise(self) -> None:
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed


@contextmanager
def writing_behind(write: Callable[[Any], object], depth: int = 2) -> Iterator[_Behind]:
    """A writer whose ``put(block)`` has ``write(block)`` called on a thread of its own, in
    order; every block is written when the ``with`` block ends (or, when the block raises,
    the thread is stopped and what was queued is let go)."""
    behind = _Behind(write, depth)
    try:
        yield behind
    except BaseException:
        behind.stop()
        raise
    behind.finish()
