"""vLLM's engine configuration line: ``Initializing an LLM engine (v0.6.6) with config:``
(older), ``Initializing a V0/V1 LLM engine (v0.8.3) with config:`` (newer), followed by
``key=value, ...``: the dtype, ``max_seq_len`` (the context), ``quantization``,
``kv_cache_dtype`` (``auto``: the model's dtype), ``tensor_parallel_size`` and
``enforce_eager``. Pure."""

from __future__ import annotations

import re
from typing import Any

_START = re.compile(r"Initializing an? (?:V\d )?LLM engine\b.*? with config:\s*(.*)$")
_PAIR = re.compile(r"(?:^|,\s*)(dtype|max_seq_len|max_model_len|quantization|kv_cache_dtype|"
                   r"tensor_parallel_size|enforce_eager)=('[^']*'|[^,\s]*)")
_NAMES = {"dtype": "precision", "max_seq_len": "context", "max_model_len": "context",
          "quantization": "quantization", "kv_cache_dtype": "kv_cache",
          "tensor_parallel_size": "tensor_parallel", "enforce_eager": "enforce_eager"}


def read(lines: list[str]) -> dict[str, Any] | None:
    """What vLLM's first engine configuration line shows applied; None without one."""
    for line in lines:
        m = _START.search(line)
        if m is None:
            continue
        got: dict[str, Any] = {}
        for key, raw in _PAIR.findall(m[1]):
            value = raw.strip("'")
            name = _NAMES[key]
            if name in ("context", "tensor_parallel") and value.isdigit():
                got.setdefault(name, int(value))
            elif name == "enforce_eager" and value in ("True", "False"):
                got.setdefault(name, value == "True")
            elif name not in ("context", "tensor_parallel", "enforce_eager"):
                got.setdefault(name, None if value == "None" else value.removeprefix("torch."))
        if not got:
            continue
        if got.get("kv_cache") == "auto" and got.get("precision"):
            got["kv_cache"] = got["precision"]  # auto: the cache takes the model's dtype
        if "precision" in got:  # the weights: their quantization, else the dtype
            got["weights"] = got.get("quantization") or got["precision"]
        return got
    return None
