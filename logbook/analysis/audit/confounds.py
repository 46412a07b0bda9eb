"""Confounds that are confounds (audit A06): what two sets of runs recorded differently.

Only fields both sides recorded are compared, each over the runs that record it: a field that
one side never recorded (runs appended from a harness file beside runs captured by `logbook
run`) is "not recorded", listed apart, never a difference. A field that restates the declared
variable (a harness's `model_args.pretrained` naming the model when `variable = ["model"]`)
counts as the variable, as does what a load log shows applied of it (`applied.kv_cache` when
`variable = ["kv_cache_precision"]`). Per-run identity (seeds, times, sessions...) is never a
confound.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from logbook.analysis.view import RunView
from logbook.format.applied import applied_name


@dataclass
class Confounds:
    differ: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    not_recorded: dict[str, list[str]] = field(default_factory=dict)  # side -> fields

    def __bool__(self) -> bool:
        return bool(self.differ)


def covered(name: str, variable: list[str]) -> bool:
    """The field is a declared variable, or lies under one (`decoding` covers its fields), or
    is what the load log shows applied of one (`applied.kv_cache` of `kv_cache_precision`:
    logbook.format.applied's aliases)."""
    if name.startswith("applied.") and any(applied_name(v) == name[8:] for v in variable):
        return True
    return any(name == v or name.startswith(v + ".") for v in variable)


def restates(name: str, runs: list[RunView], variable: list[str]) -> bool:
    """Whether the field's value names the variable's value in every run that records both,
    and is the same once that name is taken out (so it differs only as the variable does)."""
    for v in variable:
        rest, seen = set(), 0
        for r in runs:
            a = r.apparatus
            if name not in a or v not in a or a[v] is None:
                continue
            said, value = str(a[v]).lower(), str(a[name]).lower()
            if len(said) < 2 or said not in value:
                break
            rest.add(value.replace(said, "\0"))
            seen += 1
        else:
            if seen and len(rest) == 1:
                return True
    return False


def confounds(a: list[RunView], b: list[RunView], variable: list[str],
              sides: tuple[str, str] = ("a", "b")) -> Confounds:
    """Fields both sides recorded that take different sets of values on each."""
    out = Confounds()
    rec: list[dict[str, set[str]]] = []
    for runs in (a, b):
        values: dict[str, set[str]] = {}
        # runs of one system share one `compared` (logbook.analysis.view): each read once
        for compared in {id(c): c for c in (r.compared for r in runs)}.values():
            for k, text in compared.items():
                found = values.get(k)
                if found is None:
                    if covered(k, variable):
                        continue
                    found = values[k] = set()
                found.add(text)
        rec.append(values)
    va, vb = rec
    for side, mine, theirs in ((sides[0], va, vb), (sides[1], vb, va)):
        missing = sorted(k for k in theirs if k not in mine)
        if missing:
            out.not_recorded[side] = missing
    for k in sorted(set(va) & set(vb)):
        if va[k] != vb[k] and not restates(k, a + b, variable):
            out.differ.append((k, sorted(va[k]), sorted(vb[k])))
    return out


def table(found: Confounds, sides: tuple[str, str]) -> str:
    """The finding's short table: field, the first side's values, the second side's."""
    rows = [("field", *sides)] + [(k, ", ".join(x), ", ".join(y)) for k, x, y in found.differ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    for side, names in found.not_recorded.items():
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        lines.append(f"  not recorded by {side} (not compared): {shown}")
    return "\n".join(lines)

