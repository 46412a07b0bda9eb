"""Checking many signatures at once, on every core (issue 22).

A large ledger's signatures (all but genesis and key entries, whose keys decide who may sign
what follows, and which are checked in order) are collected while the chain is read and
checked in a pool of worker processes, a chunk at a time as the chain is read, when there are
enough of them to pay for the pool (PARALLEL_MIN) and the machine has more than one core (the
reader then makes no batch and checks them one by one as they come).

Every signature, in the pool or one by one, is checked by a `Checker`: the answer of
logbook.crypto.public.verify_signature (the same rules first: no small-order or non-canonical
key, no small-order R, S below L; then libsodium's crypto_sign_open), at less cost per
signature: the key's own checks are made once per key, and libsodium is called on a buffer
made once instead of two allocations and a copy of the message per signature. The tests hold
its answers to verify_signature's and to the cryptography package's on every way a signature
can be wrong (tests/verify/test_fast_signatures.py).
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

from logbook.crypto.points import L, has_small_order, is_canonical, small_order_encodings

PARALLEL_MIN = 20_000  # below this, a pool costs more than it saves (about 60 us a signature)
CHUNK = 2048  # signatures sent to a worker at a time (about 80 ms of work: the last chunk,
# checked by one worker while the other may be idle, costs little)
_IN_FLIGHT = 2  # chunks sent to a worker and not answered: one it checks, one waiting


class Checker:
    """``checker(key, signature, message)``: whether ``signature`` is ``key``'s Ed25519
    signature of ``message``, exactly as verify_signature answers it."""

    def __init__(self) -> None:
        self._keys: dict[bytes, bool] = {}
        self._small = small_order_encodings()
        self._open: Any = None
        try:
            from nacl._sodium import ffi, lib  # type: ignore[import-not-found]

            self._ffi, self._open = ffi, lib.crypto_sign_open
            self._out, self._out_len = ffi.new("unsigned char[]", 256), 256
            self._mlen = ffi.new("unsigned long long *")
        except (ImportError, AttributeError):  # pragma: no cover - another PyNaCl build
            self._open = None

    def _key_ok(self, key: bytes) -> bool:
        ok = len(key) == 32 and not has_small_order(key) and is_canonical(key)
        if len(self._keys) < 4096:  # a ledger has a handful of keys
            self._keys[key] = ok
        return ok

    def __call__(self, key: bytes, signature: bytes, message: bytes) -> bool:
        ok = self._keys.get(key)
        if ok is None:
            ok = self._key_ok(key)
        if (not ok or len(signature) != 64 or signature[:32] in self._small
                or int.from_bytes(signature[32:], "little") >= L):
            return False
        signed = signature + message
        if self._open is None:  # pragma: no cover - another PyNaCl build
            from logbook.crypto.public import verify_signature

            return verify_signature(key, signature, message)
        if len(signed) > self._out_len:
            self._out_len = len(signed)
            self._out = self._ffi.new("unsigned char[]", self._out_len)
        return bool(self._open(self._out, self._mlen, signed, len(signed), key) == 0)


_checker: Checker | None = None


def checker() -> Checker:
    """This process's Checker (a worker makes its own on its first chunk)."""
    global _checker
    if _checker is None:
        _checker = Checker()
    return _checker


def _check(items: list[tuple[bytes, bytes, bytes]]) -> list[int]:
    """The positions in ``items`` of the signatures that do not verify."""
    check = checker()
    return [i for i, (key, sig, message) in enumerate(items) if not check(key, sig, message)]


def workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def worth_a_pool(signatures: int) -> bool:
    return signatures >= PARALLEL_MIN and workers() > 1


class SignatureBatch:
    """Signatures checked in worker processes while the chain is still being read: every CHUNK
    of them is sent to the worker with the fewest waiting as it fills, so the workers verify
    while this process reads and hashes the entries that follow, and no more than _IN_FLIGHT
    chunks wait for each worker (memory stays flat with the ledger's size). The chunks are
    sent down a pipe by the reading thread itself (no helper thread waiting for the reader to
    let go of the interpreter while a worker has nothing to do). `failures` hands over the
    last chunk and collects the answers; `close` stops the workers (`failures` does so)."""

    def __init__(self) -> None:
        self._where: list[tuple[int, str]] = []
        self._items: list[tuple[bytes, bytes, bytes]] = []
        self._failed: list[tuple[int, str]] = []
        self._workers = workers()
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        self._pending: list[deque[list[tuple[int, str]]]] = []

    def add(self, position: int, digest: str, key: bytes, signature: bytes,
            message: bytes) -> None:
        self._where.append((position, digest))
        self._items.append((key, signature, message))
        if len(self._items) >= CHUNK:
            self._hand_over()

    def _start(self) -> None:
        import multiprocessing

        # fork: the workers start at once with the code already loaded (they touch no file
        # and no connection; they only check the signatures they are sent)
        context = multiprocessing.get_context("fork")
        for _ in range(self._workers):
            ours, theirs = context.Pipe()
            # this process's pipe ends (this worker's and the earlier workers') are its
            # alone: a worker that kept a copy would never see its pipe close when this
            # process dies (killed)
            others = [c.fileno() for c in (*self._conns, ours)]
            proc = context.Process(target=_serve, args=(theirs, others), daemon=True)
            proc.start()
            theirs.close()
            self._conns.append(ours)
            self._procs.append(proc)
            self._pending.append(deque())

    def _hand_over(self) -> None:
        if not self._items:
            return
        if not self._conns:
            self._start()
        self._collect(block=False)
        while True:
            i = min(range(len(self._conns)), key=lambda j: len(self._pending[j]))
            if len(self._pending[i]) < _IN_FLIGHT:
                break
            self._collect(block=True)
        self._conns[i].send(self._items)
        self._pending[i].append(self._where)
        self._where, self._items = [], []

    def _collect(self, block: bool) -> None:
        """The answers that are in (block: at least one, waiting for it)."""
        from multiprocessing.connection import wait

        busy = [c for c, p in zip(self._conns, self._pending, strict=True) if p]
        if not busy:
            return
        for conn in wait(busy, None if block else 0):
            i = self._conns.index(conn)  # type: ignore[arg-type]
            try:
                bad = conn.recv()  # type: ignore[union-attr,call-arg]
            except EOFError:
                raise RuntimeError("a signature worker stopped without answering") from None
            where = self._pending[i].popleft()
            self._failed += [where[k] for k in bad]

    def failures(self) -> list[tuple[int, str]]:
        """(position, digest) of every entry whose signature does not verify, in order."""
        try:
            self._hand_over()
            while any(self._pending):
                self._collect(block=True)
        finally:
            self.close()
        return sorted(self._failed)

    def close(self) -> None:
        for conn in self._conns:
            with contextlib.suppress(OSError):  # a worker gone already
                conn.send(None)
            conn.close()
        for proc in self._procs:
            proc.join(5)
            if proc.is_alive():  # pragma: no cover - a worker that does not stop
                proc.terminate()
                proc.join()
        self._conns, self._procs, self._pending = [], [], []


def _serve(conn: Connection, inherited: list[int]) -> None:
    """A worker: check each chunk it is sent, answer with the positions that fail. An
    interrupt (Ctrl-C reaches the whole process group) is the reader's to handle: it stops us.
    The reader's pipe ends to the other workers (``inherited`` by the fork) are closed, so the
    reader's death closes this worker's pipe, and the worker ends instead of waiting for
    ever."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for fd in inherited:
        with contextlib.suppress(OSError):
            os.close(fd)
    try:
        while (items := conn.recv()) is not None:
            conn.send(_check(items))
    except (EOFError, OSError):  # the reader is gone
        return
