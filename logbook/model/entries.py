"""The smaller entry kinds: genesis, key, retraction, claim, band, note, timestamp (DESIGN
§4.4)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from logbook.model.base import Digest, Record, Text


class PublicKeyRef(Record):
    name: Text
    public: str = Field(pattern=r"^[A-Za-z0-9+/]{43}=$")


class Genesis(Record):
    name: Text
    uuid: str = Field(pattern=r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
    keys: list[PublicKeyRef] = Field(min_length=1)


class Key(Record):
    action: Literal["add", "revoke"]
    name: Text
    public: str = Field(pattern=r"^[A-Za-z0-9+/]{43}=$")
    reason: Text


class Retraction(Record):
    target: Digest
    reason: Text
    category: Literal["harness_defect", "data_error", "analysis_error", "superseded", "other"]
    correction: str | None = None


class Claim(Record):
    statement: Text
    plan: Digest | None
    arm: str | list[str] | None = None
    value: float
    interval: list[float] = Field(min_length=2, max_length=2)
    runs: list[Digest] = Field(default_factory=list)
    ledger_size: int = Field(ge=1)
    ledger_root: Digest
    figure: Literal["arm_mean", "effect"] | None = None
    method: str | None = None

    @model_validator(mode="after")
    def _interval(self) -> Claim:
        if self.interval[0] > self.interval[1]:
            raise ValueError("interval: low is above high")
        return self


class Band(Record):
    selector: Text
    evaluator_config_hash: str | None
    k: int = Field(ge=2)
    mean: float
    sd: float = Field(ge=0)
    band: float = Field(ge=0)
    z: float = Field(gt=0)
    runs: list[Digest] = Field(min_length=2)


class Note(Record):
    text: Text
    refs: list[Digest] = Field(default_factory=list)


class Timestamp(Record):
    """An RFC 3161 time-stamp over the checkpoint of ``size`` and ``root`` (docs/format.md,
    "Timestamps"): the TSA's answer as it came (base64 DER), where it was asked, and the time
    its token states."""

    size: int = Field(ge=1)
    root: Digest
    tsa: Text
    time: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
    response: str = Field(min_length=4, max_length=360_000,
                          pattern=r"^[A-Za-z0-9+/]+={0,2}$")
