"""The metric kinds a plan may name, in one place (model, admission, report and audit read
it). Importing it costs nothing: no pydantic, no numpy."""

from __future__ import annotations

from typing import Literal

MetricKind = Literal["proportion", "mean", "pass_at_k"]
METRIC_KINDS: tuple[str, ...] = ("proportion", "mean", "pass_at_k")
BOUNDED_KINDS: tuple[str, ...] = ("proportion", "pass_at_k")  # scores lie in [0, 1]
