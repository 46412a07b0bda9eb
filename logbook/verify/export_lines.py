"""The chain checks (logbook.verify.chain) on exported JSON Lines, with no store involved: what
`logbook verify FILE.jsonl`, the published ledger's entry bundles and a mirror's new entries
are checked by."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from logbook.format.strict import repeated_key
from logbook.storage import index as derive
from logbook.verify.chain import ChainVerifier, ExpectedKeys, Result, strict_checks


def verify_export_lines(lines: Iterable[bytes], trusted: str | None = None,
                        source: str = "export", strict: bool = False,
                        chain: ChainVerifier | None = None,
                        keys: ExpectedKeys | None = None) -> Result:
    """The same chain checks on an exported JSON Lines file, with no SQLite involved.
    ``chain`` and ``keys``: carried on from entries checked before (the lines are the ones
    after them: logbook.verify.mirror_tail), instead of starting at the genesis entry."""
    from logbook.errors import InputError
    from logbook.format.canonical import canonical_bytes

    chain = ChainVerifier(trusted) if chain is None else chain
    keys = ExpectedKeys() if keys is None else keys
    kept: list[tuple[int, bytes, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        problem = None
        try:
            row = orjson.loads(line)
            entry = row["entry"]
            raw = canonical_bytes(entry)
            seq, digest, signature = row.get("seq"), row.get("digest"), row.get("signature")
            again = repeated_key(line.rstrip(b"\r\n"), row, sort=False)
            if again is not None:
                problem = f"key {again!r} appears twice in one object (readers may take " \
                          "either value)"
            elif not (type(entry.get("v")) is int and type(entry.get("seq")) is int):
                problem = "its envelope's v and seq are not JSON integers (3.0 and 3e0 are " \
                          "not 3)"
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, InputError):
            problem = 'it is not an exported entry {"seq", "digest", "signature", "entry"}'
        if problem is not None:
            position = chain.expected_seq
            chain.result.entries += 1
            chain.expected_seq += 1
            chain._find("format", f"{source} line {number} (entry {position}): {problem}",
                        position, [])
            continue
        position = chain.expected_seq
        if type(seq) is not int:
            chain._find("format", f"{source} line {number}: its seq {seq!r} is not an integer",
                        position, [])
        env = chain.feed(seq if type(seq) is int else None,
                         digest if isinstance(digest, str) else "", raw,
                         signature if isinstance(signature, str) else "")
        if env is not None:
            derive.derive_keys(keys, position, env)
            if strict:
                kept.append((position, raw, env))
    result = chain.finish()
    if strict:  # the bytes here are canonical by construction: this checks the bodies
        strict_checks(result, kept)
    result.digests, result.keys = chain.digests, keys.rows()
    return result
