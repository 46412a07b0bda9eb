"""Checking many signatures at once, on every core (issue 22).

A large ledger's signatures (all but genesis and key entries, whose keys decide who may sign
what follows, and which are checked in order) are collected while the chain is read and
checked in a pool of worker processes, a chunk at a time as the chain is read, when there are
enough of them to pay for the pool (PARALLEL_MIN) and the machine has more than one core (the
reader then makes no batch and checks them one by one as they come). Each signature is
checked by logbook.crypto.public.verify_signature (libsodium), so the answers are the ones the
in-order check would give.
"""

from __future__ import annotations

import os
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

from logbook.crypto.public import verify_signature

PARALLEL_MIN = 20_000  # below this, a pool costs more than it saves (about 60 us a signature)
CHUNK = 4096  # signatures handed to a worker at a time (about a quarter of a second's work)
_IN_FLIGHT = 2  # chunks a worker may have waiting before the reader waits for answers


def _check(items: list[tuple[bytes, bytes, bytes]]) -> list[bool]:
    return [verify_signature(key, sig, message) for key, sig, message in items]


def workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def worth_a_pool(signatures: int) -> bool:
    return signatures >= PARALLEL_MIN and workers() > 1


class SignatureBatch:
    """Signatures checked in a pool of worker processes while the chain is still being read:
    every CHUNK of them is handed to the pool as it fills, so the workers verify while this
    process reads and hashes the entries that follow, and no more than a few chunks wait at a
    time (memory stays flat with the ledger's size). `failures` hands over the last chunk and
    collects the answers; `close` stops the pool (`failures` does so itself)."""

    def __init__(self) -> None:
        self._where: list[tuple[int, str]] = []
        self._items: list[tuple[bytes, bytes, bytes]] = []
        self._pending: deque[tuple[list[tuple[int, str]], Future[list[bool]]]] = deque()
        self._failed: list[tuple[int, str]] = []
        self._pool: ProcessPoolExecutor | None = None
        self._workers = workers()

    def add(self, position: int, digest: str, key: bytes, signature: bytes,
            message: bytes) -> None:
        self._where.append((position, digest))
        self._items.append((key, signature, message))
        if len(self._items) >= CHUNK:
            self._hand_over()

    def _hand_over(self) -> None:
        if not self._items:
            return
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # fork: the workers start at once with the code already loaded (they touch no
            # file and no connection; they only check the signatures they are sent)
            self._pool = ProcessPoolExecutor(max_workers=self._workers,
                                             mp_context=multiprocessing.get_context("fork"))
        self._pending.append((self._where, self._pool.submit(_check, self._items)))
        self._where, self._items = [], []
        while len(self._pending) > _IN_FLIGHT * self._workers:
            self._collect()

    def _collect(self) -> None:
        where, future = self._pending.popleft()
        self._failed += [w for w, good in zip(where, future.result(), strict=True) if not good]

    def failures(self) -> list[tuple[int, str]]:
        """(position, digest) of every entry whose signature does not verify, in order."""
        try:
            self._hand_over()
            while self._pending:
                self._collect()
        finally:
            self.close()
        return sorted(self._failed)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._pending.clear()
