"""How an analysis refuses a ledger that fails its check: the banner and its exception (one home,
so that the check (logbook.verify.integrity) and the reads after it
(logbook.verify.checked_reads) say it alike)."""

from __future__ import annotations

from logbook.errors import CheckFailed

BANNER = "this ledger does not verify"


class NotVerified(CheckFailed):
    """The ledger failed the check analysis makes before printing (exit 1)."""
