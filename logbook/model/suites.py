"""The `suite` kind (docs/format.md §5, "Suites"): a suite named once, with its splits.

A suite entry gives the suite's name and version, its dataset identity (the identity intake
computes, ``dataset_hash``), its item count, its cluster field, and its splits (``dev``,
``test``, ...): each a set of item ids named by its digest
(logbook.format.splits.id_set_digest), optionally with the ids themselves, and, for a held-out
split, how many looks it allows (``holdout.looks``; a split named ``test`` allows one unless
it says otherwise). Plans name the suite and a split; runs name them in their apparatus
(``suite``, ``split``); every run on a held-out split is a look (logbook.analysis.holdouts).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from logbook.format.splits import id_set_digest
from logbook.model.base import SHA256_TAGGED, Record, Text


class Holdout(Record):
    looks: int = Field(default=1, ge=1, le=1000)


class Split(Record):
    n_items: int = Field(ge=1)
    items: str = Field(pattern=SHA256_TAGGED)  # id_set_digest of the split's item ids
    ids: list[Text] | None = None
    holdout: Holdout | None = None

    @model_validator(mode="after")
    def _ids(self) -> Split:
        if self.ids is not None:
            if len(set(self.ids)) != len(self.ids):
                dup = sorted({i for i in self.ids if self.ids.count(i) > 1})[0]
                raise ValueError(f"ids: item {dup!r} is listed twice")
            if len(self.ids) != self.n_items:
                raise ValueError(f"ids: {len(self.ids)} ids but n_items is {self.n_items}")
            if id_set_digest(self.ids) != self.items:
                raise ValueError(f"items: {self.items} is not the digest of the ids listed "
                                 f"({id_set_digest(self.ids)})")
        return self


class SuiteRecord(Record):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/:-]{0,127}$")
    version: str = ""
    dataset_hash: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$|^[^:]+:.+$")
    n_items: int = Field(ge=1)
    cluster_field: str | None = None
    splits: dict[Text, Split] = Field(default_factory=dict)
    description: str | None = None

    @model_validator(mode="after")
    def _splits(self) -> SuiteRecord:
        total = sum(s.n_items for s in self.splits.values())
        if total > self.n_items:
            raise ValueError(f"splits: they hold {total} items between them, more than the "
                             f"suite's n_items ({self.n_items})")
        owner: dict[str, str] = {}
        for name, split in sorted(self.splits.items()):
            for i in split.ids or ():
                if i in owner:
                    raise ValueError(f"splits.{name}.ids: item {i!r} is in split "
                                     f"{owner[i]!r} too: splits share no item")
                owner[i] = name
        return self
