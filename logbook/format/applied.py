"""Requested versus applied (docs/format.md, "Applied"): the one vocabulary of what an engine's
load log shows it applied (a run's ``apparatus.applied``), the aliases by which a declared
apparatus names the same settings, and how a requested value is compared with an applied one.

A run's requested settings are its declared apparatus (every field but ``applied.*`` and
``captured.*``, matched by the last part of its dotted name) and, where the run says nothing,
its plan's pins (``pinned`` and its arm's ``apparatus``). Pure; no heavy imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# the applied vocabulary: field -> how its values compare
INTEGER = ("context", "gpu_layers", "batch", "tensor_parallel")
PRECISION = ("kv_cache", "precision", "weights", "quantization")
SWITCH = ("flash_attn", "enforce_eager")
FIELDS = (*INTEGER, *PRECISION, *SWITCH)
# what the record says about the log itself, never compared: the engine, the log's name and
# the layer count that `gpu_layers` is out of
ABOUT = ("engine", "log", "layers")

# a declared field's last name (lower case, '-' read as '_') -> the applied field it requests
ALIASES: dict[str, str] = {
    **dict.fromkeys(("context", "ctx", "n_ctx", "ctx_size", "context_length", "context_size",
                     "max_model_len", "max_seq_len"), "context"),
    **dict.fromkeys(("kv_cache", "kv_cache_precision", "kv_cache_dtype", "kv_cache_type",
                     "cache_type_k"), "kv_cache"),
    **dict.fromkeys(("gpu_layers", "n_gpu_layers", "ngl"), "gpu_layers"),
    **dict.fromkeys(("precision", "dtype", "torch_dtype"), "precision"),
    **dict.fromkeys(("weights", "weights_precision", "ftype", "file_type"), "weights"),
    **dict.fromkeys(("quantization", "quantization_method"), "quantization"),
    **dict.fromkeys(("n_batch", "batch"), "batch"),
    **dict.fromkeys(("tensor_parallel", "tensor_parallel_size", "tp"), "tensor_parallel"),
    **dict.fromkeys(("flash_attn", "flash_attention"), "flash_attn"),
    "enforce_eager": "enforce_eager",
}

# spellings of one precision: the first name each is read as
_SAME = {"bfloat16": "bf16", "float16": "f16", "half": "f16", "fp16": "f16", "float32": "f32",
         "float": "f32", "fp32": "f32", "q8": "q8_0", "q4": "q4_0", "q5": "q5_0", "int8": "q8_0",
         "none": "none", "null": "none", "fp8": "fp8", "fp8_e4m3fn": "fp8_e4m3"}
# a request that leaves the choice to the engine: nothing to compare it with
_ENGINE_CHOOSES = frozenset({"auto", "default", ""})
_ALL_LAYERS = frozenset({"all", "max", "-1"})


def applied_name(declared: str) -> str | None:
    """The applied field a declared (dotted) field requests, None when it requests none."""
    last = declared.rsplit(".", 1)[-1].lower().replace("-", "_")
    return ALIASES.get(last)


def precision(value: Any) -> str | None:
    """One spelling of a precision or format: lower case, without ``torch.``, the long names
    read as short (``torch.bfloat16`` -> ``bf16``, ``q8`` -> ``q8_0``, ``Q4_K - Medium`` ->
    ``q4_k_m``); None for a value that is no name."""
    if value is None:
        return "none"
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip().lower().removeprefix("torch.")
    text = text.replace(" - ", "_").replace(" ", "_").replace("-", "_")
    head, _, size = text.rpartition("_")
    if head and size in ("small", "medium", "large"):  # Q4_K - Medium
        text = f"{head}_{size[0]}"
    for said in ("all_", "mostly_"):  # llama.cpp's "all F32", older "mostly Q4_0"
        text = text.removeprefix(said)
    return _SAME.get(text, text)


def integer(value: Any) -> int | None:
    """A whole number, or its decimal text; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def switch(value: Any) -> bool | None:
    """On or off, however a log or a command line writes it; None for anything else."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "on", "yes", "enabled"):
        return True
    if text in ("0", "false", "off", "no", "disabled"):
        return False
    return None


@dataclass(frozen=True)
class Mismatch:
    """One setting the load log shows applied otherwise than requested."""

    field: str          # the applied vocabulary's name
    declared: str       # the dotted field (or pin) that requested it
    requested: Any
    applied: Any
    engine: str
    log: str


def differs(field: str, want: Any, got: Any, layers: Any = None) -> bool:
    """Whether the applied value ``got`` is not what ``want`` requested; a request the engine
    is left to decide (``auto``), or a value either side writes unreadably, never differs."""
    if isinstance(want, str) and want.strip().lower() in _ENGINE_CHOOSES:
        return False
    if field in INTEGER:
        g = integer(got)
        if field == "gpu_layers":
            total = integer(layers)
            everything = (isinstance(want, str) and want.strip().lower() in _ALL_LAYERS) or \
                integer(want) == -1 or (total is not None and (integer(want) or 0) >= total)
            if everything:
                return total is not None and g is not None and g < total
        w = integer(want)
        if field == "context" and w == 0:  # llama.cpp's 0: the model's own context
            return False
        return w is not None and g is not None and w != g
    if field in SWITCH:
        ws, gs = switch(want), switch(got)
        return ws is not None and gs is not None and ws != gs
    wp, gp = precision(want), precision(got)
    return wp is not None and gp is not None and wp != gp


def requested(apparatus: dict[str, Any], pins: dict[str, Any] | None = None
              ) -> dict[str, tuple[str, Any]]:
    """Applied field -> (the declared field, its value): the flat apparatus's own fields
    first (in name order), then the plan's pins for what the run does not say."""
    out: dict[str, tuple[str, Any]] = {}
    for source in (apparatus, pins or {}):
        for name in sorted(source):
            if name.startswith(("applied.", "captured.")):
                continue
            field = applied_name(name)
            if field is not None and field not in out and source[name] is not None:
                out[field] = (name, source[name])
    return out


def mismatches(apparatus: dict[str, Any], pins: dict[str, Any] | None = None) -> list[Mismatch]:
    """What the flat apparatus's ``applied.*`` shows otherwise than requested (none when the
    run records nothing applied)."""
    applied = {k[len("applied."):]: v for k, v in apparatus.items() if k.startswith("applied.")}
    if not any(f in applied for f in FIELDS):
        return []
    engine, log = str(applied.get("engine") or "engine"), str(applied.get("log") or "")
    out = []
    for field, (name, want) in requested(apparatus, pins).items():
        if field in applied and differs(field, want, applied[field], applied.get("layers")):
            out.append(Mismatch(field, name, want, applied[field], engine, log))
    return out


def said(m: Mismatch) -> str:
    """``requested context 8192 (n_ctx) but the llama.cpp load log server.log shows 4096
    applied``: the setting and the value requested, with the declared field's own name when it
    is another, then the engine, the log and the value applied (audit A38's words)."""
    name = m.declared.rsplit(".", 1)[-1]
    asked = f"{m.field} {m.requested}" + (f" ({m.declared})" if name != m.field else "")
    return (f"requested {asked} but the {m.engine} load log{' ' + m.log if m.log else ''} "
            f"shows {m.applied} applied")


def restated(flat: dict[str, Any]) -> set[str]:
    """The ``applied.*`` fields a declared field of the same apparatus already requests: the
    declared one describes the system (and A38 holds the two together), so the applied one is
    not compared between runs a second time (logbook.format.apparatus.system_fields)."""
    asked = {applied_name(k) for k in flat if not k.startswith(("applied.", "captured."))}
    return {f"applied.{f}" for f in FIELDS if f in asked}
