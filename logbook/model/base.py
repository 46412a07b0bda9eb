"""Shared pieces of the record models: strict, frozen, no extra fields, finite numbers."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

HEX64 = r"^[0-9a-f]{64}$"
SHA256_TAGGED = r"^sha256:[0-9a-f]{64}$"

Digest = Annotated[str, StringConstraints(pattern=HEX64)]
Text = Annotated[str, StringConstraints(min_length=1)]


class Record(BaseModel):
    """Every body model: unknown fields are refused, values never change after validation."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
