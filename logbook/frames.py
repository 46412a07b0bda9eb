"""Runs and items as pandas data frames, from a verified ledger (the `frames` extra)::

    from logbook import frames
    runs = frames.runs()                    # one row per run: plan, arm, status, score, ...
    items = frames.items("kv-q8-vs-f16")    # one row per item and sample of that plan's runs

Each reads the ledger at ``ledger=`` (default: LOGBOOK_DIR or the working folder) read-only,
checks it as `logbook report` does (a ledger that fails the check raises, and no frame is
made), and selects as `logbook export --format csv SELECTOR` does (logbook.exports
.selection). ``items`` has the columns of that CSV (logbook.exports.long_rows), with a
missing score as NaN, never 0; ``runs`` has the columns of the `runs` table of `logbook export
--sqlite` (logbook.analysis.flat) and the ledger's origin.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from logbook.exports.selection import Selection

__all__ = ["items", "runs"]


@contextmanager
def _selected(ledger: str | Path | None, selector: str | None) -> Iterator[Selection]:
    from logbook.analysis.view import LedgerView
    from logbook.exports.selection import selection
    from logbook.ledger.read_model import ANALYSED_KINDS, checked_reading
    from logbook.ledger.service import Ledger

    location = None if ledger is None else str(ledger)
    with Ledger.open(location, write=False) as opened, \
            checked_reading(opened, ANALYSED_KINDS) as checked:
        yield selection(LedgerView(opened, checked), selector)


def runs(selector: str | None = None, *, ledger: str | Path | None = None) -> Any:
    """One row per selected run (a pandas DataFrame)."""
    import pandas as pd  # type: ignore[import-untyped, import-not-found, unused-ignore]

    from logbook.analysis.flat import run_row

    with _selected(ledger, selector) as sel:
        slugs = {p.digest: p.slug for p in sel.view.plans.values()}
        rows = [{"ledger": sel.origin, **run_row(r, slugs)} for r in sel.runs]
    frame = pd.DataFrame(rows)
    if not rows:
        return frame
    frame["retracted"] = frame["retracted"].astype(bool)
    for name in ("items", "missing"):
        frame[name] = frame[name].astype("Int64")
    return frame


def items(selector: str | None = None, *, ledger: str | Path | None = None) -> Any:
    """One row per item and sample of each selected run (a pandas DataFrame)."""
    import pandas as pd  # type: ignore[import-untyped, import-not-found, unused-ignore]

    from logbook.exports.long_rows import COLUMNS, NAMES, rows

    with _selected(ledger, selector) as sel:
        data = list(rows(sel))
    frame = pd.DataFrame.from_records(data, columns=list(NAMES))
    kinds = {str: "string", int: "Int64", float: "float64", bool: "bool"}
    return frame.astype({name: kinds[kind] for name, kind in COLUMNS})
