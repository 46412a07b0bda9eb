"""Writing the flat analysis database of `logbook export --sqlite FILE`, with sqlite-utils.

The rows come from the analysis (logbook.analysis.flat): this module only lays them out as
tables with primary and foreign keys, indexes, views for the common questions and full-text
search, for datasette and SQL users. The ledger itself is never opened here, and the file is
built beside its destination and moved into place whole: a reader never sees half an export.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logbook.errors import EnvironmentProblem, InputError

MARKER = "_logbook_export"  # the table that says a file is an export (and may be replaced)


@dataclass(frozen=True)
class Table:
    name: str
    rows: Iterable[dict[str, Any]]  # read once, as they are written
    pk: str | tuple[str, ...]
    columns: dict[str, type]
    foreign_keys: list[tuple[str, str, str]] = field(default_factory=list)
    indexes: list[tuple[str, ...]] = field(default_factory=list)
    search: tuple[str, ...] = ()


_PLAIN = frozenset((str, int, float, type(None), bytes))


def _cell(value: Any) -> Any:
    """A value as sqlite-utils would store it: a dict, list or tuple as JSON text."""
    if type(value) in _PLAIN or not isinstance(value, dict | list | tuple):
        return value
    return json.dumps(value, default=repr, ensure_ascii=False)


def _insert(conn: sqlite3.Connection, table: Table) -> int:
    """Write the table's rows as they are read (one statement for all of them: millions of
    item rows go four times as fast as through sqlite-utils' insert_all, which builds its
    statements in Python); how many were written."""
    names = list(table.columns)
    n = 0

    def values() -> Iterator[tuple[Any, ...]]:
        nonlocal n
        for row in table.rows:
            n += 1
            yield tuple(map(_cell, map(row.get, names)))

    conn.executemany(f"INSERT INTO [{table.name}] ({', '.join(f'[{c}]' for c in names)}) "
                     f"VALUES ({', '.join('?' * len(names))})", values())
    return n


VIEWS = {
    "arm_scores": """
        SELECT plan_slug, arm, count(*) AS runs, avg(score) AS mean_score,
               min(score) AS min_score, max(score) AS max_score, sum(missing) AS missing_items
        FROM runs WHERE status = 'completed' AND retracted = 0 AND plan_slug IS NOT NULL
        GROUP BY plan_slug, arm ORDER BY plan_slug, arm""",
    "unfinished_runs": """
        SELECT seq, digest, plan_slug, arm, status, reason, session FROM runs
        WHERE status != 'completed' ORDER BY seq""",
    "retracted_runs": """
        SELECT runs.seq, runs.digest, runs.plan_slug, runs.arm, runs.score,
               retractions.category, retractions.reason, retractions.correction
        FROM runs JOIN retractions ON retractions.target = runs.digest ORDER BY runs.seq""",
    "failed_items": """
        SELECT runs.plan_slug, runs.arm, items.run, items.id, items.error FROM items
        JOIN runs ON runs.digest = items.run WHERE items.score IS NULL ORDER BY runs.seq""",
}


def _check_destination(path: Path) -> None:
    """Refuse to replace anything but an earlier export: a ledger, another database or any
    other file is bad input (exit 2) and stays as it is."""
    if path.is_dir():
        raise InputError(f"--sqlite {path} is a folder")
    if not path.exists():
        return
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            found = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                                 "name = ?", (MARKER,)).fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        found = None
    if found is None:
        raise InputError(f"--sqlite {path} exists and is not a logbook export: it is left as "
                         "it is (name a new file)")


def write(path: Path, tables: Iterable[Table], about: dict[str, Any]) -> dict[str, int]:
    """Build the export in a temporary file beside ``path`` and move it into place; the rows
    written to each table."""
    import sqlite_utils

    path = Path(path)
    _check_destination(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise EnvironmentProblem(f"--sqlite {path}: cannot write in {folder} "
                                 f"({exc.strerror})") from None
    os.close(fd)
    counts: dict[str, int] = {}
    try:
        db = sqlite_utils.Database(tmp)
        db.table(MARKER).insert_all([{"key": k, "value": str(v)} for k, v in about.items()],
                                    pk="key")
        for t in tables:
            table = db.table(t.name)
            table.create(t.columns, pk=t.pk, foreign_keys=t.foreign_keys or None)
            counts[t.name] = _insert(db.conn, t)
            for columns in t.indexes:
                table.create_index(list(columns))
            if t.search:
                table.enable_fts(list(t.search), create_triggers=False)
        for name, sql in VIEWS.items():
            db.create_view(name, " ".join(sql.split()))
        db.conn.commit()
        db.close()
        os.replace(tmp, path)
        return counts
    except OSError as exc:
        raise EnvironmentProblem(f"--sqlite {path}: cannot be written ({exc.strerror})") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
