"""The `check` kind (docs/format.md §5, "Checks"): what a careful evaluator checked besides
the runs. Two types:

* ``contamination``: for a model and a suite (or one of its splits), how it was looked for
  (``method``: a name such as ``ngram-overlap``, ``completion-probe`` or
  ``guided-instruction``, and free text), what was found (``result``: ``clean``,
  ``contaminated`` or ``inconclusive``, with the measured ``rate`` when there is one) and the
  evidence (a kept file, named by SHA-256 as a run's logs are);
* ``spot-check``: a reviewer's hand verdicts on items of one run, drawn from its items by the
  draw recorded (logbook.format.spotcheck: ``n`` items by ``seed``), one verdict an item:
  ``agree``, ``disagree`` or ``unsure`` with the scorer, and a note.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from logbook.model.base import Digest, Record, Text
from logbook.model.run import LogRef

CheckType = Literal["contamination", "spot-check"]
Found = Literal["clean", "contaminated", "inconclusive"]
Said = Literal["agree", "disagree", "unsure"]


class Result(Record):
    verdict: Found
    rate: float | None = Field(default=None, ge=0, le=1)


class Draw(Record):
    """The items a spot-check looked at: ``n`` of the run's items by ``seed``
    (logbook.format.spotcheck)."""

    n: int = Field(ge=1, le=10_000)
    seed: int = Field(ge=0, lt=2**53)


class Verdict(Record):
    id: Text
    verdict: Said
    note: str | None = None


class Check(Record):
    type: CheckType
    # contamination
    model: Text | None = None
    suite: Text | None = None
    split: Text | None = None
    method: Text | None = None
    description: str | None = None
    result: Result | None = None
    evidence: LogRef | None = None
    # spot-check
    run: Digest | None = None
    draw: Draw | None = None
    verdicts: list[Verdict] | None = None
    reviewer: str | None = None

    @model_validator(mode="after")
    def _typed(self) -> Check:
        need, never = (("model", "suite", "method", "result"), ("run", "draw", "verdicts")) \
            if self.type == "contamination" else (("run", "draw", "verdicts"),
                                                  ("model", "suite", "split", "method",
                                                   "result", "evidence"))
        for name in need:
            if getattr(self, name) is None:
                raise ValueError(f"{name}: a {self.type} check needs it")
        for name in never:
            if getattr(self, name) is not None:
                raise ValueError(f"{name}: a {self.type} check has none")
        if self.verdicts is not None:
            ids = [v.id for v in self.verdicts]
            dup = sorted({i for i in ids if ids.count(i) > 1})
            if dup:
                raise ValueError(f"verdicts: item {dup[0]!r} is judged twice")
        return self
