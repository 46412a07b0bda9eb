"""Committed items (docs/format.md, "Committed items"): a run whose test items stay private
records, for each row of its outcomes, a salted commitment to the row's item id, the SHA-256 of
its content and its score, instead of the content; and which rows its owner must open is drawn
from a published checkpoint's root, so that the owner cannot choose them.

Both are defined on bytes, so that an independent verifier rebuilds them without any JSON or
number formatting of ours:

* a commitment is the hex SHA-256 of ``COMMIT_DOMAIN || salt || SHA-256(id as UTF-8) ||
  SHA-256(content as UTF-8) || score``, where salt is 32 random bytes and score the IEEE 754
  binary64 big-endian bytes of the row's score, or eight 0xFF bytes (a NaN no score can be)
  when it has none;
* the rows to open, K of the run's N, are a partial Fisher-Yates shuffle of 0..N-1 driven by
  the stream SHA-256(seed || counter as 8 bytes big-endian), counter 0, 1, ..., each block's
  first 8 bytes read as an unsigned big-endian integer and drawn by rejection (below the
  largest multiple of the range), the seed being SHA-256(``OPEN_DOMAIN`` || checkpoint root ||
  run digest || N || K, both as 8 bytes big-endian); the first K places are the rows.
"""

from __future__ import annotations

import hashlib
import struct

COMMIT_DOMAIN = b"logbook.item-commitment.v1\n"
OPEN_DOMAIN = b"logbook.open.v1\n"
NO_SCORE = b"\xff" * 8
SALT_BYTES = 32


def content_digest(content: str) -> bytes:
    return hashlib.sha256(content.encode("utf-8")).digest()


def commitment(salt: bytes, item_id: str, digest: bytes, score: float | None) -> str:
    """The hex commitment to one row: its item id, its content's SHA-256 and its score."""
    if len(salt) != SALT_BYTES or len(digest) != 32:
        raise ValueError("a salt and a content digest are 32 bytes each")
    scored = NO_SCORE if score is None else struct.pack(">d", float(score))
    return hashlib.sha256(COMMIT_DOMAIN + salt + hashlib.sha256(item_id.encode("utf-8")).digest()
                          + digest + scored).hexdigest()


def rows_to_open(root: bytes, run_digest: bytes, n: int, k: int) -> list[int]:
    """The K rows of N that a checkpoint of root ``root`` chooses for the run ``run_digest``,
    in the order drawn."""
    if not 0 < k <= n:
        raise ValueError(f"cannot open {k} of {n} rows")
    seed = hashlib.sha256(OPEN_DOMAIN + root + run_digest + struct.pack(">QQ", n, k)).digest()
    places = list(range(n))
    counter = 0

    def below(m: int) -> int:
        nonlocal counter
        limit = (1 << 64) - (1 << 64) % m
        while True:
            block = hashlib.sha256(seed + struct.pack(">Q", counter)).digest()
            counter += 1
            x = int.from_bytes(block[:8], "big")
            if x < limit:
                return x % m

    for j in range(k):
        pick = j + below(n - j)
        places[j], places[pick] = places[pick], places[j]
    return places[:k]
