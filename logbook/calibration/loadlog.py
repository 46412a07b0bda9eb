"""Engine load logs for the calibration's runs (audit A38): what an honest run declares of its
engine's settings, what the engine's load log shows applied, and that log as llama-server
writes it, so that runs recorded through `logbook run --log` and `append --from --log` are
read by the same readers as a user's (logbook.capture.loadlogs)."""

from __future__ import annotations

from typing import Any

CONTEXT = 4096
LAYERS = 33


def loaded(arm: str, wrong: str | None = None) -> dict[str, Any]:
    """The apparatus fields of a run of ``arm`` (its KV cache's precision) served by
    llama.cpp: its declared context and layers, and what the load log shows applied: the
    same, unless ``wrong`` names what the engine did otherwise (``kv_cache``: the cache fell
    back to f16; ``context``: the server ran a quarter of the context asked for)."""
    kv = {"q8": "q8_0", "q4": "q4_0"}.get(arm, arm)
    applied: dict[str, Any] = {
        "engine": "llama.cpp", "log": "llama-server.log", "weights": "Q4_K_M",
        "context": CONTEXT // 4 if wrong == "context" else CONTEXT,
        "kv_cache": "f16" if wrong == "kv_cache" else kv,
        "gpu_layers": LAYERS, "layers": LAYERS}
    return {"n_ctx": CONTEXT, "n_gpu_layers": 99, "applied": applied}


def text(applied: dict[str, Any]) -> str:
    """The load lines llama-server writes for ``applied``, among others it writes too."""
    kv = str(applied["kv_cache"])
    return "\n".join([
        "main: loading model",
        "print_info: file type   = Q4_K - Medium",
        f"print_info: n_layer          = {int(applied['layers']) - 1}",
        f"load_tensors: offloaded {applied['gpu_layers']}/{applied['layers']} layers to GPU",
        "llama_context: constructing llama_context",
        f"llama_context: n_ctx         = {applied['context']}",
        f"llama_kv_cache_unified: kv_size = {applied['context']}, type_k = '{kv}', "
        f"type_v = '{kv}', n_layer = 32, can_shift = 1",
        "main: server is listening on http://127.0.0.1:8080 - starting the main loop", ""])
