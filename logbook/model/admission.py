"""An admission (docs/format.md §5, docs/recording.md "Admitting a refused run"): an earlier
run that was not counted in a plan (exploratory, or refused and kept with ``intended``) is
counted in one of the plan's arms from here on, the plan as it stands having accepted it."""

from __future__ import annotations

from logbook.model.base import Digest, Record, Text


class Admission(Record):
    run: Digest
    plan: Digest
    arm: Text
    reason: Text | None = None
