"""Whether a store still has the tables and columns its migrations made (`logbook verify`,
issue 34): a table dropped or a column retyped by someone with the database's rights is a
*schema* finding naming it, never a crash further on nor a clean bill. Each backend gives the
columns it expects (derived from its own migrations, so they cannot drift) and the columns it
finds; the comparison is here, once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Columns = Mapping[str, Sequence[tuple[str, str]]]  # table -> (column, type) in order


def problems(expected: Columns, found: Columns) -> list[str]:
    """One sentence per difference: a missing table, a missing column, a column of another
    type (extra tables and columns are no concern of the ledger's)."""
    out = []
    for table, columns in expected.items():
        have = dict(found.get(table) or ())
        if table not in found:
            out.append(f"the table {table} is missing")
            continue
        for name, kind in columns:
            if name not in have:
                out.append(f"the table {table} has no column {name}")
            elif have[name] != kind:
                out.append(f"the column {table}.{name} is {have[name] or 'untyped'}, not {kind}")
    return out
