"""llama.cpp's load lines (llama-cli, llama-server, llama-bench's model load), older and newer
spellings: the context (``llama_context: n_ctx = 4096``, older ``llama_new_context_with_model:
n_ctx = 4096``), the KV cache's types (``llama_kv_cache...: ... type_k = 'q8_0', type_v =
'q8_0'``, older ``KV self size = ... K (f16): ..., V (f16): ...``), the layers offloaded
(``offloaded 33/33 layers to GPU``), the weights' file type (``print_info: file type =
Q4_K - Medium``, older ``llm_load_print_meta: model ftype = ...``), ``n_batch`` and
``flash_attn``. Pure."""

from __future__ import annotations

import re
from typing import Any

# a line of the load: its function's name, then a colon (after an optional timestamp and level)
_LOAD = re.compile(r"(?:^|\s)(llama_context|llama_new_context_with_model|llama_init_from_model|"
                   r"llama_kv_cache\w*|llm_load_tensors|load_tensors|llm_load_print_meta|"
                   r"print_info|llama_model_load_internal):\s*(.*)$")
_VALUE = re.compile(r"^(n_ctx|n_batch|flash_attn)\s*=\s*(\S+)")
_TYPES = re.compile(r"type_k\s*=\s*'([^']+)',\s*type_v\s*=\s*'([^']+)'")
_KV_SIZES = re.compile(r"K \(([^)]+)\):.*V \(([^)]+)\):")
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_FTYPE = re.compile(r"^(?:model ftype|file type|ftype)\s*=\s*(.+?)\s*(?:\(guessed\))?$")


def read(lines: list[str]) -> dict[str, Any] | None:
    """What llama.cpp's load lines show applied; None when there are none. The first model
    loaded counts (a server's draft model loads after it)."""
    out: dict[str, Any] = {}
    for line in lines:
        m = _LOAD.search(line)
        if m is None:
            continue
        rest = m.group(2).strip()
        if (v := _VALUE.match(rest)) is not None:
            name = {"n_ctx": "context", "n_batch": "batch", "flash_attn": "flash_attn"}[v[1]]
            value: Any = int(v[2]) if v[2].isdigit() and name != "flash_attn" else v[2]
            if name == "flash_attn":
                value = {"0": False, "1": True}.get(v[2], v[2])
            out.setdefault(name, value)
        elif (t := _TYPES.search(rest) or _KV_SIZES.search(rest)) is not None:
            k, v2 = t[1].lower(), t[2].lower()
            out.setdefault("kv_cache", k if k == v2 else f"{k}/{v2}")
        elif (o := _OFFLOADED.search(rest)) is not None:
            out.setdefault("gpu_layers", int(o[1]))
            out.setdefault("layers", int(o[2]))
        elif (f := _FTYPE.match(rest)) is not None:
            out.setdefault("weights", _weights(f[1]))
    return out or None


def _weights(text: str) -> str:
    """``Q4_K - Medium`` -> ``Q4_K_M``, ``all F32`` -> ``F32``, ``mostly Q8_0`` -> ``Q8_0``."""
    text = re.sub(r"^(?:all|mostly)\s+", "", text.strip())
    m = re.fullmatch(r"(\S+) - (Small|Medium|Large|S|M|L)", text)
    return f"{m[1]}_{m[2][0]}" if m else text
