"""`show RUN --item ID` and `show RUN --items [--where EXPR]`: a run's items and their traces
(logbook.analysis.items reads them; here they are printed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logbook.cli import state
from logbook.errors import InputError

if TYPE_CHECKING:
    from logbook.analysis.items import Item

SNIPPET = 60  # characters of a text on an --items line


def show_items(ref: str, item: str | None, sample: int | None, listing: bool,
               where: list[str], limit: int, as_json: bool) -> None:
    from logbook.analysis.items import has_traces, items_of, select, the_item

    if item is not None and listing:
        raise InputError("--item and --items: give one (an item, or the list)")
    if item is None and not listing:
        raise InputError("--where, --sample: give them with --items or --item ID")
    if where and item is not None:
        raise InputError("--where goes with --items (--item names one item)")
    if sample is not None and item is None:
        raise InputError("--sample goes with --item ID")
    if limit < 1:
        raise InputError(f"--limit must be at least 1 (it is {limit})")
    with state.open_verified(keep=()) as (ledger, _checked, _):
        e = ledger.get(ref)
        if e.kind != "run":
            raise InputError(f"{ref}: entry @{e.seq} is a {e.kind}, not a run")
        rows = items_of(e.body, ledger.entry_log.blob)
    traced = has_traces(e.body)
    if item is not None:
        chosen = the_item(rows, item, sample)
        if as_json:
            state.emit_json({"run": e.digest, "seq": e.seq, "traces_kept": traced,
                             "items": [r.as_json() for r in chosen]})
            return
        for r in chosen:
            _one(e.seq, r, traced)
        return
    matched = select(rows, where)
    shown = matched[:limit]
    if as_json:
        state.emit_json({"run": e.digest, "seq": e.seq, "traces_kept": traced,
                         "matched": len(matched), "items": [r.as_json() for r in shown]})
        return
    print(f"run @{e.seq}: {len(matched)} of {len(rows)} items"
          + (f" where {' and '.join(where)}" if where else "")
          + ("" if traced else " (no traces kept)"))
    for r in shown:
        line = f"{r.id}" + (f" sample {r.sample}" if r.sample is not None else "")
        line += f"  score {_score(r.score)}"
        if r.error:
            line += f"  error {_snip(r.error)}"
        for name in ("output", "target", "verdict"):
            if name in r.trace:
                line += f"  {name} {_snip(r.trace[name])}"
        print(line)
    if len(matched) > limit:
        print(f"… {len(matched) - limit} more (--limit N shows more)")


def _score(x: float | None) -> str:
    return "missing" if x is None else f"{x:g}"


def _snip(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= SNIPPET else flat[:SNIPPET - 1] + "…")


def _one(seq: int, r: Item, traced: bool) -> None:
    print(f"run @{seq} item {r.id}" + (f" sample {r.sample}" if r.sample is not None else ""))
    print(f"score {_score(r.score)}" + (f"  error {r.error}" if r.error else "")
          + (f"  cluster {r.cluster}" if r.cluster else ""))
    if not traced:
        print("(this run keeps no traces)")
    for name in ("prompt", "output", "target", "verdict", "explanation"):
        if name in r.trace:
            text = r.trace[name]
            if "\n" in text:
                print(f"{name}:")
                for line in text.splitlines():
                    print(f"  {line}")
            else:
                print(f"{name}: {text}")
    print()
