"""The apparatus of an lm-evaluation-harness run: model, engine, decoding, the suite's identity
(its items' data) and the prompt's, and the machine, from a results object (a results file's, or
simple_evaluate's dictionary), as logbook.ingest.lm_eval_tasks reads it.

The suite identity (``dataset_hash``, docs/recording.md "From lm-evaluation-harness") is the
SHA-256 of the canonical JSON (RFC 8785) of the sorted ``[id, doc_hash, target_hash]`` triples
of the run's items: ``id`` as the run's ``outcomes.id`` holds it (the doc_id in decimal;
``subtask/doc_id`` in a group), the two hashes as lm-eval logs them in each sample line of the
primary filter. lm-eval hashes the document and its target, not the prompt, so the identity does
not move with ``num_fewshot`` or the few-shot seed. When any item lacks either hash, it is the
same over the sorted ids alone (a JSON array of strings). The prompt (lm-eval's
``task_hashes``, over every sample's prompt) is apparatus: ``prompt_hash``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from logbook.capture.redact import redact_value
from logbook.format.canonical import canonical_bytes
from logbook.ingest._common import (
    as_dict,
    as_list,
    digest,
    float_of,
    int_of,
    parse_kv_string,
    sha256_tag,
    text_of,
)

HARNESS = "lm-evaluation-harness"
# Task-config fields that shape the prompt; hashed as prompt_template_hash. num_fewshot is
# apparatus of its own (harness_config.num_fewshot), so neither that hash nor the config's
# (evaluator.config_hash) moves with it: a 0-shot and a k-shot arm differ in it alone.
_PROMPT_FIELDS = ("description", "doc_to_text", "doc_to_choice", "doc_to_target", "gen_prefix",
                  "target_delimiter", "fewshot_delimiter", "fewshot_config")
_NOT_CONFIG = ("metadata", "num_fewshot")


def sub(doc: dict[str, Any], key: str, task: str) -> Any:
    """``doc[key][task]`` when both levels are objects, else None."""
    table = doc.get(key)
    return table.get(task) if isinstance(table, dict) else None


def _env(info: Any, label: str) -> str | None:
    """One field of torch's collect_env text (``pretty_env_info``)."""
    if not isinstance(info, str):
        return None
    match = re.search(rf"^{re.escape(label)}:[ \t]*(.*)$", info, re.MULTILINE)
    value = match.group(1).strip() if match else ""
    if match and not value:  # several GPUs: one "GPU n: name" line each below the label
        below = info[match.end():].lstrip("\n").splitlines()
        value = "; ".join(line.strip() for line in below[:16] if line.startswith("GPU "))
    return value if value and value not in ("N/A", "Could not collect", "None") else None


Triple = tuple[str, str, str]
ITEMS = "_items"  # a task run's triples (or None), kept on it until its group is made


def item_triples(lines: dict[str, dict[str, Any]]) -> list[Triple] | None:
    """``(id, doc_hash, target_hash)`` of each item (its id -> its sample line); None when any
    line lacks either hash."""
    out = []
    for did, line in lines.items():
        doc_hash, target_hash = line.get("doc_hash"), line.get("target_hash")
        if not (isinstance(doc_hash, str) and isinstance(target_hash, str)):
            return None
        out.append((did, doc_hash, target_hash))
    return out


def suite_identity(ids: list[str], triples: list[Triple] | None) -> str:
    """The suite's identity: ``sha256:`` of the canonical JSON of the sorted triples, or of the
    sorted ids when there are none (module docstring)."""
    value: list[Any] = sorted(map(list, triples)) if triples is not None else sorted(ids)
    return "sha256:" + hashlib.sha256(canonical_bytes(value)).hexdigest()


_MODEL_KEYS = ("pretrained", "model", "path", "engine")


def model_named(run_config: dict[str, Any], model_args: dict[str, Any]) -> Any:
    """The model as the user named it: ``model_args``' ``pretrained`` (else ``model``, ``path``
    or ``engine``), else the model type (``dummy``, ``hf``). Never the results file's
    ``model_name``, which lm-eval makes up at random when model_args names no model."""
    for key in _MODEL_KEYS:
        value = model_args.get(key)
        if isinstance(value, str) and value:
            return value
    return run_config.get("model")


def n_shot(doc: dict[str, Any], task: str, config: dict[str, Any]) -> int | None:
    """The task's few-shot count: the results' ``n-shot`` table, else its config's."""
    for value in (sub(doc, "n-shot", task), config.get("num_fewshot")):
        count = int_of(value)
        if count is not None:
            return count
    return None


def apparatus(doc: dict[str, Any], task: str, config: dict[str, Any],
              metric: str, dataset_hash: str) -> dict[str, Any]:
    run_config = as_dict(doc.get("config"))
    model_args = run_config.get("model_args")
    if isinstance(model_args, str):
        model_args = parse_kv_string(model_args)
    model_args = redact_value(model_args) if isinstance(model_args, dict) else {}
    gen = dict(as_dict(config.get("generation_kwargs")))
    cli_gen = run_config.get("gen_kwargs")
    gen.update(parse_kv_string(cli_gen) if isinstance(cli_gen, str) else as_dict(cli_gen))
    env = doc.get("pretty_env_info")
    python = _env(env, "Python version")
    task_hash = sub(doc, "task_hashes", task)
    task_config = {k: v for k, v in config.items() if k not in _NOT_CONFIG}
    prompt = {k: config.get(k) for k in _PROMPT_FIELDS} | {
        k: doc.get(k) for k in ("system_instruction_sha", "chat_template_sha",
                                "fewshot_as_multiturn")}
    transformers = doc.get("transformers_version")
    batch = int_of(run_config.get("batch_size"))  # a number; "auto" stays harness_config's
    out: dict[str, Any] = {
        "model": model_named(run_config, model_args),
        "model_digest": run_config.get("model_sha"),
        "engine": run_config.get("model"),
        "weights_precision": run_config.get("model_dtype") or model_args.get("dtype"),
        "kv_cache_precision": model_args.get("kv_cache_dtype"),
        # what lm-eval was asked for (its command line asks for cuda:0 unless told otherwise),
        # not where it ran: that is the machine's (hardware, captured.gpus)
        "placement": {"requested": run_config.get("device")},
        "hardware": {"cpu": _env(env, "Model name"), "gpu": _env(env, "GPU models and "
                     "configuration"), "nvidia_driver": _env(env, "Nvidia driver version")},
        "decoding": _decoding(gen, run_config),
        "dataset_hash": dataset_hash,
        "prompt_hash": sha256_tag(task_hash),
        "prompt_template_hash": digest(prompt),
        "harness": {"name": HARNESS, "version": doc.get("lm_eval_version"),
                    "commit": doc.get("git_hash")},
        "evaluator": {"name": metric, "version": text_of(sub(doc, "versions", task)),
                      "config_hash": digest(task_config)},
        "python": python.split()[0] if python else None,
        "harness_config": redact_value({
            "model_source": doc.get("model_source"),
            "model_args": model_args,
            "model_revision": run_config.get("model_revision"),
            "batch_size": run_config.get("batch_size"),
            "batch_sizes": run_config.get("batch_sizes") or None,
            "limit": run_config.get("limit"),
            "bootstrap_iters": run_config.get("bootstrap_iters"),
            "use_cache": run_config.get("use_cache"),
            "seeds": {k: run_config.get(k) for k in ("random_seed", "numpy_seed", "torch_seed",
                                                     "fewshot_seed")},
            "num_fewshot": n_shot(doc, task, config),
            "n_samples": sub(doc, "n-samples", task),
            "output_type": config.get("output_type"),
            "repeats": config.get("repeats"),
            "filters": [f.get("name") for f in as_list(config.get("filter_list"))
                        if isinstance(f, dict)] or None,
            "gen_kwargs": gen or None,
            "task_hash": None if sha256_tag(task_hash) else task_hash,
            "upper_git_hash": doc.get("upper_git_hash"),
            "environment": {"transformers": None if transformers == "N/A" else transformers,
                            "torch": _env(env, "PyTorch version")},
        }),
    }
    if batch is not None and batch >= 1:  # the typed field (format.apparatus.TYPED)
        out["execution"] = {"batch_size": batch}
    return out


def _decoding(gen: dict[str, Any], run_config: dict[str, Any]) -> dict[str, Any]:
    temperature = float_of(gen.get("temperature"))
    do_sample = gen.get("do_sample")
    if isinstance(do_sample, str):
        do_sample = {"true": True, "false": False}.get(do_sample.lower())
    if temperature is None and do_sample is False:
        temperature = 0.0  # greedy: lm-eval's models ignore temperature without sampling
    seed = run_config.get("random_seed")
    return {
        "temperature": temperature,
        "top_p": float_of(gen.get("top_p")),
        "seed": seed if seed is not None else run_config.get("torch_seed"),
        "max_tokens": int_of(gen.get("max_gen_toks", gen.get("max_new_tokens",
                                                           gen.get("max_tokens")))),
        "do_sample": do_sample if isinstance(do_sample, bool) else None,
    }
