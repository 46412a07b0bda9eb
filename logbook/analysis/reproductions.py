"""Reproductions (docs/format.md, "Reproductions"): a run that repeats an earlier one
(`body.reproduces`) and how far it agrees with it.

The agreement is the paired difference, reproduction minus original, over the items both
scored (each item's samples averaged), with its interval (`logbook compare`'s paired
bootstrap, the report's seed), and the items whose score changed. A reproduction agrees when
the interval holds 0. It is independent when another key signed it: the same signer running
the same thing twice shows run-to-run noise, not that someone else can get the number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logbook.analysis.compare import PairedEffect, paired_effect
from logbook.analysis.view import LedgerView, RunView, paired_arrays


@dataclass(frozen=True)
class Reproduction:
    original: RunView
    by: RunView
    independent: bool
    effect: PairedEffect | None  # by minus original; None when they share < 2 scored items
    higher: int  # items the reproduction scored higher
    lower: int  # items it scored lower
    why: str  # compare's verdict, or why there is no effect

    @property
    def agrees(self) -> bool | None:
        """Whether the interval of the difference holds 0; None without one."""
        if self.effect is None:
            return None
        return self.effect.low <= 0 <= self.effect.high

    def as_json(self) -> dict[str, Any]:
        e = self.effect
        return {"run": self.original.seq, "by": self.by.seq, "by_digest": self.by.digest,
                "signer": signer(self.by), "independent": self.independent,
                "difference": None if e is None else {"point": e.point, "low": e.low,
                                                      "high": e.high, "n": e.n,
                                                      "method": e.method},
                "higher": self.higher, "lower": self.lower, "agrees": self.agrees}


def signer(run: RunView) -> str:
    return str(run.entry.envelope.get("signer"))


def reproductions(view: LedgerView, runs: list[RunView],
                  confidence: float = 0.95) -> list[Reproduction]:
    """The unretracted reproductions of ``runs``, in ledger order."""
    found = [(original, by) for original in runs
             for by in view.reproducers.get(original.digest, []) if not by.retracted]
    out = []
    for original, by in sorted(found, key=lambda pair: pair[1].seq):
        usable = original.status == "completed" and by.status == "completed"
        effect, why = (paired_effect([original], [by], confidence) if usable
                       else (None, f"@{by.seq} is {by.status}" if by.status != "completed"
                             else f"@{original.seq} is {original.status}"))
        higher = lower = 0
        if usable:
            _ids, a, b = paired_arrays([original], [by])
            higher, lower = int((b > a).sum()), int((b < a).sum())
        out.append(Reproduction(original, by, signer(by) != signer(original), effect, higher,
                                lower, why))
    return out
