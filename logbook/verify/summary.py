"""The one line `logbook verify` ends with: what a paper cites and a CI job compares.

    logbook verify: OK ledger=<uuid> size=<entries> root=<Merkle root, hex> checked=<what>
    trusted=<fingerprint or none> logbook=<version>

The root is the RFC 9162 tree head over the entries' digests, recomputed from their bytes (the
root a checkpoint of that size signs); a failed verify says FAIL and how many findings.
"""

from __future__ import annotations

from logbook.tlog import merkle
from logbook.verify.chain import Result


def quotable_line(result: Result, trusted: str | None, checked: list[str]) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("logbook")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        ours = "unknown"
    if result.root is not None:  # the root verify rebuilt with the tree (verify.stored)
        root = result.root.hex()
    else:
        root = merkle.root_hash(result.digests).hex() if result.digests else "none"
    verdict = "OK" if result.ok else f"FAIL findings={len(result.findings)}"
    return (f"logbook verify: {verdict} ledger={result.ledger or 'unknown'} "
            f"size={result.entries} root={root} checked={','.join(checked)} "
            f"trusted={trusted or 'none'} logbook={ours}")
