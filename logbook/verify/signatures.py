"""Checking many signatures at once, on every core (issue 22).

A large ledger's signatures (all but genesis and key entries, whose keys decide who may sign
what follows, and which are checked in order) are collected while the chain is read and
checked together: in a pool of worker processes, a chunk each, when there are enough of them
to pay for the pool (PARALLEL_MIN) and the machine has more than one core; one by one in this
process otherwise. Each signature is checked by logbook.crypto.public.verify_signature
(libsodium), so the answers are the ones the in-order check would give.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from logbook.crypto.public import verify_signature

PARALLEL_MIN = 20_000  # below this, a pool costs more than it saves (about 60 us a signature)
_CHUNKS_PER_WORKER = 4


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


@dataclass
class SignatureBatch:
    """Signatures to check later: (position, digest) of each entry, and what to check."""

    where: list[tuple[int, str]] = field(default_factory=list)
    items: list[tuple[bytes, bytes, bytes]] = field(default_factory=list)

    def add(self, position: int, digest: str, key: bytes, signature: bytes,
            message: bytes) -> None:
        self.where.append((position, digest))
        self.items.append((key, signature, message))

    def failures(self) -> list[tuple[int, str]]:
        """(position, digest) of every entry whose signature does not verify, in order."""
        ok = self._answers()
        return [w for w, good in zip(self.where, ok, strict=True) if not good]

    def _answers(self) -> list[bool]:
        n = workers()
        if not worth_a_pool(len(self.items)):
            return _check(self.items)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        size = -(-len(self.items) // (n * _CHUNKS_PER_WORKER))
        chunks = [self.items[i:i + size] for i in range(0, len(self.items), size)]
        # fork: the workers start at once with the code already loaded (they touch no file)
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=n, mp_context=context) as pool:
            return [good for part in pool.map(_check, chunks) for good in part]
